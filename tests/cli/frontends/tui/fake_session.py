"""A scripted stand-in for ``minicode.session.Session`` (the API the TUI uses)."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Mapping

from minicode.agent.asking import Answer, Asker, Question
from minicode.agent.approval import Approval, ApprovalRequest, Approver
from minicode.agent.deps import ToolOutcome
from minicode.agent.events import (
    AgentEvent,
    AssistantDone,
    CompactionDone,
    QuestionResolved,
    TaskStatus,
    ModeChanged,
    TextChunk,
    TodoUpdated,
    ToolFinished,
    ToolStarted,
    TurnFinished,
    TurnStarted,
)
from minicode.agent.stats import TaskStats
from minicode.permissions.store import PermissionStore
from minicode.session.notes import RewindPoint
from minicode.session.undo import PASSED_OVER, Nothing, UndoPlan, UndoResult
from minicode.provider.types import Message
from minicode.tools.todo_list import TodoList


@dataclass
class Step:
    """One scripted thing a turn does: emit an event, ask approval, wait for a gate the
    test opens (``gate``), or hang (``sleep``: only ever cut short by a cancel)."""

    event: AgentEvent | None = None
    approval: ApprovalRequest | None = None
    sleep: float = 0.0
    error: Exception | None = None
    gate: asyncio.Event | None = None
    question: Question | None = None


def text_steps(*chunks: str, gate: asyncio.Event | None = None) -> list[Step]:
    """An answer streamed in ``chunks``; with ``gate``, the turn waits for it after the first."""
    steps = []
    for i, chunk in enumerate(chunks):
        steps.append(Step(event=TextChunk(chunk)))
        if gate is not None and i == 0:
            steps.append(Step(gate=gate))
    steps.append(Step(event=AssistantDone("".join(chunks), "", 0)))
    return steps


def held(gate: asyncio.Event, text: str = "working") -> list[Step]:
    """A turn that streams ``text`` and then runs until the test opens ``gate``."""
    return [Step(event=TextChunk(text)), Step(gate=gate), Step(event=AssistantDone(text, "", 0))]


def approval_steps(tool: str = "write", target: str = "a.txt", detail: str = "12 bytes",
                   body: str = "", rule: str | None = None, call_id: str = "call_1") -> list[Step]:
    request = ApprovalRequest(call_id, tool, target, detail, {"path": target}, body, suggested_rule=rule)
    return [Step(event=ToolStarted(call_id, tool, target, detail, body)), Step(approval=request)]


def question_steps(text: str = "Which database?", options: tuple[str, ...] = ("Postgres", "SQLite"),
                   call_id: str = "call_q") -> list[Step]:
    """An ``ask_user`` call: its tool line, then the question put to the turn's asker."""
    return [Step(event=ToolStarted(call_id, "ask_user", "", text)), Step(question=Question(call_id, text, options))]


