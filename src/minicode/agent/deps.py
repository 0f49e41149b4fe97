"""What one turn of the agent loop depends on: the seams the Session fills in.

``History`` (the raw conversation, persisted on append), ``ToolRunner`` (the registry),
``ContextSource`` (model context, memory and compaction; ``PreparedContext`` is what it hands
back), ``PermissionGate`` (the permission rules), ``TurnScope`` (per-turn stats,
event sink and span), ``TurnDeps`` (all of it for one turn) and ``ToolOutcome`` (how a tool
result ended, stored beside it for replay). Data and protocols only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Literal, Mapping, Protocol, Sequence

from minicode.agent.approval import Approver
from minicode.agent.asking import Asker, UnattendedAsker
from minicode.agent.assists import AssistState, TurnFacts
from minicode.agent.events import AgentEvent, CheckResult
from minicode.agent.stats import TaskStats
from dataclasses import dataclass, field
from minicode.provider.base import Provider
from minicode.provider.types import ChatResponse, Message, ToolCall, ToolSpec
from minicode.telemetry.base import Span, Tracer
from minicode.tools.base import Delegate, ToolContext, ToolResult

if TYPE_CHECKING:  # annotations only: the rule checker and the registry's calls load when first used
    from minicode.agent.window import ContextWindow
    from minicode.agent.hook_points import Hooks
    from minicode.permissions.policy import Verdict
    from minicode.tools.registry import PreparedCall

__all__ = [
    "ContextSource",
    "History",
    "OutcomeStatus",
    "PermissionGate",
    "PreparedContext",
    "SubAgentSetup",
    "ToolOutcome",
    "ToolRunner",
    "TurnDeps",
    "TurnScope",
]


OutcomeStatus = Literal["done", "failed", "denied", "interrupted"]


@dataclass(frozen=True, slots=True)
class ToolOutcome:
    """How one tool result ended: kept in the session file beside the result (never sent to
    the model), so a resumed transcript shows each call as it ended. Every field after
    ``exit_code`` is optional: files written before it existed load without it."""

    is_error: bool
    """The call failed, was refused as invalid, denied or interrupted."""
    exit_code: int | None = None
    """bash's exit code; None for other tools and for calls that never ran."""
    status: OutcomeStatus | None = None
    """How it ended, as the live view said it; None in older files (then judged by the text)."""
    duration_seconds: float | None = None
    """How long it ran; None when it never ran (invalid, refused, denied)."""
    summary: str = ""
    """The one-line outcome the live view showed ("exit 0", "2 replacements", "timed out")."""
    diff: str = ""
    """edit/write: the preview shown under the call (the diff, the start of the file)."""
    nested: tuple[str, ...] = ()
    """agent: the sub-agent's own calls, one line each, shown under the call (``agent.subagent``)."""


class History(Protocol):
    """The raw conversation of a session; ``append`` also persists the message."""

    @property
    def messages(self) -> Sequence[Message]: ...

    async def append(self, message: Message, outcome: ToolOutcome | None = None) -> None:
        """Persist (off the event loop) and keep ``message``; ``outcome`` only for tool results.

        When cancelled, the message is kept exactly when it will be in the file."""


class ToolRunner(Protocol):
    """What the loop needs of the tool registry (``tools.registry.ToolRegistry``)."""

    def specs(self) -> Sequence[ToolSpec]: ...

    def prepare(self, call: ToolCall) -> PreparedCall | ToolResult: ...

    async def describe(self, prepared: PreparedCall, ctx: ToolContext) -> PreparedCall:
        """``prepared`` with a preview made against the workspace as it is (a write's diff)."""

    async def check(self, prepared: PreparedCall, ctx: ToolContext) -> ToolResult | None:
        """An error result when the prepared call is bound to fail (asked before approval)."""

    async def execute(self, prepared: PreparedCall, ctx: ToolContext) -> ToolResult: ...


@dataclass(frozen=True, slots=True)
class PreparedContext:
    """The messages of the next request and their estimated prompt tokens (with the tools),
    computed once: the budget check and the model-call span share it."""

    messages: list[Message]
    estimated_tokens: int
    max_tokens: int = 8192
    """The output limit to send with it (``Budget.output_limit``: it fits the window)."""


