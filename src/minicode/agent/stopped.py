"""The note minicode records when a task stopped without an answer, and how to tell it apart.

Before the next task the conversation must end with an assistant message (servers with
strict role alternation refuse two user messages in a row), so ``agent.loop`` records
``STOPPED_NOTE`` as one. The model never said it: a replay (the full screen, ``--export``)
shows it as minicode's note (``is_stopped_note``), not as the model's answer. Pure.
"""

from __future__ import annotations

from minicode.provider.types import Message

__all__ = ["STOPPED_NOTE", "STOPPED_SHOWN", "is_stopped_note"]

STOPPED_NOTE = "(That task stopped before I could finish it; no answer was given.)"
"""The assistant message recorded before a new task when the previous one had no answer."""

STOPPED_SHOWN = "that task stopped without an answer (noted by minicode, not said by the model)"
"""How a replay shows the note."""


def is_stopped_note(message: Message) -> bool:
    """Whether ``message`` is the note minicode recorded (older sessions have the same text)."""
    return (message.role == "assistant" and not message.tool_calls
            and (message.content or "").strip() == STOPPED_NOTE)
