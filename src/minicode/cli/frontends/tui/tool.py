"""The transcript entry of one tool call, with its approval merged in.

One line per call: ``? write a.txt · 12 bytes — waiting for approval`` while it waits (with the
preview body and the choices under it), then ``▸ … running``, then ``✓``/``✗`` with the answer,
exit code, duration and summary; a failed call shows the end of its output under the line.
Pure: no prompt_toolkit, no rich.
"""

from __future__ import annotations

from minicode.agent.approval import Approval, ApprovalRequest, ApprovedBy, Decision
from minicode.agent.events import AgentEvent, ApprovalResolved, ToolFinished, ToolStarted
from minicode.cli.frontends.shared.shown_call import (
    RECOVERED, change_lines, command_head, command_lines, command_parts, preview_lines, reveal,
)
from minicode.cli.frontends.tui.items import Item, Line, RenderMarkdown
from minicode.cli.frontends.tui.text import cell_width, cut_cells, neutralise, wrap_plain

__all__ = ["BODY_MAX_LINES", "LIVE_MAX_LINES", "NESTED_MAX_LINES", "TAIL_MAX_LINES", "ToolItem"]

BODY_MAX_LINES = 12
NESTED_MAX_LINES = 8
"""A sub-agent's calls shown under its ``agent`` line: the latest ones, the rest counted above them."""
TAIL_MAX_LINES = 6
LIVE_MAX_LINES = 5
LIVE_KEEP_CHARS = 4096  # enough for the lines shown; constant memory however much a command prints
_CHOICES = "answer below: ↑↓ choose, Enter answers"
_REASON = "denying — type a reason below (optional), Enter sends"
_CHANGE_TOOLS = ("edit", "write")
"""Tools whose preview (a diff, the new content) stays under the line after they ran."""
_OUTCOMES = {Decision.ALLOW_ONCE: "allowed once", Decision.ALLOW_SESSION: "allowed for this session",
             Decision.ALLOW_ALWAYS: "allowed always in this project"}


def _clip(text: str, width: int) -> str:
    """``text`` within ``width`` cells; a cut line ends in "…" so it never looks complete."""
    if cell_width(text) <= width:
        return text
    return cut_cells(text, max(1, width - 1))[0] + "…"


def _line_style(line: str, diff: bool) -> str:
    """A preview line's style: added and removed lines of a diff in green and red."""
    if diff and line.startswith("+"):
        return "class:diff.add"
    if diff and line.startswith("-"):
        return "class:diff.del"
    return "class:approval.detail"


