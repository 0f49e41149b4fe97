"""The model context of a session: system prompt, project memory, checkpoint and budget.

Owns the one function that builds what a request carries (system → project instructions and
memory → summary → kept history), the size estimate with its calibration, and the three compaction entry
points (automatic, manual, overflow recovery), which all call ``compaction.compact``.
Implements ``agent.loop.ContextSource``. I/O only through memory and instructions loading
(``memory``, ``instructions``) and the provider.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, Awaitable, Callable, Sequence

from minicode.agent.events import CompactionDone, Notice
from minicode.agent.deps import History, PreparedContext, TurnScope
from minicode.agent.window import ContextWindow
from minicode.compaction.checkpoint import Checkpoint
from minicode.compaction.context import build_context
from minicode.compaction.prompt import summary_message
from minicode.compaction.trigger import Budget, Calibration, estimate_context, should_compact
from minicode.errors import MinicodeError
from minicode.instructions import ProjectInstructions, project_message
from minicode.memory import MEMORY_FILE, is_memory_index, load_memory
from minicode.provider.base import Provider
from minicode.provider.types import ChatResponse, Message, ToolSpec, Usage
from minicode.telemetry.base import SPAN_COMPACTION, Span
from minicode.telemetry.traced import TracedChat, elapsed_ms
from minicode.tokens import TokenCounter

if TYPE_CHECKING:
    from minicode.compaction.compact import CompactionResult

__all__ = ["SMALLEST_WINDOW", "ContextTooLarge", "ModelContext"]

SMALLEST_WINDOW = 4096
"""No server runs a coding model in less: a request that would not be compacted even in this
window goes out without waiting for the server to say its real one."""


class ContextTooLarge(MinicodeError):
    """The next request cannot fit the model's context window and compaction could not
    make room, so it is not sent (or not retried): the task fails with this message."""


class ModelContext:
    """Context building and compaction for one session (``ContextSource`` of the loop)."""

    def __init__(
        self,
        *,
        workspace: Path,
        system: Message,
        history: History,
        provider: Provider,
        window: ContextWindow,
        checkpoint: Checkpoint | None,
        save_checkpoint: Callable[[Checkpoint], Awaitable[None]],
    ) -> None:
        self.workspace = workspace
        self.system = system
        self.history = history
        self.provider = provider
        self.window = window
        """The context window and where it came from (config, the server, the default)."""
        self._budget = Budget.for_window(window.tokens)
        self.checkpoint = checkpoint
        self.memory: Message | None = None
        """The project message: AGENTS.md/CLAUDE.md instructions and MiniCode.md memory."""
        self.instructions = ProjectInstructions(workspace)
        self._memory_text: str | None = None
        self._save_checkpoint = save_checkpoint
        self._calibration: Calibration | None = None
        self._original_task: str | None = None
        # Per session: memoised message estimates keep repeated budget checks cheap.
        self._counter = TokenCounter()
        self.task_list: Callable[[], str] = lambda: ""
        """The model's task list now, as text ("": none); the session sets it. A compaction keeps it."""
        # the <context-summary> message of the checkpoint in effect, built once (not per request)
        self._summary: tuple[Checkpoint, str | None, Message] | None = None

    @property
    def budget(self) -> Budget:
        """The budget of the window in effect (it changes once when the server answers)."""
        if self._budget.context_window != self.window.tokens:
            self._budget = Budget.for_window(self.window.tokens)
        return self._budget

    # --- building ------------------------------------------------------------------------

    def reload_memory(self) -> None:
        """Read MiniCode.md again; raises MemoryFileError when it breaks the limits. The first
        call also loads the project instructions (later ones: ``refresh_instructions``)."""
        if not self.instructions.loaded:
            self.instructions.refresh()
        self._memory_text = load_memory(self.workspace)
        self._rebuild_project_message()

    def refresh_instructions(self, scope: TurnScope | None = None) -> None:
        """Reload AGENTS.md/CLAUDE.md when it changed, and say so through ``scope``."""
        before = self.instructions.current
        if not self.instructions.refresh():
            return
        self._rebuild_project_message()
        now = self.instructions.current
        if scope is None:
            return
        if self.instructions.warning is not None:
            scope.emit(Notice(self.instructions.warning))
        elif now is not None and now != before:
            scope.emit(Notice(f"project instructions reloaded from {now.name}"))
        elif now is None and before is not None:
            scope.emit(Notice(f"{before.name} is gone: no project instructions any more"))

    def loaded_files(self) -> tuple[str, ...]:
        """The project files the model is given, for the start-up line."""
        files = [f"{self.instructions.current.name} (instructions)"] if self.instructions.current else []
        if self._memory_text:
            files.append(f"{MEMORY_FILE} (memory)")
        return tuple(files)

    def _rebuild_project_message(self) -> None:
        self.memory = project_message(self.instructions.current, self._memory_text)

    def begin_turn(self) -> None:
        self.reload_memory()

    def original_task(self) -> str | None:
        if self._original_task is None:
            self._original_task = _first_user_text(self.history.messages)
        return self._original_task

    def rewound(self, checkpoint: Checkpoint | None) -> None:
        """The history was cut back (a rewind): ``checkpoint`` is the one in effect now, and
        what was learned about the old history (calibration, the original task) is dropped."""
        self.checkpoint = checkpoint
        self._calibration = None
        self._original_task = None

    def build(self) -> list[Message]:
        """The messages of the next request (the single seam for what the model sees)."""
        return build_context(
            self.system, self.memory, self.checkpoint, self.history.messages, self.original_task(),
            summary=self._summary_message(),
        )

    def _summary_message(self) -> Message | None:
        checkpoint = self.checkpoint
        if checkpoint is None:
            return None
        task = self.original_task()
        cached = self._summary
        if cached is None or cached[0] is not checkpoint or cached[1] != task:
            cached = self._summary = (checkpoint, task, summary_message(checkpoint.summary, task, checkpoint.todo))
        return cached[2]

    def estimate(self, tools: Sequence[ToolSpec]) -> int:
        return self._estimate(self.build(), tools)

    def _estimate(self, context: Sequence[Message], tools: Sequence[ToolSpec]) -> int:
        """The larger of the server's count (calibrated, when it fits ``context``) and
        minicode's own estimate: a server that under-reports ``usage.prompt_tokens``, or
        reports nothing, must not let the context grow past the window unnoticed."""
        local = self.local_estimate(tools)
        calibration = self._calibration
        if calibration is None or not calibration.fits(context):
            return local
        return max(local, estimate_context(context, tools, calibration, counter=self._counter))

    def local_estimate(self, tools: Sequence[ToolSpec]) -> int:
        """minicode's own estimate of the next request (``context`` as ``build`` makes it),
        each message and the tools estimated once (the memo): a dict look-up per message."""
        head = (self.system, self.memory, self._summary_message())
        first = self.checkpoint.first_kept if self.checkpoint is not None else 0
        tokens = sum(self._counter.estimate_message(m) for m in head if m is not None)
        tokens += self._counter.estimate_messages(self.history.messages[first:])
        return tokens + self._counter.estimate_tools(tools)

    def calibrate(self, context: Sequence[Message], tools: Sequence[ToolSpec], response: ChatResponse) -> None:
        usage = response.usage
        if usage is not None and usage.prompt_tokens:
            self._calibration = Calibration.of(context, tools, usage.prompt_tokens, counter=self._counter)

    # --- compaction ----------------------------------------------------------------------

    async def prepare(self, tools: Sequence[ToolSpec], scope: TurnScope) -> PreparedContext:
        """The next request's context, compacted first when it is over the budget.

        When compaction cannot bring it down (failed, or nothing left to summarise), the
        request still goes out if it fits the whole window (the reserve is only answer
        room); if even the window is exceeded it is not sent: ``ContextTooLarge``.
        """
        self.refresh_instructions(scope)
        context = self.build()
        estimate = self._estimate(context, tools)
        if self.window.pending and should_compact(estimate, Budget.for_window(SMALLEST_WINDOW)):
            await self._settle_window(scope)  # the decision needs the real window now
        if not should_compact(estimate, self.budget):
            return PreparedContext(context, estimate, self.budget.output_limit)
        from minicode.compaction.compact import CompactionFailed  # the summariser: loaded when first needed

        try:
            result = await self._compact("auto", tools, scope)
        except CompactionFailed as e:
            self._check_window(estimate, f"compaction failed: {e}")
            scope.emit(Notice(f"compaction failed: {e}; the previous context is kept"))
            return PreparedContext(context, estimate, self.budget.output_limit)
        if result is None:
            self._check_window(estimate, "there is nothing left to compact")
            return PreparedContext(context, estimate, self.budget.output_limit)
        context = self.build()
        estimate = self._estimate(context, tools)
        self._check_window(estimate, "even after compaction")
        return PreparedContext(context, estimate, self.budget.output_limit)

    async def _settle_window(self, scope: TurnScope) -> None:
        before = self.window.tokens
        await self.window.settle()
        if self.window.tokens != before:
            scope.emit(Notice(f"context window: {self.window.tokens:,} tokens ({self.window.source})"))

    def _check_window(self, estimate: int, why: str) -> None:
        window = self.budget.context_window
        if estimate > window:
            raise ContextTooLarge(
                f"the next request (about {estimate:,} tokens) does not fit the model's context window"
                f" ({window:,} tokens, {self.window.source}), {why}; it was not sent. The session is saved: resume it with a"
                " larger [model].context_window, or start a new session"
            )

    async def recover_overflow(
        self, tools: Sequence[ToolSpec], scope: TurnScope, error: BaseException | None = None
    ) -> bool:
        """Compact after the server rejected a main request as too large.

        True: a checkpoint was committed and the request may be retried (once). Otherwise
        raises ``ContextTooLarge`` saying why there is no retry (quoting ``error``, the
        server's rejection).
        """
        from minicode.compaction.compact import CompactionFailed

        if self.window.pending:  # the server refused the size: its real window decides what to keep
            await self._settle_window(scope)
        rejected = f"{error}: " if error is not None else ""
        try:
            result = await self._compact("overflow", tools, scope)
        except CompactionFailed as e:
            raise ContextTooLarge(
                f"{rejected}the request does not fit the model's context window and compaction failed: {e}"
            ) from e
        if result is None:
            raise ContextTooLarge(
                f"{rejected}the request does not fit the model's context window and there is nothing"
                " left to compact (the newest messages alone are too large)"
            )
        return True

    async def compact(self, trigger: str, tools: Sequence[ToolSpec], scope: TurnScope) -> CompactionResult | None:
        """Summarise the older history; None when nothing was (or could be) compacted.

        A failure is reported as a ``Notice`` and keeps the previous checkpoint; "nothing to
        compact" is said for a manual compaction only.
        """
        from minicode.compaction.compact import CompactionFailed

        try:
            result = await self._compact(trigger, tools, scope)
        except CompactionFailed as e:
            scope.emit(Notice(f"compaction failed: {e}; the previous context is kept"))
            return None
        if result is None and trigger == "manual":
            scope.emit(Notice("nothing to compact: the history is already within the kept recent part"))
        return result

    async def _compact(self, trigger: str, tools: Sequence[ToolSpec], scope: TurnScope) -> CompactionResult | None:
        """The shared core: commits and returns the result, None when there is nothing to
        compact; raises ``CompactionFailed`` (previous checkpoint kept) or cancellation."""
        from minicode.compaction.compact import CompactionFailed, compact

        span = scope.tracer.start_span(SPAN_COMPACTION, {"trigger": trigger}, parent=scope.span)
        started = time.monotonic()
        # Summary requests get their own model-call spans under this compaction span.
        provider = TracedChat(self.provider, scope.tracer, parent=span, purpose="compaction")
        try:
            result = await compact(
                provider,
                self.history.messages,
                self.checkpoint,
                budget=self.budget,
                original_task=self.original_task(),
                tools=tools,
                memory=self.memory,
                system=self.system,
                counter=self._counter,
                task_list=self.task_list(),
            )
        except CompactionFailed as e:
            _count_calls(scope, e.usages, e.failed_calls)
            _end(span, started, {"outcome": "failed"}, e)
            raise
        except BaseException as e:
            _end(span, started, {"outcome": "error"}, e)
            raise
        if result is None:
            _end(span, started, {"outcome": "nothing_to_compact"})
            return None
        await self._commit(result, scope, manual=trigger == "manual")
        _end(
            span,
            started,
            {
                "tokens_before": result.tokens_before,
                "tokens_after": result.tokens_after,
                "messages_summarised": result.messages_summarised,
                "outcome": "ok",
            },
        )
        return result

    async def _commit(self, result: CompactionResult, scope: TurnScope, *, manual: bool) -> None:
        _count_calls(scope, result.usages, result.failed_calls)
        await self._save_checkpoint(result.checkpoint)
        self.checkpoint = result.checkpoint
        self._calibration = None  # the context changed underneath the server's count
        # The memo holds the messages it estimated: a fresh one lets the summarised ones go.
        self._counter = TokenCounter()
        scope.emit(
            CompactionDone(result.tokens_before, result.tokens_after, result.messages_summarised, manual=manual)
        )

    def after_batch(self, written: Sequence[str]) -> None:
        if any(is_memory_index(self.workspace, path) for path in written):
            self.reload_memory()


def _first_user_text(messages: Sequence[Message]) -> str | None:
    """The first user message's text; a lazily read log (``MessageLog``) is asked by role and
    read without keeping the message (it may lie long before the checkpoint)."""
    user_indexes = getattr(messages, "user_indexes", None)
    peek = getattr(messages, "peek", None)
    if user_indexes is not None and peek is not None:
        indexes = user_indexes()
        return peek(indexes[0]).content if indexes else None
    first = next((m for m in messages if m.role == "user"), None)
    return first.content if first is not None else None


def _count_calls(scope: TurnScope, usages: Sequence[Usage | None], failed_calls: int) -> None:
    """Every summary request counts in the task statistics; one that raised (an overflow
    cured by splitting included) counts like a failed main call, without usage."""
    for usage in usages:
        scope.stats.add_model_call(usage)
    for _ in range(failed_calls):
        scope.stats.add_model_call(None)


def _end(span: Span, started: float, attributes: dict[str, str | int], error: BaseException | None = None) -> None:
    if error is not None:
        span.record_error(error)
    span.set({**attributes, "duration_ms": elapsed_ms(started)})
    span.end()
