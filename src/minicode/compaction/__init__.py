"""Context compaction (SPEC 6): budget and trigger, cut and chunking, summary calls.

``trigger``, ``plan``, ``prompt`` and ``context`` are pure; ``compact`` does the I/O, only
through the Provider it is given.
"""

from minicode.compaction.checkpoint import Checkpoint
from minicode.compaction.compact import (
    CompactionFailed,
    CompactionResult,
    SummaryOutcome,
    compact,
    summarize,
)
from minicode.compaction.context import build_context
from minicode.compaction.plan import chunk_messages, find_cut, serialize, split_utf8
from minicode.compaction.prompt import summary_message
from minicode.compaction.trigger import Budget, Calibration, estimate_context, should_compact

__all__ = [
    "Budget",
    "Calibration",
    "Checkpoint",
    "CompactionFailed",
    "CompactionResult",
    "SummaryOutcome",
    "build_context",
    "chunk_messages",
    "compact",
    "estimate_context",
    "find_cut",
    "serialize",
    "should_compact",
    "split_utf8",
    "summarize",
    "summary_message",
]
