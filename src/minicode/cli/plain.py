"""The pipe and one-shot frontends (SPEC 1, 9 approval, 10): no prompt_toolkit, no rich.

Owns reading tasks and approval answers from stdin (without blocking the event loop), the
stderr protocol (session id, approval prompts, progress, status and statistics lines, the
resume command), stdout (only each task's final answer), exit codes and SIGINT/SIGTERM.
Never writes ANSI sequences.
"""

from __future__ import annotations

import asyncio
import os
import re
import signal
import sys
import termios
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING, Iterable, Mapping, TextIO, assert_never

from minicode.agent.approval import Approval, ApprovalRequest, Approver, AutoApprover, Decision
from minicode.agent.events import (
    AgentEvent,
    ApprovalResolved,
    AssistantDone,
    CompactionDone,
    ModelCallStarted,
    Notice,
    ReasoningChunk,
    Retrying,
    TaskStatus,
    TextChunk,
    ToolFinished,
    ToolOutput,
    ToolStarted,
    TurnFinished,
    TurnStarted,
)
from minicode.cli import is_terminal
from minicode.cli.args import Options
from minicode.cli.tool_label import PATTERN_TOOLS, one_line, tool_label
from minicode.exitcodes import EXIT_INTERRUPTED
from minicode.config import Config
from minicode.tools.scrub import scrub

if TYPE_CHECKING:
    from minicode.session.session import Session

__all__ = ["LineReader", "LineApprover", "attach_piped", "run"]

