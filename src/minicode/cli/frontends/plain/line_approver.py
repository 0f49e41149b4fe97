"""Approval questions answered by a line of text (pipe and one-shot modes, on a terminal).

The question names the call (``minicode: allow bash $ pytest -q? [y/a/p/N]``) after an
indented preview; ``y``/``yes`` allows once, ``a``/``always`` allows the tool for the rest of
the session (on a terminal; not for a write to a rules file, asked every time; explained in
the first question of each tool), ``p``/``project`` — offered only when the request carries a
``suggested_rule`` — allows and saves that rule for the workspace; anything else denies (text
other than ``n``/``no`` is the reason the model is told). End of input denies and ends.
No prompt_toolkit, no rich.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol, TextIO

from minicode.agent.approval import Approval, ApprovalRequest, Decision
from minicode.cli.frontends.shared.shown_call import change_lines, command_lines, preview_lines, reveal
from minicode.cli.frontends.plain.tool_label import LABEL_CHARS, PATTERN_TOOLS, one_line, tool_label

__all__ = ["BODY_LINES", "LineApprover", "LineSource"]

BODY_LINES = 24
_YES = ("y", "yes")
_SESSION = ("a", "always")  # on a terminal only: allow this tool for the rest of the session
_PROJECT = ("p", "project")  # with a suggested rule: allow, and save the rule for this workspace


class LineSource(Protocol):
    """Where answers come from (``plain.LineReader``)."""

    interactive: bool

    async def next_line(self) -> str | None: ...

    def set_aside_typed_ahead(self) -> int: ...

    async def next_answer(self) -> str | None: ...

    def discard_pending(self) -> None: ...

    def failure_text(self) -> str: ...


@dataclass
class LineApprover:
    """Answers from a line source (see the module docstring); ``ended`` tells the frontend
    to stop after this task."""

    reader: LineSource
    err: TextIO
    ended: bool = False
    discard_typed_ahead: bool = False  # on /dev/tty: keys pressed earlier don't answer
    workspace: Path | None = None  # shown as "." where a tool names it
    explained: set[str] = field(default_factory=set)
    """Tools whose ``a`` was explained in a question already (once per tool is enough)."""

    async def approve(self, request: ApprovalRequest) -> Approval:
        if self.discard_typed_ahead:
            self.reader.discard_pending()
        elif kept := self.reader.set_aside_typed_ahead():
            self.err.write(f"minicode: {kept} line{'s' if kept > 1 else ''} typed ahead "
                           "kept as the next task (they do not answer this question)\n")
        self.err.write(_body_lines(request))
        self.err.write(self._question(request))
        self.err.flush()
        try:
            line = await self.reader.next_answer()
        except asyncio.CancelledError:
            # timeout or Ctrl+C while the question waits: end its line, so the status
            # line that follows does not run on after "[y/N] "
            self.err.write("\n")
            self.err.flush()
            raise
        if line is not None and not self.reader.interactive:
            # nobody typed the answer (and its newline): show it, so the next line starts clean
            self.err.write(line.strip() + "\n")
        if line is None:
            self.ended = True
            self.err.write(f"\nminicode: no answer (end of input{self.reader.failure_text()}): denied\n")
            return Approval(Decision.DENY, "no answer: the input ended", input_ended=True)
        return self._answer(line.strip(), request)

    def _question(self, request: ApprovalRequest) -> str:
        label = tool_label(request.tool, request.target, request.detail, self.workspace)
        shown_in_label = request.tool in ("bash", *PATTERN_TOOLS)
        detail = f": {one_line(request.detail)}" if request.detail and not shown_in_label else ""
        choices = ["y"]
        legends = []
        if self.reader.interactive and not request.always_ask:
            choices.append("a")
            if request.tool not in self.explained:  # the first time this tool offers it
                self.explained.add(request.tool)
                legends.append(f"a: allow every {request.tool} call for the rest of this session")
        if request.suggested_rule is not None:
            choices.append("p")
            legends.append(f"p: always allow {reveal(request.suggested_rule)} in this project")
        legend = f" ({'; '.join(legends)})" if legends else ""
        return f"minicode: allow {label}{detail}? [{'/'.join(choices)}/N]{legend} "

    def _answer(self, answer: str, request: ApprovalRequest) -> Approval:
        word = answer.lower()
        if word in _YES:
            return Approval(Decision.ALLOW_ONCE)
        if self.reader.interactive and word in _SESSION and not request.always_ask:
            return Approval(Decision.ALLOW_SESSION)
        if request.suggested_rule is not None and word in _PROJECT:
            return Approval(Decision.ALLOW_ALWAYS)
        reason = answer if word not in ("", "n", "no") else None
        return Approval(Decision.DENY, reason)


def _body_lines(request: ApprovalRequest, limit: int = BODY_LINES) -> str:
    """The approval preview, indented: every line of a multi-line command (runs of blank
    lines and spaces squeezed, invisible characters revealed — ``shown_call``), the whole change
    of a write or edit whose preview was cut (``change_lines``), else the tool's preview body,
    at most ``limit`` lines (the tools cap it too)."""
    if request.tool == "bash":
        lines = command_lines(request.detail, head_chars=LABEL_CHARS)  # a cut one-liner: whole below
    elif request.tool in ("write", "edit"):
        lines = change_lines(request.tool, request.arguments, request.body).lines
    else:
        lines = preview_lines(request.body)
        if len(lines) > limit:
            lines = [*lines[:limit], f"… {len(lines) - limit} more lines"]
    return "".join(f"    {line}\n" for line in lines)
