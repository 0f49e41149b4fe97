"""Assembly of the model context from its parts (pure).

Order (SPEC 4 and 6): system prompt → project-memory message → the ``<context-summary>``
message (only with a checkpoint) → the kept recent history, verbatim.
"""

from __future__ import annotations

from typing import Sequence

from minicode.compaction.checkpoint import Checkpoint
from minicode.compaction.prompt import summary_message
from minicode.provider.types import Message

__all__ = ["build_context"]


def build_context(
    system: Message | None,
    memory: Message | None,
    checkpoint: Checkpoint | None,
    history: Sequence[Message],
    original_task: str | None,
    *,
    summary: Message | None = None,
) -> list[Message]:
    """The messages of a main request (with ``system``), or of a size estimate (without).

    With a checkpoint: system, memory, a user message ``<context-summary>`` repeating
    ``original_task`` (the session's first user message) verbatim plus the summary, then
    ``history[checkpoint.first_kept:]``. Without one: system, memory, the whole history.
    An absent system prompt or memory is simply left out. ``summary``, when given, is that
    summary message already built (the caller keeps one per checkpoint instead of a new
    object a request).
    """
    context: list[Message] = []
    if system is not None:
        context.append(system)
    if memory is not None:
        context.append(memory)
    if checkpoint is None:
        context.extend(history)
        return context
    context.append(summary if summary is not None else summary_message(checkpoint.summary, original_task,
                                                                            checkpoint.todo))
    context.extend(history[checkpoint.first_kept :])
    return context
