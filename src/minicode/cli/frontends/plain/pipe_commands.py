"""The commands a pipe-mode stdin line may be instead of a task: ``/undo``, ``/new``,
``/model NAME``, ``/think LEVEL``, ``/check [CMD|--clear]``, ``/skills`` (``/compact`` and ``/permissions``
are the driver's own). None calls the model; each says what it did on stderr. A line whose
first word is a near miss of a command (``/compcat``, ``/undoo``) or a command of the full
screen alone (``/exit``, ``/help``, ``/rewind`` …) is refused with what to do instead, exit 1 —
never sent to the model as a task; other lines starting with "/" (a path) are tasks.

``/undo`` shows what it would put back and asks first. Without a terminal there is nobody to
ask: it restores only with ``--yes``, and otherwise says so and restores nothing. ``/new``
closes the session (it stays resumable; the resume command is printed) and opens a fresh one.
No prompt_toolkit, no rich.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Awaitable, Callable, Protocol

from minicode.cli.frontends.plain.first_task import FULL_SCREEN_ONLY, KNOWN, PIPE_COMMANDS, is_pipe_command
from minicode.cli.frontends.shared.near_miss import nearest
from minicode.cli.frontends.plain.line_reader import LineReader
from minicode.exitcodes import EXIT_FAILURE, EXIT_OK

if TYPE_CHECKING:
    from minicode.session.session import Session

__all__ = ["PIPE_COMMANDS", "Current", "Lines", "is_pipe_command", "run_pipe_command"]



class Lines(Protocol):
    """Where the commands talk: one human status line on stderr each."""

    def line(self, text: str) -> None: ...

    def opened(self, session: Session) -> None: ...


class Current:
    """The session the pipe is talking to (``/new`` replaces it) and how to open a fresh one."""

    def __init__(self, session: Session, open_new: Callable[[], Awaitable[Session]]) -> None:
        self.session = session
        self.open_new = open_new


async def run_pipe_command(text: str, current: Current, out: Lines, reader: LineReader, yes: bool) -> int:
    """Run one command line; returns its exit code (0 or 1)."""
    from minicode.errors import SessionError

    name, _, argument = text.strip().partition(" ")
    argument = argument.strip()
    if name not in PIPE_COMMANDS:
        out.line(f"minicode: error: {_not_here(name)} (the line was not sent to the model)")
        return EXIT_FAILURE
    if name == "/skills":
        return _skills(current.session, argument, out)
    if name == "/check":
        from minicode.cli.frontends.shared.check_edit import edit_checks

        done, said = edit_checks(current.session.checks, argument)
        out.line(f"minicode: {said}" if done else f"minicode: error: {said}")
        return EXIT_OK if done else EXIT_FAILURE
    try:
        if name == "/undo":
            return await _undo(current.session, out, reader, yes)
        if name == "/new":
            return await _new(current, out)
        if name == "/model":
            if not argument:
                out.line(f"minicode: model {current.session.model} (change it with /model NAME)")
                return EXIT_OK
            await current.session.set_model(argument)
            out.line(f"minicode: model {current.session.model} for the rest of this session")
            return EXIT_OK
        if not argument:
            out.line(f"minicode: thinking {current.session.thinking or 'not sent'} (change it with /think LEVEL)")
            return EXIT_OK
        await current.session.set_thinking(argument)
        out.line(f"minicode: thinking {current.session.thinking} for the rest of this session")
        return EXIT_OK
    except SessionError as e:
        out.line(f"minicode: error: {e}")
        return EXIT_FAILURE


def _not_here(name: str) -> str:
    """Why a command line that is not a pipe-mode command does nothing here."""
    meant = name if name in FULL_SCREEN_ONLY else nearest(name, (*KNOWN, *FULL_SCREEN_ONLY))
    guess = "" if meant == name else f"unknown command {name} — did you mean {meant}? "
    if meant not in FULL_SCREEN_ONLY:
        return guess.rstrip()
    where = "; in pipe mode the session ends with the input" if meant in ("/exit", "/quit") else \
        " (minicode -c opens the last session there)"
    return f"{guess}{'It' if guess else meant} works in the full screen only{where}"


def _skills(session: Session, argument: str, out: Lines) -> int:
    if argument:
        out.line("minicode: error: /skills takes no argument")
        return EXIT_FAILURE
    from minicode.cli.frontends.shared.shown_call import reveal
    from minicode.cli.frontends.shared.skill_lines import skill_lines

    for line in skill_lines(session.skills):
        out.line(f"minicode: {reveal(line)}")
    return EXIT_OK


async def _undo(session: Session, out: Lines, reader: LineReader, yes: bool) -> int:
    from minicode.cli.frontends.shared.undo_text import plan_lines, result_lines  # loaded by /undo, not by every start
    from minicode.session.undo import Nothing

    plan = await session.plan_undo()
    if isinstance(plan, Nothing):
        out.line(f"minicode: {plan.reason}")
        return EXIT_OK
    for line in plan_lines(plan):
        out.line(f"minicode: {line}")
    if not plan.actionable:
        out.line(f"minicode: {await session.pass_over(plan)}")
        return EXIT_FAILURE if any(f.damaged for f in plan.files) else EXIT_OK
    if not yes:
        if not reader.interactive:
            out.line("minicode: /undo restores files only after a yes: there is no terminal to ask, "
                     "so nothing was restored (run with --yes to restore without asking)")
            return EXIT_FAILURE
        kept = reader.set_aside_typed_ahead()  # lines typed earlier are tasks, not this answer
        out.line("minicode: restore these files? [y/N]"
                 + (f" ({kept} line{'s' if kept > 1 else ''} typed ahead kept as the next task)" if kept else ""))
        answer = await reader.next_answer()
        if answer is None or answer.strip().lower() not in ("y", "yes"):
            out.line("minicode: nothing was restored")
            return EXIT_OK
    result = await session.undo(plan)
    for line in result_lines(result):
        out.line(f"minicode: {line}")
    return EXIT_FAILURE if result.damaged else EXIT_OK


async def _new(current: Current, out: Lines) -> int:
    old = current.session
    current.session = await current.open_new()  # first: if it fails, the old one goes on
    kept = await old.aclose()
    out.opened(current.session)
    if kept:
        out.line(f"minicode: the previous session stays: resume it with {old.resume_command}")
    return EXIT_OK
