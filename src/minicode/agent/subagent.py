"""Sub-agents: the ``agent`` tool's sub-task run by a child loop (docs/subagents.md).

A child gets a fresh context — its own system prompt (``agent.prompt.SUBAGENT_PROMPT``), the
project's instructions and memory as every request has them, and the task; never the
parent's history — the same provider and model, and the read-only tools (``READ_ONLY``: no
write, no bash, no ``agent``: depth 1). It asks nobody: read-only calls need no approval,
and the parent's approver and rules are handed on unchanged all the same. Its limits are the
``[subagents]`` table's: model requests (then one summary request, as for any task), seconds,
and sub-agents per user task (the next call is refused with a message).

Its events reach the frontends as ``SubAgentEvent`` under the ``agent`` call; its report is the
call's result (capped by the registry like any output), with its own calls as ``nested``
lines for the session's record (shown on resume; never sent to the model); its model calls,
tool calls and tokens count into the task's statistics. Cancelling the parent's task cancels
it at once (it runs inside the ``agent`` call), and the parent's result then says what it
had found so far. Imports no HTTP, UI or tracing SDK.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field, replace
from typing import Awaitable, Callable, Mapping, Sequence

from minicode.agent.context import ModelContext
from minicode.agent.deps import SubAgentSetup, ToolOutcome, TurnDeps, TurnScope
from minicode.agent.events import (
    AgentEvent,
    ReasoningChunk,
    SubAgentEvent,
    TaskStatus,
    TextChunk,
    ToolFinished,
    ToolStarted,
    TurnFinished,
)
from minicode.agent.prompt import SUBAGENT_PROMPT
from minicode.agent.stats import TaskStats
from minicode.agent.stopped import is_stopped_note
from minicode.compaction.checkpoint import Checkpoint
from minicode.provider.types import Message
from minicode.telemetry.base import AttributeValue, Span, Tracer
from minicode.tools.base import Delegate, ToolResult
from minicode.tools.registry import DeferredTool, ToolRegistry
from minicode.tools.specs import READ_ONLY

__all__ = ["NESTED_MAX_LINES", "RunTurn", "delegation"]

NESTED_MAX_LINES = 30
"""The child's calls kept as lines under the ``agent`` call (the last line counts the rest)."""
_LINE_CHARS = 120
_FOUND_CHARS = 4000  # "what it found so far": its last words, enough to go on with

RunTurn = Callable[..., Awaitable[TurnFinished]]
"""``agent.loop.run_turn``, handed in by the loop (this module must not import it back)."""


def delegation(deps: TurnDeps, scope: TurnScope, run: RunTurn) -> Callable[[str, Callable[[str], None]], Delegate]:
    """For one task: given an ``agent`` call's id and its stop hook (what a stopped call did so
    far), the delegate that runs its sub-task. ``deps.subagents`` must be set."""
    setup = deps.subagents
    assert setup is not None

    def for_call(call_id: str, on_stopped: Callable[[str], None]) -> Delegate:
        async def delegate(task: str) -> ToolResult:
            refusal = _refusal(setup, scope.subagents)
            if refusal is not None:
                return ToolResult(refusal, is_error=True, summary="refused")
            scope.subagents += 1
            child = _Child(deps, scope, setup, call_id, f"agent-{scope.subagents}")
            return await child.run(task, run, on_stopped)

        return delegate

    return for_call


def _refusal(setup: SubAgentSetup, started: int) -> str | None:
    if setup.per_task == 0:
        return "refused: sub-agents are turned off here ([subagents].per_task = 0); do this part yourself"
    if started >= setup.per_task:
        return (f"refused: this task already started its {setup.per_task} sub-agent"
                f"{'' if setup.per_task == 1 else 's'} ([subagents].per_task); do the rest yourself")
    return None


