"""The text frontend of the pipe and one-shot modes (SPEC 1, 9 approval, 10): no prompt_toolkit, no rich.

Owns reading lines from stdin (without blocking the event loop), approval answers from
the terminal (``cli.frontends.plain.line_approver``), the stderr protocol (session id, approval prompts, progress,
status and statistics lines) and stdout (only each task's final answer). Never writes ANSI
sequences. The session, the task loop, signals and exit codes are ``cli.frontends.plain.driver``'s, shared
with the JSON frontend (``cli.frontends.json.run``), which reuses ``Printer`` for its stderr lines.
"""

from __future__ import annotations

import asyncio
import re
import sys
from pathlib import Path
from typing import IO, TYPE_CHECKING, Mapping, Sequence, TextIO, assert_never, cast

from minicode.agent.approval import Approver, AutoApprover, HeadlessApprover
from minicode.agent.asking import AnswerKind, Asker, UnattendedAsker
from minicode.agent.events import (
    TAIL_LINES,
    AgentEvent,
    ApprovalResolved,
    AssistantDone,
    CheckFinished,
    ChecksFeedback,
    CheckStarted,
    CompactionDone,
    HookFeedback,
    HookReport,
    ModeChanged,
    ModelCallStarted,
    Notice,
    QuestionResolved,
    ReasoningChunk,
    Retrying,
    SubAgentEvent,
    TaskStatus,
    TextChunk,
    TodoUpdated,
    ToolFinished,
    ToolOutput,
    ToolStarted,
    TurnFinished,
    TurnStarted,
)
from minicode.cli.args import Options
from minicode.cli.stdstreams import is_terminal
from minicode.cli.frontends.shared.permission_lines import approval_line, startup_lines
from minicode.cli.frontends.shared.plan_lines import MODE_LINES
from minicode.cli.frontends.shared.terminal_text import ShownStream, silence
from minicode.cli.frontends.shared.shown_call import RECOVERED
from minicode.cli.frontends.plain.line_reader import LineReader
from minicode.cli.frontends.plain.tool_label import one_line, tool_label
from minicode.config import Config

if TYPE_CHECKING:
    from minicode.session.session import Session
    from minicode.tools.todo_list import TodoList

__all__ = ["PlainFrontend", "Printer", "run", "shown_stream"]

# CSI/OSC escape sequences and other control characters in tool output shown on stderr
# (patterns compiled at their first use, by re's cache: most runs show no failure tail)
_EXIT_LINE = r"\[exit code -?\d+\]"
_ESCAPES = r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)?|.)?|[\x00-\x08\x0b-\x1f\x7f-\x9f]"


