"""The session commands of the full screen: /resume, /new, /undo, /rewind, /model, /think.

Each handler (an entry of ``commands.COMMANDS``) runs its work as the controller's task, so
nothing else starts meanwhile and Ctrl+C still leaves; where it needs the user's choice it
opens a ``Picker`` (``controller.chooser``) and waits for it. Switching sessions closes the
current one (it stays resumable; the transcript says how) and replays the other.
"""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING

from minicode.cli.session_list import absolute_time, human_size, one_line
from minicode.cli.frontends.tui.picker import Choice, Picker
from minicode.cli.frontends.tui.view import Scroll, Transcript
from minicode.cli.frontends.shared.undo_text import plan_lines, result_lines
from minicode.errors import MinicodeError
from minicode.session.catalog import SessionInfo, list_sessions, short_ids
from minicode.session.undo import Nothing, UndoPlan, UndoResult

if TYPE_CHECKING:
    from minicode.cli.frontends.tui.controller import Controller
    from minicode.cli.frontends.tui.session_like import SessionLike

__all__ = ["day_group", "model", "new", "resume", "rewind", "session_choices", "skills", "think", "undo"]

_YES = Choice("yes", "yes — restore these files")
_NO = Choice("no", "no — leave them as they are")


def resume(c: Controller, argument: str) -> None:
    """/resume: pick a session of this workspace; /resume ID opens that one (any unique prefix)."""
    c.launch(_switch_to(c, argument) if argument else _pick_session(c), "resume")


def new(c: Controller, _argument: str) -> None:
    """/new: a fresh session; this one stays resumable."""
    c.launch(_switch_to(c, None), "new")


def undo(c: Controller, _argument: str) -> None:
    c.launch(_undo(c), "undo")


def rewind(c: Controller, _argument: str) -> None:
    c.launch(_rewind(c), "rewind")


def mcp(c: Controller, argument: str) -> None:
    """/mcp: the servers' lines (``mcp_client.status``), shown harmlessly (server text is untrusted);
    ``/mcp login NAME``: a server that needs sign-in tries again now (the address is a notice)."""
    from minicode.cli.frontends.shared.shown_call import reveal

    manager = getattr(c.session, "mcp", None)
    if manager is None:
        c.transcript.note("no MCP servers configured ([mcp.servers.NAME] in the config, or --mcp-config PATH; "
                          "docs/mcp.md)", "class:notice", "· ")
        return
    from minicode.mcp_client.status import status_lines

    if argument:
        verb, _, name = argument.partition(" ")
        link = manager.links.get(name.strip()) if verb == "login" else None
        if link is None:
            c.transcript.note(f"usage: /mcp login NAME (the servers: {', '.join(manager.links)})", "class:error", "✗ ")
        elif not link.sign_in():
            c.transcript.note(f"MCP server {link.name} is {link.state.value}: it does not need a sign-in now",
                              "class:notice", "· ")
        else:
            c.transcript.note(f"MCP server {link.name}: signing in (the address follows)", "class:notice", "· ")
        return

    c.transcript.note("\n".join(reveal(line) for line in status_lines(manager)), "class:notice", "· ")


def skills(c: Controller, _argument: str) -> None:
    """/skills: the session's skills and what was skipped, shown harmlessly (skill files are untrusted)."""
    from minicode.cli.frontends.shared.shown_call import reveal
    from minicode.cli.frontends.shared.skill_lines import skill_lines
    from minicode.tools.skills.library import SkillLibrary

    library = getattr(c.session, "skills", None)
    lines = skill_lines(library if isinstance(library, SkillLibrary) else SkillLibrary())
    c.transcript.note("\n".join(reveal(line) for line in lines), "class:notice", "· ")


def model(c: Controller, argument: str) -> None:
    if not argument:
        c.transcript.note(f"model {c.session.model} · /model NAME switches it for the rest of this session",
                          "class:notice", "· ")
        return
    c.launch(_set(c, argument, thinking=False), "model")


