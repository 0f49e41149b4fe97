"""minicode's slash commands as ACP available commands, run when a prompt is one of them.

The editor lists them (``available_commands_update``) and sends one as a prompt
("/compact"); it runs without a model call and what it says comes back as the answer.
/undo asks in the editor before it restores files (a permission request of its own).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Awaitable, Callable

from acp.schema import AvailableCommand, AvailableCommandInput, UnstructuredCommandInput

from minicode.agent.events import AgentEvent
from minicode.errors import MemoryFileError, SessionError

if TYPE_CHECKING:
    from minicode.session.session import Session

__all__ = ["COMMANDS", "available_commands", "is_command", "run_command"]

COMMANDS: dict[str, tuple[str, str]] = {
    "compact": ("summarise the conversation so far to free context", ""),
    "undo": ("put back the files the last task changed (asks first)", ""),
    "model": ("show or switch the model for the rest of the session", "model name"),
    "think": ("show or switch the thinking level (off|low|medium|high|max)", "level"),
    "check": ("list, add or clear the acceptance checks run when a task is done", "command | --clear"),
    "permissions": ("list the permission rules in effect, or remove one", "remove RULE"),
    "skills": ("list the skills found for this session and what was skipped", ""),
}
"""name -> (description, hint of its argument; "" = none)."""

Say = Callable[[str], None]
Confirm = Callable[[str], Awaitable[bool]]


def available_commands() -> list[AvailableCommand]:
    return [AvailableCommand(name=name, description=description,
                             input=AvailableCommandInput(root=UnstructuredCommandInput(hint=hint)) if hint else None)
            for name, (description, hint) in COMMANDS.items()]


def is_command(text: str) -> bool:
    """A prompt that is one of the commands: "/name" or "/name argument"."""
    word = text.strip().split(maxsplit=1)[0] if text.strip() else ""
    return word.startswith("/") and word[1:] in COMMANDS


async def run_command(text: str, session: Session, say: Say, confirm: Confirm,
                      emit: Callable[[AgentEvent], None], yes: bool) -> None:
    """Run one command line; every outcome, failures included, is said through ``say``."""
    name, _, argument = text.strip().partition(" ")
    name, argument = name[1:], argument.strip()
    try:
        if name == "compact":
            await session.compact(emit=emit)
        elif name == "undo":
            await _undo(session, say, confirm)
        elif name == "model":
            if argument:
                await session.set_model(argument)
            say(f"model {session.model}" + ("" if argument else " (change it with /model NAME)"))
        elif name == "think":
            if argument:
                await session.set_thinking(argument)
            say(f"thinking {session.thinking or 'not sent'}" + ("" if argument else " (change it with /think LEVEL)"))
        elif name == "skills":
            from minicode.cli.frontends.shared.skill_lines import skill_lines

            say("\n".join(line.removeprefix("minicode: ") for line in skill_lines(session.skills)))
        elif name == "check":
            from minicode.cli.frontends.shared.check_edit import edit_checks

            done, said = edit_checks(session.checks, argument)
            say(said if done else f"error: {said}")
        else:
            from minicode.cli.frontends.shared.permission_lines import permissions_command

            await permissions_command(session.permissions, text.strip(),
                                      lambda line: say(line.removeprefix("minicode: ")), yes=yes)
    except (SessionError, MemoryFileError) as e:
        say(f"error: {e}")


async def _undo(session: Session, say: Say, confirm: Confirm) -> None:
    from minicode.cli.frontends.shared.undo_text import plan_lines, result_lines
    from minicode.session.undo import Nothing

    plan = await session.plan_undo()
    if isinstance(plan, Nothing):
        say(plan.reason)
        return
    lines = plan_lines(plan)
    say("\n".join(lines))
    if not plan.actionable:
        say(await session.pass_over(plan))
        return
    if not await confirm("restore these files"):
        say("nothing was restored")
        return
    result = await session.undo(plan)
    say("\n".join(result_lines(result)))
