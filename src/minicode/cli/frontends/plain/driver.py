"""The driving of the non-interactive modes (SPEC 1), shared by every output format.

Owns opening the session, SIGINT/SIGTERM/SIGHUP (they cancel the running task), the one-shot task
(with piped context attached), the pipe loop (one task per stdin line, ``/compact``, ``/permissions``), the exit
code and closing the session. What the user sees — text on stdout/stderr (``cli.frontends.plain.frontend``) or
JSON events (``cli.frontends.json.run``) — and who answers approvals is the ``Frontend``'s business.
No prompt_toolkit, no rich.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Mapping, Protocol, Sequence

from minicode.agent.approval import Approver
from minicode.agent.asking import Asker
from minicode.agent.events import AgentEvent, TaskStatus
from minicode.cli.args import Options
from minicode.cli.frontends.plain.first_task import attach_piped, is_command
from minicode.cli.frontends.plain.pipe_commands import Current, run_pipe_command
from minicode.cli.frontends.plain.line_reader import LineReader
from minicode.cli.frontends.shared.shown_call import reveal
from minicode.cli.stdstreams import is_terminal
from minicode.config import Config
from minicode.exitcodes import EXIT_FAILURE, EXIT_INTERRUPTED
from minicode.stop_signal import signals_cancel

if TYPE_CHECKING:
    from minicode.session.session import Session
    from minicode.tools.todo_list import TodoList

__all__ = ["Frontend", "attach_piped", "drive", "opened_line"]

"""The signals that interrupt the running task (exit 130) instead of killing the process;
SIGHUP (the terminal closed, the ssh connection dropped) is a stop like the others."""


class Frontend(Protocol):
    """One output format of the pipe and one-shot modes.

    Every method is called on the event loop and must not raise: a frontend that cannot
    write (stdout closed) notes it and reports it through ``exit_code``.
    """

    def warn(self, text: str) -> None:
        """A warning before the session is open (e.g. tracing is off); ``text`` is one
        complete stderr line ("minicode: warning: …")."""

    def opened(self, session: Session) -> None:
        """The session is open (new or resumed): say so, with its warnings."""

    def emit(self, event: AgentEvent) -> None:
        """One event of a running task or of ``/compact``."""

    def approver(self, reader: LineReader | None) -> Approver:
        """Who answers approvals: ``reader`` is stdin in pipe mode, None in one-shot mode."""

    def asker(self, reader: LineReader | None) -> Asker:
        """Who answers the model's questions (``ask_user``), with the same ``reader``."""

    def questions(self) -> bool:
        """Whether anybody can answer the model's questions in this run (asked before the
        session opens: without, ``ask_user`` is not offered to the model)."""

    def line(self, text: str) -> None:
        """One human status line on stderr."""

    def failed(self, text: str) -> None:
        """Something failed outside any task and any command (reading stdin): "minicode: " + text."""

    def command(self, line: str, code: int, said: Sequence[str]) -> None:
        """A pipe-mode command line (``/compact``, ``/undo``, ``/model`` …) ended with ``code``
        (0, or 1: it failed); ``said`` are the stderr lines it wrote through ``line``."""

    def interrupted(self) -> None:
        """SIGINT/SIGTERM arrived while no task ran (waiting for input, in ``/compact``)."""

    def plan_ready(self, todo: TodoList) -> None:
        """A one-shot ``--plan`` task proposed ``todo``: show the plan (``plan_run``)."""

    def exit_code(self, code: int) -> int:
        """The exit code once every task ran; a frontend that could not deliver its output
        turns a 0 into 1."""


def opened_line(session: Session) -> str:
    """The stderr line that names the session: new, or resumed with its message count."""
    if session.is_new:
        return f"minicode: session {session.id}"
    count = len(session.messages)
    return f"minicode: resumed session {session.id} ({count} message{'' if count == 1 else 's'})"


async def drive(
    options: Options, config: Config, workspace: Path, mode: str, piped: str | None, env: Mapping[str, str],
    front: Frontend,
) -> int:
    """Run one-shot mode (TASK) or pipe mode (tasks from stdin lines); returns the exit code.

    Errors opening the session (ConfigError, SessionError, …) propagate to the caller."""
    from minicode.session.records import SessionSettings
    from minicode.session.session import Session
    from minicode.telemetry import create_tracer

    pinned = SessionSettings(options.model, options.think)
    # an OAuth sign-in waits only for someone who sees stderr and did not ask for an unattended run
    attended = options.output == "text" and not options.yes and is_terminal(sys.stderr)
    questions = front.questions()

    async def open_session(resume: str | None, continue_latest: bool) -> Session:
        tracer = create_tracer(config.langfuse, warn=front.warn, secrets=[config.model.api_key])
        session = await Session.open(
            config=config, workspace=workspace, env=env, resume=resume,
            continue_latest=continue_latest, tracer=tracer, pinned=pinned, mcp_attended=attended,
            questions=questions,
        )  # fmt: skip
        if session.mcp is not None:  # a remote server's sign-in address: on stderr, now
            session.mcp.show_signin(lambda line: print(f"minicode: {reveal(line)}", file=sys.stderr, flush=True))
        return session

    main_task = asyncio.current_task()
    assert main_task is not None
    # The signals cancel from before the session opens to after it is closed (outside, the
    # entry point's handler would end the process at once, cutting a save short).
    with signals_cancel(main_task):
        try:
            current = Current(await open_session(options.session, options.continue_session),
                              lambda: open_session(None, False))
        except asyncio.CancelledError:  # interrupted while opening: nothing to close
            front.interrupted()
            return EXIT_INTERRUPTED
        try:
            front.opened(current.session)
            if options.plan:
                await current.session.enter_plan(front.emit)
            code = await _tasks(current, options, mode, piped, front)
        finally:
            kept, interrupted = await _close(current.session)
            if kept:
                front.line(f"minicode: resume with: {current.session.resume_command}")
        if interrupted and code != EXIT_INTERRUPTED:
            front.interrupted()
            code = EXIT_INTERRUPTED
    return code


