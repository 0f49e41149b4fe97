"""The pipe/one-shot frontend's pieces: approval prompt, line reader, printer."""

from __future__ import annotations

import asyncio
import io

from minicode.agent.approval import ApprovalRequest, Decision
from minicode.cli.plain import LineApprover


class _Lines:
    """A LineReader stand-in with canned lines (None = end of input)."""

    def __init__(self, *lines: str | None) -> None:
        self._lines = list(lines)

    async def next_line(self) -> str | None:
        return self._lines.pop(0) if self._lines else None


def _request(body: str = "") -> ApprovalRequest:
    return ApprovalRequest("c1", "write", "a.txt", "2 lines", {}, body)


async def test_approval_prompt_shows_the_body_indented():
    err = io.StringIO()
    approval = await LineApprover(_Lines("y"), err).approve(_request("one\ntwo"))
    assert approval.decision is Decision.ALLOW_ONCE
    assert err.getvalue().startswith("    one\n    two\nminicode: allow write a.txt: 2 lines? [y/N] ")


async def test_approval_prompt_caps_a_long_body():
    err = io.StringIO()
    body = "\n".join(str(i) for i in range(100))
    approval = await LineApprover(_Lines("n"), err).approve(_request(body))
    assert approval.decision is Decision.DENY
    shown = err.getvalue().splitlines()
    assert "    23" in shown and "    24" not in shown and "    … 76 more lines" in shown
