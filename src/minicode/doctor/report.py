"""The doctor's report: one line per check, as a table for people or one JSON object.

Pure data and formatting. A check is ``ok``, ``warning`` (works, with a catch worth
knowing), ``failed`` (minicode will not work until it is fixed) or ``skipped`` (not
checked because an earlier check failed). The endpoint is usable when nothing failed.
Nothing here ever sees the API key: the probes hand over only scrubbed text.
"""

from __future__ import annotations

import enum
import json
from dataclasses import dataclass, field
from typing import Any, Mapping

from minicode.exitcodes import EXIT_FAILURE, EXIT_OK, EXIT_USAGE

__all__ = ["Check", "Report", "Status"]

_NAME_WIDTH = 11
_STATUS_WIDTH = 8


class Status(enum.Enum):
    OK = "ok"
    WARNING = "warning"
    FAILED = "failed"
    SKIPPED = "skipped"


@dataclass(frozen=True, slots=True)
class Check:
    """One line of the report: what was checked, how it went, and what to do about it."""

    name: str
    status: Status
    summary: str
    fix: str | None = None
    """What the user can do (for warnings and failures); None when there is nothing to do."""
    data: Mapping[str, Any] = field(default_factory=dict)
    """The measured values (milliseconds, counts, names) for ``--json``."""


@dataclass(frozen=True, slots=True)
class Report:
    endpoint: str
    model: str
    checks: tuple[Check, ...]
    requests: int = 0
    """Model requests sent (each costs tokens; ``GET /models`` does not count)."""
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    total_tokens: int | None = None
    """As the server reported them; None when it reported none."""
    misconfigured: bool = False
    """A check failed on a configuration mistake (exit 2, as a run would), not on the server."""

    @property
    def usable(self) -> bool:
        return any(c.status is Status.OK for c in self.checks) and not any(
            c.status is Status.FAILED for c in self.checks
        )

    @property
    def exit_code(self) -> int:
        if self.misconfigured:
            return EXIT_USAGE
        return EXIT_OK if self.usable else EXIT_FAILURE

    def verdict(self) -> str:
        """"usable", "usable, 2 warnings", or "not usable: 1 check failed"."""
        failed = sum(c.status is Status.FAILED for c in self.checks)
        warnings = sum(c.status is Status.WARNING for c in self.checks)
        if not self.usable:
            return f"not usable: {failed} check{'' if failed == 1 else 's'} failed" if failed else "not usable"
        return "usable" + (f", {warnings} warning{'' if warnings == 1 else 's'}" if warnings else "")

    def spent(self) -> str:
        requests = f"{self.requests} model request{'' if self.requests == 1 else 's'}"
        if self.total_tokens is None:
            return f"{requests}, tokens not reported" if self.requests else requests
        return f"{requests}, {self.total_tokens:,} tokens"

    def table(self) -> str:
        """The report for a person: a heading, one line per check with its fix indented under
        it, and the verdict with what it cost."""
        lines = [f"minicode doctor · {self.endpoint} · model {self.model}", ""]
        for check in self.checks:
            lines.append(f"{check.status.value:<{_STATUS_WIDTH}} {check.name:<{_NAME_WIDTH}} {check.summary}")
            if check.fix:
                lines.append(f"{'':<{_STATUS_WIDTH}} {'':<{_NAME_WIDTH}} → {check.fix}")
        lines += ["", f"{self.verdict()} · {self.spent()}"]
        return "\n".join(lines) + "\n"

    def to_json(self) -> str:
        """The same report as one JSON object (one line)."""
        tokens = None
        if self.total_tokens is not None:
            tokens = {"prompt": self.prompt_tokens, "completion": self.completion_tokens, "total": self.total_tokens}
        obj = {
            "endpoint": self.endpoint,
            "model": self.model,
            "usable": self.usable,
            "verdict": self.verdict(),
            "checks": [
                {"name": c.name, "status": c.status.value, "summary": c.summary, "fix": c.fix, "data": dict(c.data)}
                for c in self.checks
            ],
            "requests": self.requests,
            "tokens": tokens,
        }
        return json.dumps(obj, ensure_ascii=False)
