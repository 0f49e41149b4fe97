"""The compaction checkpoint: a summary of the history before ``first_kept``.

The raw history is never rewritten; a checkpoint only says which prefix the summary covers.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Checkpoint"]


@dataclass(frozen=True, slots=True)
class Checkpoint:
    summary: str
    """The running summary (without the original task, which is added when it is shown)."""
    first_kept: int
    """Index into the raw history of the first message sent verbatim after the summary."""
    todo: str = ""
    """The model's task list when it was made, as the model wrote it ("": none): the summary
    message repeats it verbatim, like the original task, since the ``todo`` calls that set
    it may be among the messages summarised."""
