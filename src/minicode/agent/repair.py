"""Self-repair of an interrupted tool batch (pure).

A crash or kill in the middle of a tool batch leaves an assistant message whose tool calls
have no results. Appending one synthetic result per missing call turns the history back
into a valid conversation. Only the trailing batch can be open: every other batch was
closed before the next message was appended.
"""

from __future__ import annotations

from typing import Sequence

from minicode.provider.types import Message

__all__ = ["INTERRUPTED_RESULT", "missing_results"]

INTERRUPTED_RESULT = "interrupted: no result was recorded"


def missing_results(history: Sequence[Message], text: str = INTERRUPTED_RESULT) -> list[Message]:
    """Synthetic tool results for the calls of the trailing batch that have none, in call order.

    Costs O(size of the trailing batch): it walks back only to the last assistant message.
    """
    answered: set[str] = set()
    for message in reversed(history):
        if message.role == "tool":
            if message.tool_call_id is not None:
                answered.add(message.tool_call_id)
            continue
        if message.role != "assistant":
            return []
        return [Message.tool(call.id, text) for call in message.tool_calls if call.id not in answered]
    return []
