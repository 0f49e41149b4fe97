"""The slash commands of the full-screen session: one table, how a submitted line resolves
against it, and the "did you mean" rule for near misses.

``COMMANDS`` is the single list every command lives in (name, one-line help, handler); the
completion menu, ``/help`` and dispatch all read it, so a new command is one entry here plus
its handler (a function of the controller and the text after the name). A line whose first
word is a command runs it; a first word within ``MAX_DISTANCE`` edits of a command's name
(``/exti``), or the start of one (``/ex``), gets "did you mean" and is not sent; any other line — ``/usr/lib is missing`` — is
text for the model. Imports no prompt_toolkit (the completer lives in ``completion.py``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable

from minicode.cli.frontends.shared.near_miss import MAX_DISTANCE, edit_distance, nearest

if TYPE_CHECKING:
    from minicode.cli.frontends.tui.controller import Controller

__all__ = [
    "COMMANDS",
    "KEY_HELP",
    "MAX_DISTANCE",
    "Invocation",
    "NearMiss",
    "SlashCommand",
    "edit_distance",
    "find",
    "help_text",
    "resolve",
]

Handler = Callable[["Controller", str], None]


@dataclass(frozen=True, slots=True)
class SlashCommand:
    """One command. ``run(controller, argument)`` gets the text after the name (stripped)."""

    name: str
    summary: str
    run: Handler
    arguments: str = ""
    """How its argument is written in help ("[ID]"); "" = it takes none (then text after the
    name is refused with a usage line, never silently dropped)."""
    while_busy: bool = False
    """Runs at once while a task runs (/help, /exit); False: queued until the task ends."""
    asks: bool = False
    """Opens a question or a list (/undo, /rewind, /resume): never queued behind a running
    task — it would take the keyboard when the task ends, while the user types."""


def _help(c: Controller, _arg: str) -> None:
    c.show_help()


def _compact(c: Controller, _arg: str) -> None:
    c.compact()


def _exit(c: Controller, _arg: str) -> None:
    c.leave()


def _check(c: Controller, arg: str) -> None:
    c.edit_checks(arg)


def _session_command(name: str) -> Handler:
    """A handler of ``session_commands`` (imported when first used)."""

    def run(c: Controller, arg: str) -> None:
        from minicode.cli.frontends.tui import session_commands

        getattr(session_commands, name)(c, arg)

    return run


def _permissions(c: Controller, arg: str) -> None:
    from minicode.cli.frontends.tui.permission_commands import permissions_command

    permissions_command(c, arg)


def _plan(c: Controller, arg: str) -> None:
    from minicode.cli.frontends.tui.plan_commands import plan

    plan(c, arg)


COMMANDS: tuple[SlashCommand, ...] = (
    SlashCommand("/help", "keys and commands", _help, while_busy=True),
    SlashCommand("/compact", "summarise older context now", _compact),
    SlashCommand("/check", "acceptance checks: CMD adds one (run when the model says it is done), "
                 "none lists them, --clear removes them", _check, "[CMD|--clear]", while_busy=True),
    SlashCommand("/permissions", "permission rules in effect and their files; remove N takes out "
                 "one saved in this workspace; trust puts a saved-rules file minicode did not write into effect",
                 _permissions, "[remove N|RULE|trust]", while_busy=True),
    SlashCommand("/undo", "put back the files of the newest task that changed any (asks first; again: the task before)",
                 _session_command("undo"), asks=True),
    SlashCommand("/rewind", "continue from before an earlier message of yours (offers to restore files too)",
                 _session_command("rewind"), asks=True),
    SlashCommand("/resume", "switch to another session of this workspace (a list, or ID: any unique start)",
                 _session_command("resume"), "[ID]", asks=True),
    SlashCommand("/new", "start a fresh session (this one stays resumable)", _session_command("new")),
    SlashCommand("/model", "the model for the rest of this session (none: show it)", _session_command("model"),
                 "[NAME]"),
    SlashCommand("/think", "thinking level off|low|medium|high|max for the rest of this session",
                 _session_command("think"), "[LEVEL]"),
    SlashCommand("/plan", "plan first: read-only tools, the model proposes a task list (TASK: the first "
                 "message); accept acts on it, reject drops it; while planning, messages are feedback",
                 _plan, "[TASK|accept|reject]"),
    SlashCommand("/mcp", "MCP servers: state, tool counts, the last error; login NAME: sign in to one (docs/mcp.md)",
                 _session_command("mcp"), "[login NAME]", while_busy=True),
    SlashCommand("/skills", "skills the model can load: where each comes from, what was skipped (docs/skills.md)",
                 _session_command("skills"), while_busy=True),
    SlashCommand("/exit", "leave (the session is saved)", _exit, while_busy=True),
    SlashCommand("/quit", "leave, like /exit", _exit, while_busy=True),
)


KEY_HELP = (
    ("Enter", "send (queued while a task runs)"),
    ("Ctrl+J, Alt+Enter", "newline (also Shift+Enter where the terminal reports it)"),
    ("Esc", "interrupt the task; queued messages return"),
    ("Ctrl+C", "clear the draft (Up brings it back); empty draft: interrupt the task, again: leave"),
    ("Ctrl+D", "leave (on an empty draft)"),
    ("Ctrl+Z", "suspend to the shell (fg comes back; a running task waits)"),
    ("Up, Down", "earlier messages, also of earlier runs (on an empty draft)"),
    ("Ctrl+R", "search earlier messages (again: older; Enter keeps, Esc cancels)"),
    ("PageUp, PageDown, wheel", "scroll"),
    ("End", "follow new output again"),
    ("Home, Ctrl+Home", "jump to the top (Home: with an empty draft)"),
    ("Ctrl+O", "expand or collapse pasted text"),
    ("Ctrl+T", "show the latest reasoning in full (again: collapse)"),
    ("Tab", "complete a /command; with a question waiting: go to its answers (never changes the answer)"),
    ("Up/Down, Enter", "approval, /undo, /rewind: choose an answer, Enter answers (typing never does)"),
    ("1-9, Up/Down, Enter, Esc", "the model's question: highlight a row, Enter answers, Esc declines"),
)
"""The keys /help lists, in order (the bindings themselves are ``keys.KEYMAP``)."""

_COLUMN = 27


def help_text(commands: tuple[SlashCommand, ...] = COMMANDS) -> str:
    """/help: the keys, then every command with its one-line help, in two columns."""
    lines = [f"{keys:<{_COLUMN - 1}} {what}" for keys, what in KEY_HELP]
    for command in commands:
        name = f"{command.name} {command.arguments}".rstrip()
        if len(name) < _COLUMN - 1:
            lines.append(f"{name:<{_COLUMN - 1}} {command.summary}")
        else:  # too long for the column: its help goes under it, in the column
            lines.extend((name, f"{'':<{_COLUMN - 1}} {command.summary}"))
    lines.append("Any other line starting with / is sent to the model as text.")
    return "\n".join(lines)


@dataclass(frozen=True, slots=True)
class Invocation:
    """A line that is a command: which one, and the text after its name."""

    command: SlashCommand
    argument: str


@dataclass(frozen=True, slots=True)
class NearMiss:
    """A line whose first word is almost a command: it is not sent anywhere."""

    typed: str
    suggestion: str

    def message(self) -> str:
        return f"unknown command {self.typed} — did you mean {self.suggestion}?"


def find(name: str, commands: tuple[SlashCommand, ...] = COMMANDS) -> SlashCommand | None:
    return next((c for c in commands if c.name == name), None)


def resolve(text: str, commands: tuple[SlashCommand, ...] = COMMANDS) -> Invocation | NearMiss | None:
    """What a submitted ``text`` is: a command, a near miss of one, or (None) text for the model."""
    stripped = text.strip()
    if not stripped.startswith("/"):
        return None
    word, *rest = stripped.split(None, 1)  # the first word ends at any space or line break
    argument = rest[0].strip() if rest else ""
    command = find(word, commands)
    if command is not None:
        return Invocation(command, argument)
    near = _nearest(word, commands)
    return NearMiss(word, near) if near is not None else None


def _nearest(word: str, commands: tuple[SlashCommand, ...]) -> str | None:
    return nearest(word, (c.name for c in commands))