BODY_LINES = 24
_YES = ("y", "yes")
_SESSION = ("a", "always")  # on a terminal only: allow this tool for the rest of the session
# CSI/OSC escape sequences and other control characters in tool output shown on stderr
_EXIT_LINE = re.compile(r"\[exit code -?\d+\]")
_ESCAPES = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)?|.)?|[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def attach_piped(task: str, piped: str | None) -> str:
    """One-shot TASK with piped stdin attached as clearly delimited context."""
    if not piped:
        return task
    body = piped if piped.endswith("\n") else piped + "\n"
    return f"{task}\n\n<stdin>\n{body}</stdin>"


class LineReader:
    """Lines of a stream, read by a daemon thread so the event loop never blocks.

    The bytes are read (``stream.buffer`` for a text stream) and each line is decoded on
    its own with errors="replace": one line that isn't UTF-8 must not end the input. A
    daemon thread (not the default executor) because a read blocked on a terminal must
    not keep the process alive after the session ends.
    """

    def __init__(self, stream: IO[str] | IO[bytes]) -> None:
        self._stream = stream
        self._queue: asyncio.Queue[str | None] = asyncio.Queue()
        self._loop = asyncio.get_running_loop()
        self.eof = False
        self.failure: OSError | ValueError | None = None  # why the input ended early, if it broke
        self.interactive = is_terminal(stream)  # a person types (and the terminal echoes) the lines
        threading.Thread(target=self._pump, name="minicode-stdin", daemon=True).start()

    def _pump(self) -> None:
        source: Iterable[str | bytes] = getattr(self._stream, "buffer", self._stream)
        try:
            for raw in source:
                line = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else scrub(raw)
                self._loop.call_soon_threadsafe(self._queue.put_nowait, line.rstrip("\r\n"))
        except (OSError, ValueError) as e:
            # The input ends here either way; kept so the frontend can say it broke
            # instead of passing it off as a normal end of input.
            self.failure = e
        finally:
            try:
                self._loop.call_soon_threadsafe(self._queue.put_nowait, None)
            except RuntimeError:  # the loop is already closed: nobody is listening
                pass

    def failure_text(self) -> str:
        """" (cannot read stdin: …)" when the input ended because reading failed, else ""."""
        if self.failure is None:
            return ""
        reason = getattr(self.failure, "strerror", None) or str(self.failure) or type(self.failure).__name__
        return f" (cannot read stdin: {reason})"

    async def next_line(self) -> str | None:
        """The next line without its newline, or None at end of input (then always None);
        ``failure`` says whether that end was a read error."""
        if self.eof:
            return None
        line = await self._queue.get()
        if line is None:
            self.eof = True
        return line

    def discard_pending(self) -> None:
        """Forget input typed before now (keys pressed before a prompt must not answer it):
        lines already read, and — on a terminal — what the kernel still holds."""
        while not self._queue.empty():
            if self._queue.get_nowait() is None:
                self.eof = True
        try:
            fd = self._stream.fileno()
            if os.isatty(fd):
                termios.tcflush(fd, termios.TCIFLUSH)
        except (OSError, ValueError, termios.error):
            pass


@dataclass
class LineApprover:
    """Approval answers from a line source: ``y``/``yes`` approves, anything else denies,
    end of input denies (and ``ended`` tells the frontend to stop after this task). On a
    terminal ``a``/``always`` also allows the tool for the rest of the session."""

    reader: LineReader
    err: TextIO
    ended: bool = False
    discard_typed_ahead: bool = False  # one-shot on /dev/tty: keys pressed earlier don't answer
    workspace: Path | None = None  # shown as "." where a tool names it

    async def approve(self, request: ApprovalRequest) -> Approval:
        label = tool_label(request.tool, request.target, request.detail, self.workspace)
        shown_in_label = request.tool in ("bash", *PATTERN_TOOLS)
        detail = f": {one_line(request.detail)}" if request.detail and not shown_in_label else ""
        self.err.write(_body_lines(request.body))
        choices = "y/a/N" if self.reader.interactive else "y/N"
        self.err.write(f"minicode: allow {label}{detail}? [{choices}] ")
        self.err.flush()
        if self.discard_typed_ahead:
            self.reader.discard_pending()
        try:
            line = await self.reader.next_line()
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
        answer = line.strip()
        if answer.lower() in _YES:
            return Approval(Decision.ALLOW_ONCE)
        if self.reader.interactive and answer.lower() in _SESSION:
            return Approval(Decision.ALLOW_SESSION)
        reason = answer if answer.lower() not in ("", "n", "no") else None
        return Approval(Decision.DENY, reason)


def _body_lines(body: str, limit: int = BODY_LINES) -> str:
    """The approval preview body, indented, at most ``limit`` lines (the tools cap it too)."""
    lines = body.splitlines()
    if not lines:
        return ""
    if len(lines) > limit:
        lines = [*lines[:limit], f"… {len(lines) - limit} more lines"]
    return "".join(f"    {line}\n" for line in lines)


@dataclass
class Printer:
    """Renders loop events: answers to stdout, everything else to stderr, never ANSI."""

    out: TextIO | None  # None: the process was started with stdout closed
    err: TextIO
    progress: bool  # stderr is a terminal: one live line per tool call
    workspace: Path | None = None  # shown as "." where a tool names it
    _targets: dict[str, str] = field(default_factory=dict)
    undelivered: bool = False  # an answer could not be written (stdout closed): exit 1
    interrupted_shown: bool = False  # the last task ended "interrupted" (say it only once)

    def __call__(self, event: AgentEvent) -> None:
        match event:
            case ToolStarted(call_id=cid, name=name, target=target, detail=detail):
                self._targets[cid] = tool_label(name, target, detail, self.workspace)
                if self.progress:
                    self.line(f"  … {self._targets[cid]}")
            case ToolFinished(call_id=cid, summary=summary, is_error=is_error, duration_seconds=secs, output_tail=tail):
                if self.progress:
                    mark = "✗" if is_error else "✓"
                    self.line(f"  {mark} {self._targets.get(cid, '')} ({summary or 'done'}, {secs:.1f}s)")
                    lines = _ESCAPES.sub("", tail).splitlines()
                    if lines and event.exit_code is not None and _EXIT_LINE.fullmatch(lines[-1].strip()):
                        lines.pop()  # "(exit N, …)" above already says it
                    # why it failed, so the user need not open the session file
                    self.err.write("".join(f"      {line}\n" for line in lines))
            case Notice(text=text):
                self.line(f"minicode: {text}")
            case Retrying():
                self.line(f"minicode: {event.describe()}")  # once per attempt, before its wait
            case CompactionDone(tokens_before=before, tokens_after=after, messages_summarised=n):
                self.line(f"minicode: context compacted: {before:,} → {after:,} tokens ({n} messages summarised)")
            case TurnFinished():
                self._finished(event)
            case TurnStarted():
                self.interrupted_shown = False
            case ModelCallStarted() | TextChunk() | ReasoningChunk() | AssistantDone() | ToolOutput() | ApprovalResolved():
                pass  # no streaming preview in non-interactive modes
            case _:
                assert_never(event)

    def _finished(self, event: TurnFinished) -> None:
        if event.final_text and event.status in (TaskStatus.DONE, TaskStatus.MAX_TURNS):
            self._answer(event.final_text.rstrip("\n") + "\n")
        status = event.status.value
        if event.error and event.status is not TaskStatus.INTERRUPTED:
            status = event.error if event.status is not TaskStatus.ERROR else f"error: {event.error}"
        self.line(f"minicode: {status}")
        self.line(f"minicode: {event.stats.format()}")
        self.interrupted_shown = event.status is TaskStatus.INTERRUPTED

    def _answer(self, text: str) -> None:
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


def run(options: Options, config: Config, workspace: Path, mode: str, piped_text: str | None, env: Mapping[str, str]) -> int:
    """Run pipe mode (tasks from stdin lines) or one-shot mode (TASK); returns the exit code."""
    return asyncio.run(_main(options, config, workspace, mode, piped_text, env))


async def _main(
    options: Options, config: Config, workspace: Path, mode: str, piped: str | None, env: Mapping[str, str]
) -> int:
    from minicode.session.session import Session
    from minicode.telemetry import create_tracer

    err = sys.stderr
    tracer = create_tracer(config.langfuse, warn=lambda text: print(text, file=err), secrets=[config.model.api_key])
    session = await Session.open(
        config=config, workspace=workspace, env=env, resume=options.session,
        continue_latest=options.continue_session, tracer=tracer,
    )
    loop = asyncio.get_running_loop()
    main_task = asyncio.current_task()
    assert main_task is not None
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, main_task.cancel)
    try:
        print(_opened_line(session), file=err)
        for warning in session.warnings:
            print(f"minicode: warning: {warning}", file=err)
        printer = Printer(sys.stdout, err, progress=is_terminal(err), workspace=session.workspace)
        try:
            if mode == "oneshot":
                code = await _oneshot(session, options, attach_piped(options.task_text, piped), printer)
            else:
                code = await _pipe(session, options, printer)
            return 1 if printer.undelivered and code == 0 else code
        except asyncio.CancelledError:
            if not printer.interrupted_shown:  # e.g. waiting for the next line, or in /compact
                print("minicode: interrupted", file=err)
            return EXIT_INTERRUPTED
    finally:
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(sig)
        kept = await session.aclose()
        if kept:
            print(f"minicode: resume with: {session.resume_command}", file=err)