async def _close(session: Session) -> tuple[bool, bool]:
    """Close the session whatever arrives meanwhile: (it is kept, a signal came while closing).
    A signal never cuts the save short; it only makes the exit code 130."""
    closing = asyncio.ensure_future(session.aclose())
    interrupted = False
    while True:
        try:
            return await asyncio.shield(closing), interrupted
        except asyncio.CancelledError:
            interrupted = True


async def _tasks(current: Current, options: Options, mode: str, piped: str | None, front: Frontend) -> int:
    try:
        if mode == "oneshot":
            task = attach_piped(options.task_text, piped)
            approver = (front.approver(None), front.asker(None))
            status = await _task(current.session, task, approver, options, front)
            code = status.exit_code
            if options.plan:
                from minicode.cli.frontends.plain.plan_run import after_planning

                code = await after_planning(current.session, status, front, options.yes,
                                            lambda text: _task(current.session, text, approver, options, front))
        else:
            code = await _pipe(current, options, front)
        return front.exit_code(code)
    except asyncio.CancelledError:
        front.interrupted()
        return EXIT_INTERRUPTED


async def _task(session: Session, text: str, people: tuple[Approver, Asker], options: Options,
                front: Frontend) -> TaskStatus:
    approver, asker = people
    finished = await session.turn(
        text, approver=approver, emit=front.emit, max_turns=options.max_turns, timeout=options.timeout, asker=asker
    )
    return finished.status


async def _pipe(current: Current, options: Options, front: Frontend) -> int:
    """Each non-empty stdin line is one task, in order; the last failing task or command sets
    the code. End of input — also while an approval question waits — ends the loop.
    ``/compact``, ``/permissions`` and the commands of ``cli.frontends.plain.pipe_commands`` (``/undo``,
    ``/new``, ``/model``, ``/think``) run without a model call; ``/plan`` lines are ``plan_run``'s."""
    reader = LineReader(sys.stdin)
    if reader.interactive:  # stdout is redirected (`minicode > out.txt`): don't wait silently
        front.line("minicode: reading tasks from the terminal, one per line; Ctrl+D ends")
    people = front.approver(reader), front.asker(reader)
    code = 0
    while (line := await reader.next_line()) is not None:
        text = line.strip()
        if not text:
            continue
        if is_command(text):
            if await _command(text, current, front, reader, options, people) != 0:
                code = EXIT_FAILURE
            continue
        status = await _task(current.session, line, people, options, front)
        if status is not TaskStatus.DONE:
            code = status.exit_code
        elif current.session.mode == "plan" and current.session.todo:
            from minicode.cli.frontends.shared.plan_lines import PLAN_READY

            front.line(f"minicode: {PLAN_READY}")
    if reader.failure is not None:
        front.failed(f"the input ended early{reader.failure_text()}")
        code = code or EXIT_FAILURE
    return code


class _Said:
    """The command's voice: each line goes to the frontend at once and is kept for the
    frontend's ``command`` report (the JSON stream's ``command`` event)."""

    def __init__(self, front: Frontend) -> None:
        self._front = front
        self.lines: list[str] = []

    def line(self, text: str) -> None:
        self.lines.append(text)
        self._front.line(text)

    def opened(self, session: Session) -> None:
        self._front.opened(session)


async def _command(text: str, current: Current, front: Frontend, reader: LineReader, options: Options,
                   people: tuple[Approver, Asker]) -> int:
    """Run one command line and report it; returns its code (0, or 1 when it failed)."""
    said = _Said(front)
    yes = options.yes
    if text.split(maxsplit=1)[0] == "/plan":
        from minicode.cli.frontends.plain.plan_run import plan_command

        session = current.session
        code = await plan_command(text, session, front, said.line,
                                  lambda task: _task(session, task, people, options, front))
    elif text == "/compact":
        code = await _compact(current.session, front, said)
    elif text.split(maxsplit=1)[0] == "/permissions":
        from minicode.cli.frontends.shared.permission_lines import permissions_command

        code = await permissions_command(current.session.permissions, text, said.line, yes=yes)
    else:
        code = await run_pipe_command(text, current, said, reader, yes)
    front.command(text, code, said.lines)
    return code


async def _compact(session: Session, front: Frontend, said: _Said) -> int:
    """``/compact``; 1 when MiniCode.md is broken (reported; later lines still run)."""
    from minicode.errors import MemoryFileError

    try:
        await session.compact(emit=front.emit)
    except MemoryFileError as e:
        said.line(f"minicode: error: {e}")
        return EXIT_FAILURE
    return 0
