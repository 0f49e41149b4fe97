"""Context compaction (SPEC 6): budget and trigger, cut and chunking, summary calls.

``trigger``, ``plan``, ``prompt`` and ``context`` are pure; ``compact`` does the I/O, only
through the Provider it is given.

The names below are loaded on first use (PEP 562): every start needs ``checkpoint``,
``trigger`` and ``context`` to build the first request, but the summariser (``compact``,
``plan``, ``prompt``) only once a conversation outgrows its budget.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from minicode.compaction.checkpoint import Checkpoint
    from minicode.compaction.compact import CompactionFailed, CompactionResult, SummaryOutcome, compact, summarize
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

_HOMES = {
    "Checkpoint": "checkpoint",
    "CompactionFailed": "compact",
    "CompactionResult": "compact",
    "SummaryOutcome": "compact",
    "compact": "compact",
    "summarize": "compact",
    "build_context": "context",
    "chunk_messages": "plan",
    "find_cut": "plan",
    "serialize": "plan",
    "split_utf8": "plan",
    "summary_message": "prompt",
    "Budget": "trigger",
    "Calibration": "trigger",
    "estimate_context": "trigger",
    "should_compact": "trigger",
}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{home}"), name)