@dataclass
class FakeSession:
    id: str = "0b7e1c2a-1111-4222-8333-444455556666"
    workspace: Path = Path("/tmp/ws")
    model: str = "fake-model"
    warnings: list[str] = field(default_factory=list)
    resume_command: str = "minicode --session 0b7e1c2a-1111-4222-8333-444455556666"
    messages: list[Message] = field(default_factory=list)
    outcomes: dict[str, ToolOutcome] = field(default_factory=dict)
    scripts: list[list[Step]] = field(default_factory=list)
    turns: list[str] = field(default_factory=list)
    approvals: list[Approval] = field(default_factory=list)
    answers: list[Answer] = field(default_factory=list)
    interrupted: int = 0
    winding_down: asyncio.Event | None = None
    """Set: a cancelled turn waits for it before it ends (a slow stop); a second cancel ends it."""
    compactions: int = 0
    closed: bool = False
    is_new: bool = False
    checks: list[str] = field(default_factory=list)
    permissions: PermissionStore = field(default_factory=lambda: PermissionStore(Path("/nonexistent/ws"), ()))
    project_files: tuple[str, ...] = ()
    thinking: str | None = None
    undo_plans: list[UndoPlan | Nothing] = field(default_factory=list)
    undone: list[UndoPlan] = field(default_factory=list)
    undo_gate: asyncio.Event | None = None  # set: /undo's restore waits for it
    passed_over: list[UndoPlan] = field(default_factory=list)
    rewound: list[tuple[int, UndoPlan | None]] = field(default_factory=list)
    rewind_plan: UndoPlan | Nothing = Nothing("no file was changed by write or edit since that point.")
    notes: list[str] = field(default_factory=list)
    todo: TodoList = field(default_factory=TodoList)
    mode: str = "act"

    @property
    def is_empty(self) -> bool:
        return not self.messages and not self.turns

    async def turn(self, user_text: str, *, approver: Approver,
                   emit: Callable[[AgentEvent], None], max_turns: int = 500,
                   timeout: float | None = None, asker: Asker | None = None) -> TurnFinished:
        self.turns.append(user_text)
        emit(TurnStarted(user_text))
        steps = self.scripts.pop(0) if self.scripts else text_steps("ok")
        text = ""
        try:
            for step in steps:
                if step.sleep:
                    await asyncio.sleep(step.sleep)
                if step.gate is not None:
                    await step.gate.wait()
                if step.error is not None:
                    raise step.error
                if step.event is not None:
                    if isinstance(step.event, TodoUpdated):  # like a todo call: the session keeps it
                        self.todo = step.event.todo
                    emit(step.event)
                    if isinstance(step.event, TextChunk):
                        text += step.event.text
                if step.approval is not None:
                    answer = await approver.approve(step.approval)
                    self.approvals.append(answer)
                    emit(ToolFinished(step.approval.call_id, step.approval.tool, not answer.allowed,
                                      "denied by the user" if not answer.allowed else "ok",
                                      None, 0.1, denied=not answer.allowed))
                if step.question is not None:
                    assert asker is not None, "the UI gives every turn its asker"
                    said = await asker.ask(step.question)
                    self.answers.append(said)
                    q = step.question
                    emit(QuestionResolved(q.call_id, q.text, q.options, said.kind.value,
                                          said.text if said.answered else ""))
                    emit(ToolFinished(q.call_id, "ask_user", False, said.kind.value, None, 0.1))
        except asyncio.CancelledError:
            self.interrupted += 1
            if self.winding_down is not None:  # like a command that takes a while to stop
                await self.winding_down.wait()
            emit(TurnFinished(TaskStatus.INTERRUPTED, text, TaskStats()))
            raise
        done = TurnFinished(TaskStatus.DONE, text, TaskStats(model_calls=1))
        emit(done)
        return done

    async def compact(self, *, emit: Callable[[AgentEvent], None]) -> None:
        self.compactions += 1
        emit(CompactionDone(180_000, 12_000, 42, manual=True))

    def tool_outcomes(self) -> Mapping[str, ToolOutcome]:
        return self.outcomes

    def context_usage(self) -> tuple[int, int]:
        return (12_000, 100_000)

    context_source = "llama.cpp /props"

    def learn_context_window(self, on_learned: Callable[[], None] | None = None) -> None:
        self.learning = on_learned

    async def aclose(self) -> bool:
        self.closed = True
        return not self.is_empty

    # /undo, /rewind, /model, /think
    async def plan_undo(self) -> UndoPlan | Nothing:
        return self.undo_plans.pop(0) if self.undo_plans else Nothing("nothing to undo: no file changed.")

    async def undo(self, plan: UndoPlan, why: str = "") -> UndoResult:
        if self.undo_gate is not None:
            await self.undo_gate.wait()
        self.undone.append(plan)
        restored = tuple(f.path for f in plan.files if f.action == "restore")
        deleted = tuple(f.path for f in plan.files if f.action == "delete")
        return UndoResult(restored, deleted, tuple((f.path, f.why) for f in plan.files if f.action == "skip"))

    async def pass_over(self, plan: UndoPlan) -> str:
        self.passed_over.append(plan)
        return PASSED_OVER

    def rewind_points(self) -> list[RewindPoint]:
        return [RewindPoint(i, i, m.content or "") for i, m in enumerate(self.messages) if m.role == "user"]

    async def plan_rewind_files(self, index: int) -> UndoPlan | Nothing:
        return self.rewind_plan

    async def rewind(self, index: int, files: UndoPlan | None = None) -> tuple[str, UndoResult | None]:
        text = self.messages[index].content or ""
        del self.messages[index:]
        self.rewound.append((index, files))
        return text, (await self.undo(files) if files is not None else None)

    def note(self, text: str) -> None:
        self.notes.append(text)

    async def set_model(self, name: str) -> None:
        from minicode.errors import SessionError

        if " " in name:
            raise SessionError("cannot switch the model: the model name contains spaces", exit_code=2)
        self.model = name

    async def set_thinking(self, level: str) -> None:
        self.thinking = level

    async def enter_plan(self, emit: Callable[[AgentEvent], None]) -> None:
        self.mode = "plan"
        emit(ModeChanged("plan", "entered"))

    async def accept_plan(self, emit: Callable[[AgentEvent], None]) -> str:
        from minicode.errors import SessionError

        if self.mode != "plan" or not self.todo:
            raise SessionError("there is no plan to accept yet: the model has not proposed a task list")
        self.mode = "act"
        emit(ModeChanged("act", "accepted"))
        return "The user accepted your plan"

    async def reject_plan(self, emit: Callable[[AgentEvent], None]) -> None:
        self.mode = "act"
        before, self.todo = self.todo, TodoList()
        emit(ModeChanged("act", "rejected"))
        emit(TodoUpdated(TodoList(), before))


