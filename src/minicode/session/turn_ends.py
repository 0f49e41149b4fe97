"""How each task of a session ended, by where it ended in the conversation: ``TurnEnds``.

A ``turn_end`` record (status and statistics of one task) follows the task's messages in the
session file; the full screen's replay shows it under them as the live view did
(``■ done · 2.1s · 3 model calls · …``). Loading only notes where each record is (a slot, like
a message's) under the number of messages before it; a record is parsed when its line is
first shown. A rewind drops the ends of the tasks it removed. Standard library only.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from minicode import jsonsafe
from minicode.agent.stats import TaskStats

__all__ = ["TurnEnd", "TurnEnds", "turn_end_from_record"]

Slot = tuple[int, int, int]
Reader = Callable[[int, int], bytes]
_STATUSES = ("done", "interrupted", "timed out", "max turns reached", "input ended while waiting for approval",
             "checks failed", "error")
_COUNTS = ("model_calls", "tool_calls", "prompt_tokens", "completion_tokens", "total_tokens", "calls_with_usage")


@dataclass(slots=True)
class TurnEnd:
    """One task's end: its status as the frontends say it and its statistics."""

    status: str
    stats: TaskStats

    @property
    def done(self) -> bool:
        return self.status.startswith("done")

    @property
    def text(self) -> str:
        """The line the live view drew at the task's end, e.g. "done · 0.4s · 1 model call · …"."""
        return f"{self.status} · {self.stats.format()}"


def turn_end_from_record(rec: dict[str, Any]) -> TurnEnd:
    """ValueError when ``rec`` is not a well-formed turn_end record (it comes from a file)."""
    status, stats = rec.get("status"), rec.get("stats")
    if rec.get("type") != "turn_end" or status not in _STATUSES or not isinstance(stats, dict):
        raise ValueError("not a turn_end record")
    counts = {name: stats.get(name, 0) for name in _COUNTS}
    wall = stats.get("wall_seconds", 0.0)
    if any(type(v) is not int or v < 0 for v in counts.values()) or type(wall) not in (int, float) or not 0 <= wall < 1e9:
        raise ValueError("turn_end stats are not counts")
    out = TaskStats(wall_seconds=float(wall), **counts)
    questions = stats.get("questions", 0)
    out.questions = questions if type(questions) is int and questions > 0 else 0
    checks = rec.get("checks")
    if isinstance(checks, list) and checks:
        runs = stats.get("check_runs", 1)
        out.check_runs = runs if type(runs) is int and runs > 0 else 1
        out.checks_total = len(checks)
        out.checks_passed = sum(1 for c in checks if isinstance(c, dict) and c.get("passed") is True)
        if status == "done":
            status = "done (checks passed)"
    return TurnEnd(str(status), out)


class TurnEnds:
    """Task ends by the number of messages before them (a record's slot until first read)."""

    __slots__ = ("_at",)

    def __init__(self) -> None:
        self._at: dict[int, Slot | TurnEnd] = {}

    def add(self, count: int, end: Slot | TurnEnd) -> None:
        """The first end at a position wins: a task stopped before its message was saved
        added nothing to the conversation, and its end is not the task's before it."""
        self._at.setdefault(count, end)

    def truncate(self, keep: int) -> None:
        """A rewind to ``keep`` messages: the tasks after it are gone (the task that ended
        right before the kept user message stays)."""
        for count in [c for c in self._at if c > keep]:
            del self._at[count]

    def get(self, count: int, read: Reader | None) -> TurnEnd | None:
        """The end of the task whose last message is message ``count - 1``; None when no task
        ended there, or its record cannot be read (the replay then shows no line for it)."""
        end = self._at.get(count)
        if end is None or isinstance(end, TurnEnd):
            return end
        offset, length, _line = end
        try:
            if read is None:
                return None
            rec = jsonsafe.loads(read(offset, length))
            parsed = turn_end_from_record(rec) if isinstance(rec, dict) else None
        except (OSError, ValueError, TypeError):
            parsed = None
        if parsed is not None:
            self._at[count] = parsed
        return parsed