@dataclass(eq=False)
class _Child:
    """One sub-agent: its deps, what it did (for the nested lines and "found so far"), its end."""

    deps: TurnDeps
    scope: TurnScope
    setup: SubAgentSetup
    call_id: str
    agent_id: str
    history: _ChildHistory = field(default_factory=lambda: _ChildHistory())
    lines: list[str] = field(default_factory=list)
    more: int = 0
    _open: dict[str, str] = field(default_factory=dict)  # its call id -> the call's line, while it runs
    finished: TurnFinished | None = None

    async def run(self, task: str, run: RunTurn, on_stopped: Callable[[str], None]) -> ToolResult:
        try:
            finished = await run(self._deps(), task, self._emit, max_turns=self.setup.max_turns,
                                 timeout=self.setup.timeout)
        except asyncio.CancelledError:
            on_stopped(self.found_so_far("the sub-agent was stopped with its task"))
            raise
        finally:
            # counted however it ended (run_turn reports a TurnFinished on every path)
            if self.finished is not None:
                self.scope.stats.add_subagent(self.finished.stats)
        return self.report(finished)

    def _deps(self) -> TurnDeps:
        parent = self.deps
        tools = ToolRegistry([DeferredTool(declared) for declared in READ_ONLY])
        context = ModelContext(
            workspace=parent.tool_ctx.workspace, system=Message.system(SUBAGENT_PROMPT), history=self.history,
            provider=parent.provider, window=self.setup.window, checkpoint=None, save_checkpoint=_kept_in_memory,
        )  # fmt: skip
        # Its own read stamps (what it read is not "read in this session" for the parent's
        # edits), no live-output or stop hooks of the parent's call, and no delegate: depth 1.
        tool_ctx = replace(parent.tool_ctx, stamps={}, on_output=None, on_stopped=None, delegate=None,
                           read_before_write=False, adds_only=False)
        return TurnDeps(
            provider=parent.provider, tools=tools, tool_ctx=tool_ctx, approver=parent.approver,
            history=self.history, context=context, tracer=_Under(parent.tracer, self.scope.span),
            session_allowed=parent.session_allowed, permissions=parent.permissions,
            hooks=None if parent.hooks is None else parent.hooks.for_tools(),  # its calls pass the tool hooks too
            span_attributes={**parent.span_attributes, "agent.id": self.agent_id, "agent.parent_call": self.call_id},
        )  # fmt: skip

    def _emit(self, event: AgentEvent) -> None:
        match event:
            case ToolStarted(call_id=cid):
                self._open[cid] = _call_line(event, str(self.deps.tool_ctx.workspace))
            case ToolFinished(call_id=cid):
                self._add_line(event, self._open.pop(cid, event.name))
            case TurnFinished():
                self.finished = event
            case TextChunk() | ReasoningChunk():
                return  # its streamed words are not shown: the report is the call's result
        self.scope.emit(SubAgentEvent(self.call_id, self.agent_id, event))

    def _add_line(self, event: ToolFinished, line: str) -> None:
        if len(self.lines) >= NESTED_MAX_LINES:
            self.more += 1  # counted on one last line (``nested``)
            return
        mark = "✗" if event.is_error else "✓"
        self.lines.append(f"{mark} {line} — {event.summary or ('failed' if event.is_error else 'done')}")

    @property
    def nested(self) -> tuple[str, ...]:
        """Its calls as lines, the ones that did not fit counted on the last."""
        return (*self.lines, *([f"… and {self.more} more calls"] if self.more else []))

    def report(self, finished: TurnFinished) -> ToolResult:
        """The call's result: the child's report, or why it stopped and what it found so far."""
        nested, calls = self.nested, finished.stats.tool_calls
        done = f"{calls} call{'' if calls == 1 else 's'}"
        match finished.status:
            case TaskStatus.DONE:
                text = finished.final_text.strip() or "(the sub-agent ended without a report)"
                return ToolResult(text, summary=f"reported · {done}", nested=nested)
            case TaskStatus.MAX_TURNS:
                limit = (f"the sub-agent stopped at its limit of {self.setup.max_turns} model requests"
                         " ([subagents].max_turns)")
                if finished.final_text.strip():
                    text = f"{limit}; its summary of what it found:\n{finished.final_text.strip()}"
                else:
                    text = self.found_so_far(f"{limit}; {finished.error or 'it gave no summary'}")
                return ToolResult(text, summary=f"stopped at its limit · {done}", nested=nested)
            case TaskStatus.TIMED_OUT:
                limit = f"the sub-agent was stopped after {self.setup.timeout:g} s ([subagents].timeout)"
                return ToolResult(self.found_so_far(limit), is_error=True, summary=f"timed out · {done}", nested=nested)
            case _:
                why = f"the sub-agent failed: {finished.error or finished.status.value}"
                return ToolResult(self.found_so_far(why), is_error=True, summary="failed", nested=nested)

    def found_so_far(self, why: str) -> str:
        """``why``, then the child's last words and the calls it made: what it had found."""
        parts = [why + "."]
        said = _last_words(self.history.messages)
        if said:
            cut = said if len(said) <= _FOUND_CHARS else said[:_FOUND_CHARS - 1] + "…"
            parts.append(f"What it said last:\n{cut}")
        if self.lines:
            parts.append("The calls it made:\n" + "\n".join(self.nested))
        if len(parts) == 1:
            parts.append("It had found nothing yet.")
        return "\n\n".join(parts)


def _call_line(event: ToolStarted, workspace: str) -> str:
    """A child call on one line, as the full screen names the task's own: tool, target (not
    the workspace itself: every call runs there), detail."""
    target = "" if event.target == workspace else event.target
    text = " ".join(part for part in (event.name, target, event.detail) if part)
    text = " ".join(text.split())  # one line, whatever the model sent
    return text if len(text) <= _LINE_CHARS else text[: _LINE_CHARS - 1] + "…"


def _last_words(messages: Sequence[Message]) -> str:
    """The child's last non-empty answer text (not minicode's stopped note)."""
    for message in reversed(messages):
        if message.role == "assistant" and (message.content or "").strip() and not is_stopped_note(message):
            return (message.content or "").strip()
    return ""


class _ChildHistory:
    """A sub-agent's conversation: in memory only (the session keeps its report and calls,
    never its messages, so a resumed session's context never holds them)."""

    def __init__(self) -> None:
        self._messages: list[Message] = []

    @property
    def messages(self) -> Sequence[Message]:
        return self._messages

    async def append(self, message: Message, outcome: ToolOutcome | None = None) -> None:
        self._messages.append(message)


async def _kept_in_memory(checkpoint: Checkpoint) -> None:
    """A child's compaction checkpoint: its ModelContext keeps it; there is no file to save it in."""


class _Under:
    """A tracer whose spans without a parent go under ``parent`` (the task's turn span): a
    sub-agent's turn shows inside the task that started it."""

    def __init__(self, tracer: Tracer, parent: Span) -> None:
        self._tracer = tracer
        self._parent = parent

    def start_span(self, name: str, attributes: Mapping[str, AttributeValue | None] | None = None,
                   parent: Span | None = None) -> Span:
        return self._tracer.start_span(name, attributes, parent or self._parent)

    def shutdown(self) -> None:
        """The session's tracer is shut down by the session."""
