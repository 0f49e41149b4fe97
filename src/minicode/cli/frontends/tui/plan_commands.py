"""/plan in the full screen: plan mode entered, and the plan accepted or rejected.

``/plan`` enters plan mode (the status bar says PLAN; the model gets read-only tools and
proposes its plan as a task list); ``/plan TASK`` enters it and sends TASK as the first
planning message. While planning, any message is feedback on the plan (the user's edits go
back to the model); ``/plan accept`` switches to acting and tells the model to carry the plan
out, in the same task; ``/plan reject`` goes back to acting with the list dropped. Each runs
as the controller's task (``launch``), so nothing else starts meanwhile.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from minicode.errors import MinicodeError

if TYPE_CHECKING:
    from minicode.cli.frontends.tui.controller import Controller

__all__ = ["plan"]

USAGE = "/plan [TASK] plans first; /plan accept acts on the plan, /plan reject drops it"


def plan(c: Controller, argument: str) -> None:
    word = argument.lower()
    if word == "accept":
        c.launch(_accept(c), "turn")
    elif word == "reject":
        c.launch(_reject(c), "plan")
    elif c.session.mode == "plan" and not argument:
        c.transcript.note(f"planning ({c.session.todo.summary}) · {USAGE}", "class:notice", "· ")
    else:
        c.launch(_enter(c, argument), "turn" if argument else "plan")


async def _enter(c: Controller, task: str) -> None:
    try:
        await c.session.enter_plan(c.on_event)
    except MinicodeError as e:
        c.notice(str(e))
        return
    if task:
        await c.session.turn(task, approver=c.approver, emit=c.on_event, max_turns=c.max_turns, timeout=c.timeout)


async def _accept(c: Controller) -> None:
    try:
        text = await c.session.accept_plan(c.on_event)
    except MinicodeError as e:
        c.notice(str(e))
        return
    await c.session.turn(text, approver=c.approver, emit=c.on_event, max_turns=c.max_turns, timeout=c.timeout)


async def _reject(c: Controller) -> None:
    try:
        await c.session.reject_plan(c.on_event)
    except MinicodeError as e:
        c.notice(str(e))
