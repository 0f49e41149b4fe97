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

__all__ = ["CANCELLED_RESULT", "INPUT_ENDED_RESULT", "INTERRUPTED_RESULT", "InputEnded", "missing_results"]

INTERRUPTED_RESULT = "interrupted: no result was recorded"
INPUT_ENDED_RESULT = "denied: the input ended while waiting for approval; the task stops here"
CANCELLED_RESULT = "interrupted: the task stopped before this tool call finished"
# The two above are written by ``agent.batch``; they live here, with the other synthetic
# results, so that the loop can name them without loading the batch before a tool call.


class InputEnded(Exception):
    """The approver can get no more answers: the task ends after its batch is answered."""


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