@dataclass(slots=True, eq=False)
class TurnScope:
    """Per-turn state shared with the context source: stats, the event sink, the turn span;
    ``model_requests`` so far and ``checks``, the latest run of the acceptance checks
    (reported in ``TurnFinished``). Mutable."""

    stats: TaskStats
    emit: Callable[[AgentEvent], None]
    span: Span
    tracer: Tracer
    model_requests: int = 0
    checks: tuple[CheckResult, ...] = ()
    facts: TurnFacts = field(default_factory=lambda: TurnFacts([]))
    """What the tools did, for the small-model assists."""
    subagents: int = 0
    """Sub-agents started in this task (``agent.subagent``: at most ``SubAgentSetup.per_task``)."""
    delegate_for: Callable[[str, Callable[[str], None]], Delegate] | None = None
    """The delegate of an ``agent`` call (by its id and stop hook); None: no sub-agents here."""


class ContextSource(Protocol):
    """Builds the model context (system → memory → summary → kept history) and compacts it."""

    def begin_turn(self) -> None:
        """Reload project memory before the user message is appended (may raise MemoryFileError)."""

    async def prepare(self, tools: Sequence[ToolSpec], scope: TurnScope) -> PreparedContext:
        """The context of the next request and its size estimate; compacts first when it is
        over the budget."""

    def calibrate(self, context: Sequence[Message], tools: Sequence[ToolSpec], response: ChatResponse) -> None:
        """Learn from a main response's usage how large that request really was."""

    async def recover_overflow(
        self, tools: Sequence[ToolSpec], scope: TurnScope, error: BaseException | None = None
    ) -> bool:
        """Compact after a context-overflow ``error``; True when the request may be retried
        (once). May instead raise a MinicodeError saying why it cannot be retried."""

    def after_batch(self, written: Sequence[str]) -> None:
        """Paths written/edited successfully in the last batch (memory reload hook)."""



class PermissionGate(Protocol):
    """The permission rules in effect (``permissions.store.PermissionStore``)."""

    def check(self, tool: str, args: Mapping[str, Any]) -> Verdict:
        """Allowed or denied by a rule, or to be asked. Pure apart from resolving symlinks."""

    def remember(self, rule: str) -> str:
        """Save ``rule`` as an allow rule of this workspace; returns the file it went to.
        Blocking file I/O (call it off the event loop); raises MinicodeError on failure."""


@dataclass(frozen=True, slots=True)
class SubAgentSetup:
    """What the ``agent`` tool's child loops get (``agent.subagent``, the ``[subagents]`` table):
    their limits, and the session's context window (the same model serves them)."""

    max_turns: int
    timeout: float
    per_task: int
    window: ContextWindow


@dataclass(frozen=True, slots=True)
class TurnDeps:
    """Everything one turn needs, handed in by the Session. ``session_allowed`` is the
    session's own set of tools allowed "for the session" (the turn adds to it)."""

    provider: Provider
    tools: ToolRunner
    tool_ctx: ToolContext
    approver: Approver
    history: History
    context: ContextSource
    tracer: Tracer
    session_allowed: set[str]
    permissions: PermissionGate | None = None  # None: no rules, every side effect is asked
    span_attributes: Mapping[str, str] = field(default_factory=dict)
    checks: tuple[str, ...] = ()
    """Acceptance checks run at the final answer (``agent.checks``); empty: none."""
    check_timeout: float = 120.0
    assists: AssistState = field(default_factory=lambda: AssistState("off"))
    """The small-model assists of the session (``agent.assists``); off unless the Session says."""
    subagents: SubAgentSetup | None = None
    """How an ``agent`` call runs its sub-task; None: it cannot (inside a sub-agent: depth 1)."""
    hooks: Hooks | None = None
    """The user's hooks (``agent.hook_points``); None: none configured."""
    asker: Asker = field(default_factory=UnattendedAsker)
    """Who answers ``ask_user`` (``agent.asking``); by default nobody: "no answer" at once."""
    planning: bool = False
    """A plan-mode turn (``agent.plan_mode``): the tools are read-only, no acceptance check runs
    (nothing was changed to check), and no second chance or forced call pushes for a change."""