class Printer:
    """Renders loop events: answers to stdout, everything else to stderr, never ANSI."""

    def __init__(self, out: TextIO | None, err: TextIO, progress: bool, workspace: Path | None = None, *,
                 answers: bool = True) -> None:  # fmt: skip
        self.out = out  # None: the process was started with stdout closed
        self.err = err
        self.progress = progress  # stderr is a terminal: one live line per tool call
        self.workspace = workspace  # shown as "." where a tool names it
        self._targets: dict[str, str] = {}
        self.undelivered = False  # an answer could not be written (stdout closed): exit 1
        self.interrupted_shown = False  # the last task ended "interrupted" (say it only once)
        self.answers = answers  # False: stderr lines only (the JSON frontend carries the answers)

    def __call__(self, event: AgentEvent) -> None:
        match event:
            case ToolStarted(call_id=cid, name=name, target=target, detail=detail):
                self._targets[cid] = tool_label(name, target, detail, self.workspace)
                if self.progress:
                    self.line(f"  … {self._targets[cid]}" + (f" {RECOVERED}" if event.from_text else ""))
                elif event.from_text:  # said on every stderr: the reply's text was taken as this call
                    self.line(f"minicode: {self._targets[cid]} {RECOVERED}")
            case ToolFinished(call_id=cid, summary=summary, is_error=is_error, duration_seconds=secs, output_tail=tail):
                if self.progress:
                    mark = "✗" if is_error else "✓"
                    self.line(f"  {mark} {self._targets.get(cid, '')} ({summary or 'done'}, {secs:.1f}s)")
                    self._tail(tail, event.exit_code)
            case Notice(text=text):
                self.line(f"minicode: {text}")
            case HookReport():  # always said: a block or a failure the user must know of; a long reason under it
                first, *rest = event.describe().splitlines() or [""]
                self.line(f"minicode: {re.sub(_ESCAPES, '', first)}")
                self._tail("\n".join(rest[:TAIL_LINES]), None)
            case Retrying():
                self.line(f"minicode: {event.describe()}")  # once per attempt, before its wait
            case CheckStarted(command=command, index=index, total=total):
                if self.progress:
                    self.line(f"  … check {index}/{total}: {one_line(command)}")
            case CheckFinished(result=result):
                # always said (not only on a terminal): the report names every check that ran
                self.line(f"minicode: check {'passed' if result.passed else 'failed'}: {one_line(result.describe())}")
                self._tail(result.output_tail, result.exit_code)
            case ChecksFeedback(round=round_, max_rounds=rounds):
                self.line(f"minicode: checks failed; their output went back to the model ({round_} of {rounds})")
            case CompactionDone(tokens_before=before, tokens_after=after, messages_summarised=n):
                self.line(f"minicode: context compacted: {before:,} → {after:,} tokens ({n} messages summarised)")
            case TurnFinished():
                self._finished(event)
            case TurnStarted():
                self.interrupted_shown = False
            case ApprovalResolved():
                shown = approval_line(event, self._targets.get(event.call_id, event.tool), self.progress)
                if shown:
                    self.line(shown)
            case QuestionResolved(how=how, question=question):
                if how == AnswerKind.UNAVAILABLE.value:  # nobody saw it: say what was asked
                    self.line(f"minicode: the model asked (no answer available): {one_line(question)}")
            case TodoUpdated(todo=todo, before=before):
                # said on every stderr (like checks): what the model plans is part of the report
                self.line(f"minicode: task list ({todo.summary}):" if todo else "minicode: task list cleared")
                for shown in todo.changes(before) if todo else ():
                    self.line(f"  {shown}")
            case ModeChanged():
                self.line(f"minicode: {MODE_LINES.get(event.why, event.mode)}")
            case SubAgentEvent():
                self._subagent(event)
            case ModelCallStarted() | TextChunk() | ReasoningChunk() | AssistantDone() | ToolOutput():
                pass  # no streaming preview in non-interactive modes
            case HookFeedback():
                pass  # its HookReport line said it
            case _:
                assert_never(event)

    def _subagent(self, event: SubAgentEvent) -> None:
        """A sub-agent's calls as the task's own, indented under its ``agent`` line; its
        notices and retries named by it. Its end is the agent call's own line."""
        key = f"{event.agent_id}/"  # its call ids are its model's: they may repeat the task's
        match event.event:
            case ToolStarted(call_id=cid, name=name, target=target, detail=detail) as started:
                self._targets[key + cid] = label = tool_label(name, target, detail, self.workspace)
                if self.progress:
                    self.line(f"    … {label}" + (f" {RECOVERED}" if started.from_text else ""))
            case ToolFinished(call_id=cid, summary=summary, is_error=is_error, duration_seconds=secs) as finished:
                label = self._targets.pop(key + cid, finished.name)
                if self.progress:
                    self.line(f"    {'✗' if is_error else '✓'} {label} ({summary or 'done'}, {secs:.1f}s)")
            case Notice(text=text):
                self.line(f"minicode: {event.agent_id}: {text}")
            case Retrying() as retrying:
                self.line(f"minicode: {event.agent_id}: {retrying.describe()}")
            case _:
                pass  # its answers are its report (the agent call's result); its end is that call's line

    def _tail(self, tail: str, exit_code: int | None) -> None:
        """Why a call or check failed (indented), so the user need not open the session file."""
        lines = re.sub(_ESCAPES, "", tail).splitlines()
        if lines and exit_code is not None and re.fullmatch(_EXIT_LINE, lines[-1].strip()):
            lines.pop()  # "(exit N, …)" above already says it
        self.err.write("".join(f"      {line}\n" for line in lines))

    def _finished(self, event: TurnFinished) -> None:
        if self.answers and event.final_text and event.status in (TaskStatus.DONE, TaskStatus.MAX_TURNS, TaskStatus.CHECKS_FAILED):
            self.answer(event.final_text.rstrip("\n") + "\n")
        status = event.status_text
        if event.error and event.status is not TaskStatus.INTERRUPTED:
            status = event.error if event.status is not TaskStatus.ERROR else f"error: {event.error}"
        self.line(f"minicode: {status}")
        self.line(f"minicode: {event.stats.format()}")
        self.interrupted_shown = event.status is TaskStatus.INTERRUPTED

    def answer(self, text: str) -> None:
        """Write an answer to stdout; a closed stdout is noted once, never a traceback."""
        if self.undelivered:
            return
        try:
            if self.out is None:
                raise BrokenPipeError("stdout is closed")
            self.out.write(text)
            self.out.flush()
        except (OSError, ValueError):  # reader gone (`| head`), or stdout closed (`>&-`)
            self.undelivered = True
            _silence(self.out)
            self.line("minicode: error: the answer could not be written to stdout (closed); exit code 1")

    def line(self, text: str) -> None:
        """One status line on stderr."""
        self.err.write(text + "\n")
        self.err.flush()


