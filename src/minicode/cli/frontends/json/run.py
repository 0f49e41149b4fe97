"""The JSON frontend of the pipe and one-shot modes: ``--output json`` and ``--output stream-json``.

Owns stdout in those modes — only JSON Lines reach it; anything else that would write there
(``print``, a C library, a child process holding file descriptor 1) lands on stderr —, the
approval policy (nobody can be asked: ``--yes``, else a call that needs approval is denied
unless a permission rule allows it), the timer of the coalesced deltas, and the promise
that the last line is a ``result``: after start-up errors, SIGINT/SIGTERM and internal
errors too. The human lines stay on stderr (``plain.Printer``). The mapping to JSON is
``cli.frontends.json.event_json``'s; the session, tasks and signals are ``cli.frontends.plain.driver``'s.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import sys
import threading
import traceback
from dataclasses import dataclass
from types import FrameType
from typing import IO, TYPE_CHECKING, Callable, Protocol, Sequence, TextIO

from minicode import __version__
from minicode.agent.approval import Approval, ApprovalRequest, Approver, AutoApprover, HeadlessApprover
from minicode.agent.asking import Asker, UnattendedAsker
from minicode.agent.events import AgentEvent, ReasoningChunk, TextChunk, ToolOutput
from minicode.cli.prepared import Prepared
from minicode.cli.args import Options
from minicode.cli.stdstreams import is_terminal, private_stdout
from minicode.cli.frontends.json.deltas import DeltaCoalescer, Fragment
from minicode.cli.frontends.plain.driver import drive
from minicode.cli.frontends.json.event_json import EventMapper, Payload, SessionInfo, encode_line
from minicode.cli.frontends.plain.frontend import PlainFrontend, Printer, shown_stream
from minicode.cli.frontends.plain.line_reader import LineReader
from minicode.exitcodes import EXIT_FAILURE, EXIT_INTERRUPTED, EXIT_USAGE
from minicode.stop_signal import STOP_SIGNALS, events_taken_over, result_goes_to

if TYPE_CHECKING:
    from minicode.session.session import Session
    from minicode.tools.todo_list import TodoList

__all__ = ["POLICY_REASON", "QUESTION_REASON", "AnnouncingApprover", "JsonFrontend", "JsonWriter", "Timers", "main", "stdout_guard"]

QUESTION_REASON = "nobody can answer with --output json"
POLICY_REASON = "nobody can approve it with --output json: rerun with --yes to approve every call, or add a rule"
"""Why a call that needs approval is denied in JSON mode (``HeadlessApprover``); the batch
adds which rule would allow it. The model, the stream and stderr all say it."""


@dataclass
class AnnouncingApprover:
    """Reports that the frontend's approver is consulted (an ``approval`` "asked" event)."""

    inner: Approver
    announce: Callable[[ApprovalRequest], None]

    async def approve(self, request: ApprovalRequest) -> Approval:
        self.announce(request)
        return await self.inner.approve(request)


class Timers(Protocol):
    """The clock and timers of the event loop (``asyncio.AbstractEventLoop`` is one)."""

    def time(self) -> float: ...

    def call_at(self, when: float, callback: Callable[[], object]) -> asyncio.TimerHandle: ...


class JsonWriter:
    """Writes encoded lines to the JSON stdout; a closed stdout is noted once on stderr."""

    def __init__(self, out: IO[bytes] | None, err: TextIO) -> None:
        self._out = out
        self._err = err
        self.undelivered = False  # a line could not be written: exit 1

    def write(self, line: bytes) -> None:
        if self.undelivered:
            return
        try:
            if self._out is None:
                raise BrokenPipeError("stdout is closed")
            self._out.write(line)
            self._out.flush()
        except (OSError, ValueError):  # reader gone (`| head`), or stdout closed (`>&-`)
            self.undelivered = True
            self._err.write("minicode: error: the events could not be written to stdout (closed)\n")
            self._err.flush()