class ToolItem(Item):
    """One tool call: name, target, argument summary; its approval; then its result."""

    def __init__(self, call_id: str, name: str, target: str, detail: str, body: str = "",
                 where: str = "") -> None:
        super().__init__()
        self.call_id = call_id
        self.name = name
        # What the model sent is shown revealed (invisible and bidi characters as codes): the
        # person deciding must see what runs. A command is named by its first line that does
        # something and how much more there is; its lines show under the question.
        self.target = reveal(target)
        self.where = reveal(where)
        """The working directory when it is left off the line (the workspace): the approval says it."""
        self.detail = command_head(detail) if name == "bash" else reveal(detail)
        self.command = command_lines(detail) if name == "bash" else []
        """A multi-line command's lines, shown under its question (its head names the first)."""
        self._parts = command_parts(detail) if self.command else ("", "")
        self.body = "" if name == "bash" else body
        self.result: ToolFinished | None = None
        self.request: ApprovalRequest | None = None
        self.asking_reason = False
        self.answer: Approval | None = None
        self.replayed = False
        """From a resumed session whose file recorded only whether it failed (older files):
        shown without duration or summary."""
        self.decided_by = ""
        """How a call nobody was asked about was decided (``allowed by rule bash(pytest *)``,
        ``denied by rule bash(rm *)``, ``allowed for this session``), shown on its line."""
        self.live = ""
        """The tail of a running call's output (``ToolOutput``); kept if it ends without a tail."""
        self.from_text = False
        """The model wrote the call as text and minicode recovered it: said on its line."""
        self.nested: list[str] = []
        """``agent``: its sub-agent's calls, one line each (``▸`` running, then ``✓``/``✗``)."""
        self._nested_open: dict[str, int] = {}  # a running sub-agent call's id -> its line

    @property
    def waiting(self) -> bool:
        return self.request is not None and self.answer is None and self.result is None

    def ask(self, request: ApprovalRequest, asking_reason: bool = False) -> None:
        self.request = request
        self.asking_reason = asking_reason
        if request.body and not self.body and self.name != "bash":
            self.body = request.body
        self._changed()

    def answered(self, answer: Approval | None) -> None:
        """The prompt closed: ``answer`` None means it was withdrawn (the task was interrupted)."""
        self.answer = answer
        if answer is None:
            self.request = None
        self._changed()

    def resolved(self, event: ApprovalResolved) -> None:
        """The decision on a call that was not asked about: a rule, or "for the session"."""
        if event.by is ApprovedBy.RULE and event.rule:
            self.decided_by = f"{'allowed' if event.allowed else 'denied'} by rule {reveal(event.rule)}"
        elif event.by is ApprovedBy.SESSION and event.allowed:
            self.decided_by = "allowed for this session"
        else:
            return
        self._changed()

    def started(self, body: str, from_text: bool = False) -> None:
        """The call began to run: its preview body, if the approval had none; whether the
        model wrote it as text."""
        if from_text and not self.from_text:
            self.from_text = True
            self._changed()
        if body and not self.body and self.name != "bash":
            self.body = body
            self._changed()

    def output(self, text: str) -> None:
        """New output of the running call (each ``ToolOutput`` carries what arrived since the
        previous one): kept as a bounded tail, shown dim under the line."""
        if self.result is None:
            self.live = (self.live + neutralise(text))[-LIVE_KEEP_CHARS:]
            self._changed()

    def finish(self, finished: ToolFinished) -> None:
        self.result = finished
        for index in self._nested_open.values():  # its sub-agent was stopped with it
            self.nested[index] = f"✗ {self.nested[index][2:]} — interrupted"
        self._nested_open.clear()
        self._changed()

    def sub_event(self, event: AgentEvent, workspace: str = "") -> None:
        """An event of this ``agent`` call's sub-agent: its calls become lines under this one
        (a call's target is left off when it is the ``workspace``, as on the task's own lines)."""
        if isinstance(event, ToolStarted):
            target = "" if event.target in (".", workspace) else reveal(event.target)
            head = " ".join(p for p in (event.name, target, reveal(event.detail)) if p)
            self._nested_open[event.call_id] = len(self.nested)
            self.nested.append("▸ " + " ".join(head.split()))
        elif isinstance(event, ToolFinished) and (index := self._nested_open.pop(event.call_id, None)) is not None:
            outcome = event.summary or ("failed" if event.is_error else "done")
            mark = "✗ " if event.is_error else "✓ "
            self.nested[index] = f"{mark}{self.nested[index][2:]} — {neutralise(outcome)}"
        else:
            return
        self._changed()

    def replay_nested(self, lines: tuple[str, ...]) -> None:
        """A resumed session's record of the sub-agent's calls (``ToolOutcome.nested``)."""
        self.nested = [neutralise(line) for line in lines]
        self._changed()

    def _head(self) -> str:
        return " ".join(p for p in (self.name, self.target, self.detail, RECOVERED if self.from_text else "") if p)

    def _outcome(self) -> list[str]:
        a = self.answer
        if a is None and self.decided_by.startswith("allowed"):
            return [self.decided_by]
        if a is None or a.decision is Decision.DENY:
            return []
        return [_OUTCOMES[a.decision]]

    def summary(self) -> str:
        head = self._head()
        r = self.result
        if self.waiting:
            return f"{head}  — waiting for approval"
        if self.replayed:
            if r is None or not (r.is_error or r.exit_code):
                return head
            if r.denied:
                return f"{head}  — denied"
            return f"{head}  — failed" + (f" · exit {r.exit_code}" if r.exit_code else "")
        if r is None:
            return f"{head}  — {' · '.join([*self._outcome(), 'running'])}"
        if r.denied and self.decided_by.startswith("denied"):
            return f"{head}  — {self.decided_by}"
        if r.denied or (self.answer is not None and self.answer.decision is Decision.DENY):
            reason = self.answer.reason if self.answer is not None else None
            extra = reason or ("" if r.summary.startswith("denied") else neutralise(r.summary))
            return f"{head}  — denied" + (f": {neutralise(extra)}" if extra else "")
        if r.interrupted and r.summary.startswith("interrupted"):
            return f"{head}  — {neutralise(r.summary)}"  # "interrupted after 4.9 s" says the time
        exit_text = None if r.exit_code is None else f"exit {r.exit_code}"
        parts = self._outcome()
        # bash's own summary already names the exit code; don't say it twice
        if exit_text is not None and exit_text not in r.summary:
            parts.append(exit_text)
        if r.duration_seconds or not r.is_error:  # a call stopped before it ran took no time
            parts.append(f"{r.duration_seconds:.1f}s")
        if r.summary:
            parts.append(neutralise(r.summary))
        return f"{head}  — {' · '.join(parts)}"

    def _mark(self) -> tuple[str, str]:
        r = self.result
        if self.waiting:
            return "? ", "class:approval"
        if r is None:
            return "▸ ", "class:tool.running"
        if r.denied or r.is_error or bool(r.exit_code):
            return "✗ ", "class:tool.error"
        return "✓ ", "class:tool.ok"

    def _render(self, width: int, md: RenderMarkdown) -> list[Line]:
        mark, style = self._mark()
        out = self._summary_lines(mark, style, width)
        if self.nested:
            out += self._nested_lines(width)
        if self.waiting:
            if self.where:
                out += wrap_plain(f"  in {self.where}", width, "class:approval.detail", "    ")
            assert self.request is not None
            if self.command:
                out += self._command_lines(width)
            elif self.name in _CHANGE_TOOLS:
                out += self._change_lines(self.request, width)
            else:
                out += self._body_lines(width)
            last = _REASON if self.asking_reason else _CHOICES
            out += wrap_plain("  " + last, width, "class:approval.choices", "  ")
        elif self.result is None and self.live:
            out += self._output_lines(self.live, LIVE_MAX_LINES, width)  # what it does now
        elif (mark == "✗ " and self.result is not None and not self.result.denied
              and (self.result.output_tail or self.live)):
            out += self._tail_lines(width)  # why it failed (or where an interrupt stopped it)
        elif self.name in _CHANGE_TOOLS and mark != "✗ ":
            out += self._body_lines(width)  # what changed stays visible (also under --yes)
        return out

    def _summary_lines(self, mark: str, style: str, width: int) -> list[Line]:
        """The tool line, wrapped; a multi-line command's line is cut to one row instead,
        keeping its size and outcome — its lines are under the question, the head need
        not repeat a long first line."""
        text = mark + self.summary()
        if not self.command or cell_width(text) <= width:
            return wrap_plain(text, width, style, indent="  ")
        first, size = self._parts
        fixed = f"{mark}{self.name} "
        tail = f" … {size}" + self.summary()[len(self._head()):]
        budget = width - cell_width(fixed) - cell_width(tail)
        if budget < 8:  # too narrow to cut sensibly: wrap it all
            return wrap_plain(text, width, style, indent="  ")
        return [((style, fixed + _clip(first, budget) + tail),)]

    def _nested_lines(self, width: int) -> list[Line]:
        """The sub-agent's latest calls, indented under the ``agent`` line, each on one row."""
        shown = self.nested[-NESTED_MAX_LINES:]
        out: list[Line] = []
        if len(self.nested) > len(shown):
            out.append((("class:approval.detail", f"    … {len(self.nested) - len(shown):,} earlier calls"),))
        for line in shown:
            style = {"✓": "class:tool.ok", "✗": "class:tool.error", "▸": "class:tool.running"}.get(line[:1],
                                                                                               "class:approval.detail")
            out.append(((style, _clip("    " + line, width)),))
        return out

    def _command_lines(self, width: int) -> list[Line]:
        """Every line of a multi-line command (blank runs squeezed), wrapped, never cut: what
        runs must be readable before it is allowed (PageUp scrolls a long one)."""
        out: list[Line] = []
        for line in self.command:
            out += wrap_plain("    " + line, width, "class:approval.detail", "      ")
        return out

    def _change_lines(self, request: ApprovalRequest, width: int) -> list[Line]:
        """The whole change of a write or edit waiting for approval (``change_lines``),
        wrapped, never cut at the window's edge: what it writes must be readable before it
        is allowed (PageUp scrolls a long one). Once answered, the short preview stays."""
        change = change_lines(self.name, request.arguments, self.body)
        out: list[Line] = []
        for line in change.lines:
            out += wrap_plain("    " + line.expandtabs(4), width, _line_style(line, change.diff), "      ")
        return out

    def _body_lines(self, width: int) -> list[Line]:
        lines = preview_lines(self.body)
        shown = lines[:BODY_MAX_LINES]
        out: list[Line] = []
        diff = self.name in _CHANGE_TOOLS and self._is_diff
        for line in shown:
            out.append(((_line_style(line, diff), _clip("    " + line.expandtabs(4), width)),))
        if len(lines) > len(shown):
            out.append((("class:approval.detail", f"    … {len(lines) - len(shown):,} more lines"),))
        return out

    @property
    def _is_diff(self) -> bool:
        """An edit's body is always a diff; a write's only when it overwrites (``@@`` hunks)."""
        return self.name == "edit" or self.body.startswith("@@")

    def _tail_lines(self, width: int) -> list[Line]:
        assert self.result is not None
        if not self.result.output_tail:  # interrupted before a result: what it printed last
            return self._output_lines(self.live, LIVE_MAX_LINES, width)
        lines = neutralise(self.result.output_tail).rstrip("\n").split("\n")
        if lines[-1] == f"[exit code {self.result.exit_code}]":
            lines.pop()  # the tool line already says "exit N"
        return self._output_lines("\n".join(lines), TAIL_MAX_LINES, width)

    @staticmethod
    def _output_lines(text: str, count: int, width: int) -> list[Line]:
        lines = text.rstrip("\n").split("\n")[-count:] if text.strip() else []
        return [(("class:tool.tail", _clip("    " + line.expandtabs(4), width)),) for line in lines]