class PlainFrontend:
    """The text frontend of the driver: answers on stdout, the rest on stderr; approvals
    asked on a terminal (stdin, else /dev/tty), ``--yes``, or denied when nobody can answer."""

    def __init__(self, printer: Printer, yes: bool) -> None:
        self.printer = printer
        self.yes = yes
        self._tty: LineReader | None = None
        self._tty_opened = False

    def warn(self, text: str) -> None:
        self.printer.line(text)

    def opened(self, session: Session) -> None:
        from minicode.cli.frontends.plain.driver import opened_line

        self.printer.workspace = session.workspace
        self.printer.line(opened_line(session))
        for line in startup_lines(session.project_files, session.permissions.rules):
            self.printer.line(line)
        for warning in session.warnings:
            self.printer.line(f"minicode: warning: {warning}")

    def emit(self, event: AgentEvent) -> None:
        self.printer(event)

    def approver(self, reader: LineReader | None) -> Approver:
        """--yes; stdin when it is a terminal; else the controlling terminal (/dev/tty), keys
        typed before a question discarded; else nobody: a call no rule allows is denied,
        naming the rule that would allow it (issue 14; docs/usage-plain.md)."""
        if self.yes:
            return AutoApprover()
        from minicode.cli.frontends.plain.line_approver import LineApprover  # the question's lines load when one can be asked

        if reader is not None and reader.interactive:
            return LineApprover(reader, self.printer.err, workspace=self.printer.workspace)
        tty = self._tty_reader()
        if tty is None:
            return HeadlessApprover()
        return LineApprover(tty, self.printer.err, discard_typed_ahead=True, workspace=self.printer.workspace)

    def asker(self, reader: LineReader | None) -> Asker:
        """The model's questions asked where approvals are (stdin when it is a terminal, else
        /dev/tty); --yes or no terminal: "no answer available" at once (an unattended run never waits)."""
        if self.yes:
            return UnattendedAsker("the run is unattended (--yes)")
        from minicode.cli.frontends.plain.line_asker import LineAsker

        if reader is not None and reader.interactive:
            return LineAsker(reader, self.printer.err)
        tty = self._tty_reader()
        return UnattendedAsker() if tty is None else LineAsker(tty, self.printer.err, discard_typed_ahead=True)

    def questions(self) -> bool:
        """Somebody can answer: not --yes, and stdin is a terminal or there is a /dev/tty."""
        return not self.yes and (is_terminal(sys.stdin) or self._tty_reader() is not None)

    def _tty_reader(self) -> LineReader | None:
        """The controlling terminal's reader, opened once (approvals and questions share it);
        None without one. The terminal is left open: its reader thread may still be blocked in a
        read, and closing a file under a blocked reader is not safe; the process ends right after."""
        if not self._tty_opened:
            self._tty_opened = True
            tty = _open_tty()
            self._tty = None if tty is None else LineReader(tty)
        return self._tty

    def line(self, text: str) -> None:
        self.printer.line(text)

    def failed(self, text: str) -> None:
        self.printer.line(f"minicode: {text}")

    def command(self, line: str, code: int, said: Sequence[str]) -> None:
        pass  # its lines are already on stderr; the driver keeps the exit code

    def interrupted(self) -> None:
        if not self.printer.interrupted_shown:  # e.g. waiting for the next line, or in /compact
            self.printer.line("minicode: interrupted")

    def plan_ready(self, todo: TodoList) -> None:
        """The plan on stdout after the answer: what a ``--plan`` run is for (``plan_run``)."""
        if self.printer.answers:
            self.printer.answer("plan:\n" + "".join(f"{line}\n" for line in todo.lines()))

    def exit_code(self, code: int) -> int:
        return 1 if self.printer.undelivered and code == 0 else code


def run(options: Options, config: Config, workspace: Path, mode: str, piped_text: str | None, env: Mapping[str, str]) -> int:
    """Run pipe mode (tasks from stdin lines) or one-shot mode (TASK); returns the exit code."""
    from minicode.cli.frontends.plain.driver import drive

    err = shown_stream(sys.stderr, best_effort=True) or sys.stderr
    front = PlainFrontend(Printer(shown_stream(sys.stdout), err, progress=is_terminal(sys.stderr)), yes=options.yes)
    return asyncio.run(drive(options, config, workspace, mode, piped_text, env, front))


def shown_stream(stream: TextIO | None, *, best_effort: bool = False) -> TextIO | None:
    """``stream`` with control sequences shown visibly when it is a terminal (verbatim to a
    pipe or a file), and never failing on encoding (see ``terminal_text``). ``best_effort``
    (stderr, the human lines): a stream that is closed or breaks (the terminal hung up,
    ``2>/dev/full``) drops the lines instead of failing the task that reports."""
    if stream is None and not best_effort:
        return None
    return cast(TextIO, ShownStream(stream, terminal=is_terminal(stream), best_effort=best_effort))


def _silence(stream: TextIO | None) -> None:
    """Point a broken stdout at /dev/null, so the interpreter's final flush stays quiet."""
    if stream is not None:
        silence(stream)


def _open_tty() -> IO[bytes] | None:
    """The controlling terminal for approval answers, or None (then nobody can be asked)."""
    try:
        return open("/dev/tty", "rb", buffering=0)  # noqa: SIM115 - left open on purpose
    except OSError:
        return None
