"""Plan mode in the pipe and one-shot modes: ``--plan``, and the ``/plan`` command lines.

One-shot ``--plan TASK``: the model plans (read-only tools) and the plan — its task list — is
printed; nothing is acted on and the run exits 0. With ``--yes`` the plan is accepted and the
model acts on it in the same run, under the same approvals as any ``--yes`` run (deny rules
still deny); the run's exit code is then the acting task's. A planning task that proposed no
task list has nothing to accept: said, exit 1 with ``--yes``.

Pipe-mode lines: ``/plan`` (plan from the next line on), ``/plan accept`` (act on the plan: a
task of its own), ``/plan reject`` (back to acting, the list dropped); any other line while
planning is a planning task (a change to the plan, say). No prompt_toolkit, no rich.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Awaitable, Callable, Protocol

from minicode.agent.events import AgentEvent, TaskStatus
from minicode.cli.frontends.shared.plan_lines import PLAN_READY_PIPE
from minicode.exitcodes import EXIT_FAILURE, EXIT_OK

if TYPE_CHECKING:
    from minicode.session.session import Session
    from minicode.tools.todo_list import TodoList

__all__ = ["PLAN_USAGE", "PlanFront", "after_planning", "plan_command"]

PLAN_USAGE = "/plan, /plan accept or /plan reject"
RunTask = Callable[[str], Awaitable[TaskStatus]]


class PlanFront(Protocol):
    def emit(self, event: AgentEvent) -> None: ...

    def line(self, text: str) -> None: ...

    def plan_ready(self, todo: TodoList) -> None:
        """A planning task proposed ``todo`` (the text frontend prints it on stdout)."""


async def after_planning(session: Session, status: TaskStatus, front: PlanFront, yes: bool, run: RunTask) -> int:
    """The end of a one-shot ``--plan`` task: print the plan, and with ``yes`` act on it."""
    if status is not TaskStatus.DONE:
        return status.exit_code
    if not session.todo:
        front.line("minicode: the model proposed no task list" + (": nothing to act on" if yes else ""))
        return EXIT_FAILURE if yes else EXIT_OK
    front.plan_ready(session.todo)
    if not yes:
        front.line(f"minicode: {PLAN_READY_PIPE}")
        return EXIT_OK
    return (await run(await session.accept_plan(front.emit))).exit_code


async def plan_command(text: str, session: Session, front: PlanFront, say: Callable[[str], None],
                       run: RunTask) -> int:
    """One ``/plan`` line; its exit code (an accepted plan: its acting task's)."""
    from minicode.errors import SessionError

    argument = text.split(maxsplit=1)[1].strip().lower() if len(text.split(maxsplit=1)) > 1 else ""
    try:
        if argument == "":
            if session.mode == "plan":
                say(f"minicode: already planning ({session.todo.summary}); {PLAN_USAGE}")
                return EXIT_OK
            await session.enter_plan(front.emit)
            return EXIT_OK
        if argument == "accept":
            status = await run(await session.accept_plan(front.emit))
            return EXIT_OK if status is TaskStatus.DONE else status.exit_code
        if argument == "reject":
            await session.reject_plan(front.emit)
            return EXIT_OK
    except SessionError as e:
        say(f"minicode: error: {e}")
        return EXIT_FAILURE
    say(f"minicode: error: unknown /plan argument {argument!r}: use {PLAN_USAGE}")
    return EXIT_FAILURE