class JsonFrontend:
    """The driver's frontend for ``--output json|stream-json``: JSON events on stdout, and
    the text frontend's stderr lines (without the answers, which are in the events)."""

    def __init__(self, writer: JsonWriter, options: Options, err: TextIO, timers: Timers | None = None) -> None:
        printer = Printer(None, err, progress=is_terminal(err), answers=False)
        self._text = PlainFrontend(printer, yes=options.yes)
        self._writer = writer
        self._mapper = EventMapper(stream=options.output == "stream-json")
        self._deltas = DeltaCoalescer() if self._mapper.stream else None
        self._timer: asyncio.TimerHandle | None = None
        self._timers = timers  # None: the running event loop's clock and timers
        self._options = options
        self._early: list[str] = []  # warnings from before the session event
        self.failure: str | None = None  # the last failure outside a task, for the closing result

    # --- the driver's Frontend protocol -------------------------------------------------

    def warn(self, text: str) -> None:
        self._text.warn(text)
        self._early.append(text.removeprefix("minicode: "))

    def opened(self, session: Session) -> None:
        self._text.opened(session)
        info = SessionInfo(
            id=session.id, workspace=str(session.workspace), model=session.model, tools=session.tool_names,
            resumed=not session.is_new, messages=len(session.messages), output=self._options.output,
            approvals="auto" if self._options.yes else "deny", version=__version__,
            context_window=session.context_window, context_source=session.context_source,
        )  # fmt: skip
        self._send([self._mapper.opened(info)])
        notices = [*self._early, *(f"warning: {w}" for w in session.warnings)]
        self._send([self._mapper.notice(text) for text in notices])

    def emit(self, event: AgentEvent) -> None:
        self._text.emit(event)
        if self._deltas is not None and isinstance(event, (TextChunk, ReasoningChunk, ToolOutput)):
            self._hold(event)
            return
        self._release()
        self._send(self._mapper.event(event))

    def approver(self, reader: LineReader | None) -> Approver:
        inner = AutoApprover() if self._options.yes else HeadlessApprover(POLICY_REASON)
        return AnnouncingApprover(inner, self._asked)

    def asker(self, reader: LineReader | None) -> Asker:
        return UnattendedAsker(QUESTION_REASON)  # a JSON run never waits for a person

    def questions(self) -> bool:
        return False  # ask_user is not offered; a call by name is answered at once

    def line(self, text: str) -> None:
        self._text.line(text)

    def failed(self, text: str) -> None:
        self._text.failed(text)
        self.failure = text
        self._release()
        self._send([self._mapper.notice(text)])

    def command(self, line: str, code: int, said: Sequence[str]) -> None:
        """A ``command`` event; the reason of a failed one is what it said last (the mapper
        names it in the closing ``result`` when the run ends with its code)."""
        texts = [text.removeprefix("minicode: ") for text in said]
        error = None if code == 0 else (texts[-1] if texts else "it failed").removeprefix("error: ")
        self._release()
        self._send([self._mapper.command(line, code, texts, error)])

    def interrupted(self) -> None:
        self._text.interrupted()

    def plan_ready(self, todo: TodoList) -> None:
        pass  # the ``todo`` events carry the list; stdout holds JSON only

    def exit_code(self, code: int) -> int:
        return EXIT_FAILURE if self._writer.undelivered and code == 0 else code

    # --- the run's end ------------------------------------------------------------------

    def finish(self, code: int, error: str | None) -> None:
        """The closing ``result`` when the last line is not already the run's result."""
        self._release()
        closing = self._mapper.closing(code, error)
        if closing is not None:
            self._send([closing])

    # --- internals ----------------------------------------------------------------------

    def _asked(self, request: ApprovalRequest) -> None:
        self._release()
        self._send([self._mapper.asked(request)])

    def _hold(self, event: TextChunk | ReasoningChunk | ToolOutput) -> None:
        assert self._deltas is not None
        loop = self._timers or asyncio.get_running_loop()
        match event:
            case TextChunk(text=text):
                pieces = self._deltas.add("text", text, loop.time())
            case ReasoningChunk(text=text):
                pieces = self._deltas.add("reasoning", text, loop.time())
            case ToolOutput(call_id=call_id, text=text):
                pieces = self._deltas.add("tool_output", text, loop.time(), call_id)
        self._send_pieces(pieces)
        self._schedule(loop)

    def _schedule(self, loop: Timers) -> None:
        """A timer at the held piece's deadline (which moves earlier once the piece is worth
        its envelope); a timer that fires early finds nothing due and sets the next one."""
        deadline = self._deltas.deadline if self._deltas is not None else None
        if deadline is None or (self._timer is not None and self._timer.when() <= deadline):
            return
        if self._timer is not None:
            self._timer.cancel()
        self._timer = loop.call_at(deadline, self._on_timer)

    def _on_timer(self) -> None:
        self._timer = None
        if self._deltas is None:
            return
        loop = self._timers or asyncio.get_running_loop()
        self._send_pieces(self._deltas.due(loop.time()))
        self._schedule(loop)

    def _release(self) -> None:
        """Everything held goes out before the next event (deltas precede what follows them)."""
        if self._deltas is None:
            return
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._send_pieces(self._deltas.flush())

    def _send_pieces(self, pieces: list[Fragment]) -> None:
        self._send([self._mapper.delta(p.kind, p.text, p.call_id) for p in pieces])

    def _send(self, payloads: list[Payload]) -> None:
        for payload in payloads:
            try:
                line = encode_line(payload)
            except (TypeError, ValueError) as e:  # a bug: still a valid line, saying so
                what = f"internal error: a {payload.get('type')} event could not be encoded: {e}"
                line = encode_line(self._mapper.notice(what))
            self._writer.write(line)