def _opened_line(session: Session) -> str:
    if session.is_new:
        return f"minicode: session {session.id}"
    count = len(session.messages)
    return f"minicode: resumed session {session.id} ({count} message{'' if count == 1 else 's'})"


async def _task(session: Session, text: str, approver: Approver, options: Options, printer: Printer) -> TaskStatus:
    finished = await session.turn(
        text, approver=approver, emit=printer, max_turns=options.max_turns, timeout=options.timeout
    )
    return finished.status


async def _pipe(session: Session, options: Options, printer: Printer) -> int:
    reader = LineReader(sys.stdin)
    if reader.interactive:  # stdout is redirected (`minicode > out.txt`): don't wait silently
        printer.line("minicode: reading tasks from the terminal, one per line; Ctrl+D ends")
    approver: Approver = (
        AutoApprover() if options.yes else LineApprover(reader, printer.err, workspace=printer.workspace)
    )
    code = 0
    while (line := await reader.next_line()) is not None:
        text = line.strip()
        if not text:
            continue
        if text == "/compact":
            if not await _compact(session, printer):
                code = 1
            continue
        status = await _task(session, line, approver, options, printer)
        if status is not TaskStatus.DONE:
            code = status.exit_code
        if isinstance(approver, LineApprover) and approver.ended:
            break
    if reader.failure is not None:
        printer.err.write(f"minicode: the input ended early{reader.failure_text()}\n")
        code = code or 1
    return code


async def _compact(session: Session, printer: Printer) -> bool:
    """``/compact``; False when MiniCode.md is broken (reported; later lines still run)."""
    from minicode.errors import MemoryFileError

    try:
        await session.compact(emit=printer)
    except MemoryFileError as e:
        printer.line(f"minicode: error: {e}")
        return False
    return True


async def _oneshot(session: Session, options: Options, task: str, printer: Printer) -> int:
    approver: Approver
    if options.yes:
        approver = AutoApprover()
    else:
        tty = _open_tty()
        reader = LineReader(tty if tty is not None else sys.stdin)
        approver = LineApprover(
            reader, printer.err, discard_typed_ahead=tty is not None, workspace=printer.workspace
        )
    # The terminal is left open: its reader thread may still be blocked in a read, and
    # closing a file under a blocked reader is not safe; the process ends right after.
    status = await _task(session, task, approver, options, printer)
    return status.exit_code


def _silence(stream: TextIO | None) -> None:
    """Point a broken stdout at /dev/null, so the interpreter's final flush stays quiet."""
    if stream is None:
        return
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(devnull, stream.fileno())
        finally:
            os.close(devnull)
    except (OSError, ValueError):
        pass


def _open_tty() -> IO[bytes] | None:
    """The controlling terminal for approval answers, or None (then pipe rules apply)."""
    try:
        return open("/dev/tty", "rb", buffering=0)  # noqa: SIM115 - left open on purpose
    except OSError:
        return None
