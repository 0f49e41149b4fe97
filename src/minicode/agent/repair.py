"""Self-repair of an interrupted tool batch (pure).

A crash or kill in the middle of a tool batch leaves an assistant message whose tool calls
have no results. Appending one synthetic result per missing call turns the history back
into a valid conversation. Only the trailing batch can be open: every other batch was
closed before the next message was appended.
"""

from __future__ import annotations

from collections import Counter
from typing import Sequence

from minicode.provider.types import Message

__all__ = ["INTERRUPTED_RESULT", "missing_results"]

INTERRUPTED_RESULT = "interrupted: no result was recorded"


def missing_results(history: Sequence[Message], text: str = INTERRUPTED_RESULT) -> list[Message]:
    """Synthetic tool results for the calls of the trailing batch that have none, in call order.

    Costs O(size of the trailing batch): it walks back only to the last assistant message.
    Results are counted per id, so a batch that repeats an id (a session from before
    ``provider.call_ids`` renamed them) gets one result per call, not per id.
    """
    answered: Counter[str] = Counter()
    for message in reversed(history):
        if message.role == "tool":
            if message.tool_call_id is not None:
                answered[message.tool_call_id] += 1
            continue
        if message.role != "assistant":
            return []
        missing: list[Message] = []
        for call in message.tool_calls:
            if answered[call.id] > 0:
                answered[call.id] -= 1
            else:
                missing.append(Message.tool(call.id, text))
        return missing
    return []