def main(options: Options, prepare: Callable[[], Prepared], *, out: IO[bytes] | None = None) -> int:
    """Run ``--output json|stream-json``; returns the exit code. ``prepare`` loads the config
    and picks the mode (it raises ConfigError). ``out``: write the JSON there instead of
    taking over the process's stdout (tests)."""
    # the model's text made visible on a terminal (finding P7); a stderr that breaks (the terminal
    # hung up) drops its lines, never the run: stdout carries the contract
    err = shown_stream(sys.stderr, best_effort=True) or sys.stderr
    guard = contextlib.nullcontext(out) if out is not None else stdout_guard()
    # Owning the process, the signals stay ignored after the last line until it has exited.
    with guard as stream:
        front = JsonFrontend(JsonWriter(stream, err), options, err)
        interrupts = _Interrupts(ignore_after=out is None)
        try:
            with interrupts:
                try:
                    code, error = _run(options, prepare, front, err, interrupts)
                finally:
                    interrupts.armed = False  # from here on a signal cannot cut the last line
                front.finish(code, error)
        except KeyboardInterrupt:  # also from a signal while the handlers were going in
            interrupts.armed = False
            front.interrupted()
            code = EXIT_INTERRUPTED
            front.finish(code, "interrupted")
    return code


def _run(options: Options, prepare: Callable[[], Prepared], front: JsonFrontend, err: TextIO,
         interrupts: _Interrupts) -> tuple[int, str | None]:
    from minicode.errors import ConfigError, MinicodeError, SessionError

    def fatal(text: str, code: int) -> tuple[int, str]:
        err.write(f"minicode: error: {text}\n")
        return code, text

    try:
        p = prepare()
        return asyncio.run(drive(options, p.config, p.workspace, p.mode, p.piped, p.env, front)), front.failure
    except ConfigError as e:
        return fatal(str(e), EXIT_USAGE)
    except SessionError as e:
        return fatal(str(e), e.exit_code)
    except MinicodeError as e:
        return fatal(str(e), EXIT_FAILURE)
    except asyncio.CancelledError:
        front.interrupted()
        return EXIT_INTERRUPTED, "interrupted"
    except Exception as e:  # the top of the run: a bug still ends in a valid result line
        if interrupts.fired:
            # The signal's KeyboardInterrupt came back as another exception: Python 3.11 turns
            # anything raised in a class's __set_name__ (a dataclass being built by an import)
            # into RuntimeError. It was the stop the user asked for, not a bug.
            front.interrupted()
            return EXIT_INTERRUPTED, "interrupted"
        traceback.print_exc(file=err)
        return fatal(f"internal error: {type(e).__name__}: {e}", EXIT_FAILURE)


class _Interrupts:
    """Outside the driver's own handlers (loading the config, opening and closing the
    session), SIGINT/SIGTERM/SIGHUP raise KeyboardInterrupt instead of killing the process, so the
    run still ends with its ``result`` line; once ``armed`` is False they are ignored (the
    last line is being written and the process ends right after).

    ``ignore_after``: on leaving, the signals are set to be ignored instead of getting their
    previous handlers back. The last line has promised an exit code, and the interpreter's
    exit still takes tens of milliseconds, in which the entry point's handler would exit 130
    and, once the interpreter has reset its handlers, the signal would kill the process
    (−15, −2). Ignored signals stay ignored through that reset."""

    def __init__(self, *, ignore_after: bool = False) -> None:
        self.armed = True
        self.fired = False
        self._ignore_after = ignore_after
        self._previous: dict[int, Callable[[int, FrameType | None], object] | int | None] = {}

    def __enter__(self) -> _Interrupts:
        if threading.current_thread() is threading.main_thread():
            for sig in STOP_SIGNALS:
                self._previous[sig] = signal.getsignal(sig)
                signal.signal(sig, self._handle)
            events_taken_over()  # the entry point's fixed result line is no longer needed
        return self

    def __exit__(self, *exc: object) -> None:
        for sig, handler in self._previous.items():
            if self._ignore_after:
                signal.signal(sig, signal.SIG_IGN)
            elif handler is not None:
                signal.signal(sig, handler)

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        if self.armed:
            self.fired = True
            raise KeyboardInterrupt


def stdout_guard() -> private_stdout:
    """Only the JSON writer reaches stdout (``cli.stdstreams.private_stdout``); a stop signal
    before the JSON run's handlers writes its fixed result line where the real stdout is."""
    return private_stdout(result_goes_to)