def think(c: Controller, argument: str) -> None:
    if not argument:
        level = c.session.thinking or "not sent (the server's default)"
        c.transcript.note(f"thinking {level} · /think off|low|medium|high|max switches it", "class:notice", "· ")
        return
    c.launch(_set(c, argument, thinking=True), "think")


# --- the work --------------------------------------------------------------------------------


async def _set(c: Controller, value: str, *, thinking: bool) -> None:
    try:
        if thinking:
            await c.session.set_thinking(value)
        else:
            await c.session.set_model(value)
    except MinicodeError as e:
        c.notice(str(e))
        return
    what = f"thinking {c.session.thinking}" if thinking else f"model {c.session.model}"
    c.transcript.note(f"{what} for the rest of this session (kept when it is resumed)", "class:notice", "· ")


async def _pick_session(c: Controller) -> None:
    sessions, _skipped = await asyncio.to_thread(list_sessions, c.session.workspace)
    if not sessions:
        c.transcript.note("no saved session with messages in this workspace yet", "class:notice", "· ")
        return
    picker = Picker("resume a session (newest first)", session_choices(sessions, c.session.id, time.time()),
                    empty="no session matches")
    choice = await c.chooser.choose(picker)
    if choice is None:
        return
    if choice.key == c.session.id:
        c.transcript.note("that is the session you are in", "class:notice", "· ")
        return
    await _switch_to(c, choice.key)


def session_choices(sessions: list[SessionInfo], current: str, now: float) -> list[Choice]:
    """One row per session: its first message, then short id, time, messages and size;
    grouped by the day of its last activity."""
    short = short_ids([s.id for s in sessions])
    out = []
    for s in sessions:
        then = s.modified_ns / 1e9
        here = " · this session" if s.id == current else ""
        detail = f"{short[s.id]} · {absolute_time(then)[11:]} · {s.messages:,} msgs · {human_size(s.size)}{here}"
        out.append(Choice(s.id, one_line(s.first_message) or "(no text)", detail, day_group(then, now), s.id))
    return out


def day_group(then: float, now: float) -> str:
    day, today = time.localtime(then), time.localtime(now)
    if (day.tm_year, day.tm_yday) == (today.tm_year, today.tm_yday):
        return "Today"
    yesterday = time.localtime(now - 86400)
    if (day.tm_year, day.tm_yday) == (yesterday.tm_year, yesterday.tm_yday):
        return "Yesterday"
    return time.strftime("%a %Y-%m-%d", day)


async def _switch_to(c: Controller, session_id: str | None) -> None:
    """Open ``session_id`` (None: a new session), close the current one, show the new one."""
    if c.open_session is None:
        c.notice("switching sessions is not available here")
        return
    old = c.session
    try:
        opened = await c.open_session(session_id)
    except MinicodeError as e:
        c.notice(str(e))
        return
    kept = await old.aclose()
    adopt(c, opened)
    if kept:
        c.transcript.note(f"the previous session {old.id[:8]} stays: /resume {old.id[:8]} or "
                          f"{old.resume_command}", "class:notice", "· ")


def adopt(c: Controller, session: SessionLike) -> None:
    """Show ``session`` from the top: a fresh transcript with its history replayed."""
    c.session = session
    c.tui_approver.forget_session_grants()
    c.transcript = Transcript(c.transcript.md, str(session.workspace))
    c.scroll = Scroll()
    c.total_lines = 0
    c.start()


async def _undo(c: Controller) -> None:
    try:
        plan = await c.session.plan_undo()
    except MinicodeError as e:
        c.notice(f"/undo: {e}")
        return
    if isinstance(plan, Nothing):
        c.transcript.note(plan.reason, "class:notice", "· ")
        return
    c.transcript.note("\n".join(plan_lines(plan)), "class:notice", "↶ ")
    if not plan.actionable:
        c.transcript.note(await c.session.pass_over(plan), "class:notice", "· ")
        return
    try:
        choice = await c.chooser.choose(Picker("restore these files?", [_YES, _NO], question=True,
                                               hint="↑↓ move · Enter answers · Esc: no · typing never answers"))
    except asyncio.CancelledError:  # Ctrl+C at the question: as Esc, and said as Esc says it
        c.transcript.note("nothing was restored", "class:notice", "· ")
        raise
    if choice is None or choice.key != "yes":
        c.transcript.note("nothing was restored", "class:notice", "· ")
        return
    restoring = asyncio.ensure_future(c.session.undo(plan))
    try:
        result = await asyncio.shield(restoring)
    except asyncio.CancelledError:  # a restore under way is not stopped half way: say what it did
        _show_result(c, await restoring)
        raise
    _show_result(c, result)


def _show_result(c: Controller, result: UndoResult) -> None:
    style = "class:error" if result.damaged else "class:notice"
    c.transcript.note("\n".join(result_lines(result)), style, "✗ " if result.damaged else "· ")


async def _rewind(c: Controller) -> None:
    points = c.session.rewind_points()
    if not points:
        c.transcript.note("no message to rewind to yet", "class:notice", "· ")
        return
    count = len(points)
    choices = [Choice(str(p.index), p.text or "(empty)", f"message {n} of {count}")
               for n, p in reversed(list(enumerate(points, start=1)))]
    picked = await c.chooser.choose(Picker("rewind to before which message? (newest first)", choices,
                                           empty="no message matches"))
    if picked is None:
        return
    index = int(picked.key)
    try:
        plan = await c.session.plan_rewind_files(index)
    except MinicodeError as e:
        c.notice(f"/rewind: {e}")
        return
    files = await _ask_files(c, plan)
    if files == "cancel":
        return
    try:
        text, result = await c.session.rewind(index, files if isinstance(files, UndoPlan) else None)
    except MinicodeError as e:
        c.notice(f"/rewind: {e}")
        return
    if isinstance(plan, UndoPlan) and plan.actionable and files == "keep":
        kept = ", ".join(f.path for f in plan.actionable)
        c.session.note(f"the conversation was rewound to an earlier message; the files changed after that "
                       f"point were kept as they are: {kept}. Re-read a file before relying on or editing it.")
    adopt(c, c.session)
    c.transcript.note(f"rewound: the conversation continues from before “{_short(text)}”; "
                      "the message is back in the draft", "class:notice", "↶ ")
    if result is not None:
        _show_result(c, result)
    typed = c.draft.text
    c.draft.text = text + (f"\n\n{typed}" if typed.strip() else "")
    c.draft.cursor_position = len(text)


async def _ask_files(c: Controller, plan: UndoPlan | Nothing) -> UndoPlan | str:
    """The files to restore with a rewind, "keep" (conversation only) or "cancel"."""
    if isinstance(plan, Nothing) or not plan.actionable:
        return "keep"
    c.transcript.note("\n".join(plan_lines(plan, "the files changed since that message")), "class:notice", "↶ ")
    choices = [Choice("restore", "rewind and restore these files"), Choice("keep", "rewind the conversation only"),
               Choice("cancel", "cancel")]
    try:
        choice = await c.chooser.choose(Picker("files were changed since that message", choices, question=True,
                                               hint="↑↓ move · Enter answers · Esc cancel · typing never answers"))
    except asyncio.CancelledError:  # Ctrl+C at the question: as Esc
        c.transcript.note("rewind cancelled", "class:notice", "· ")
        raise
    if choice is None or choice.key == "cancel":
        c.transcript.note("rewind cancelled", "class:notice", "· ")
        return "cancel"
    return plan if choice.key == "restore" else "keep"


def _short(text: str) -> str:
    line = " ".join(text.split())
    return line if len(line) <= 60 else line[:59] + "…"
