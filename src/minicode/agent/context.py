"""The model context of a session: system prompt, project memory, checkpoint and budget.

Owns the one function that builds what a request carries (system → memory → summary →
kept history), the size estimate with its calibration, and the three compaction entry
points (automatic, manual, overflow recovery), which all call ``compaction.compact``.
Implements ``agent.loop.ContextSource``. I/O only through memory loading and the provider.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Callable, Sequence

from minicode.agent.events import CompactionDone, Notice
from minicode.agent.deps import History, TurnScope
from minicode.compaction.checkpoint import Checkpoint
from minicode.compaction.compact import CompactionFailed, CompactionResult, build_context, compact
from minicode.compaction.trigger import Budget, Calibration, estimate_context, should_compact
from minicode.memory import is_memory_index, load_memory, memory_message
from minicode.provider.base import Provider
from minicode.provider.types import ChatResponse, Message, ToolSpec
from minicode.telemetry.base import Span

__all__ = ["ModelContext"]


class ModelContext:
    """Context building and compaction for one session (``ContextSource`` of the loop)."""

    def __init__(
        self,
        *,
        workspace: Path,
        system: Message,
        history: History,
        provider: Provider,
        budget: Budget,
        checkpoint: Checkpoint | None,
        save_checkpoint: Callable[[Checkpoint], None],
    ) -> None:
        self.workspace = workspace
        self.system = system
        self.history = history
        self.provider = provider
        self.budget = budget
        self.checkpoint = checkpoint
        self.memory: Message | None = None
        self._save_checkpoint = save_checkpoint
        self._calibration: Calibration | None = None
        self._original_task: str | None = None

    # --- building ------------------------------------------------------------------------

    def reload_memory(self) -> None:
        """Read MiniCode.md again; raises MemoryFileError when it breaks the limits."""
        text = load_memory(self.workspace)
        self.memory = memory_message(text) if text else None

    def begin_turn(self) -> None:
        self.reload_memory()

    def original_task(self) -> str | None:
        if self._original_task is None:
            first = next((m for m in self.history.messages if m.role == "user"), None)
            self._original_task = first.content if first is not None else None
        return self._original_task

    def build(self) -> list[Message]:
        """The messages of the next request (the single seam for what the model sees)."""
        return build_context(self.system, self.memory, self.checkpoint, self.history.messages, self.original_task())

    def estimate(self, tools: Sequence[ToolSpec]) -> int:
        return estimate_context(self.build(), tools, self._calibration)

    def request_estimate(self, context: Sequence[Message], tools: Sequence[ToolSpec]) -> int:
        return estimate_context(context, tools, self._calibration)

    def calibrate(self, context: Sequence[Message], tools: Sequence[ToolSpec], response: ChatResponse) -> None:
        usage = response.usage
        if usage is not None and usage.prompt_tokens:
            self._calibration = Calibration.of(context, tools, usage.prompt_tokens)

    # --- compaction ----------------------------------------------------------------------

    async def prepare(self, tools: Sequence[ToolSpec], scope: TurnScope) -> list[Message]:
        context = self.build()
        if should_compact(estimate_context(context, tools, self._calibration), self.budget):
            if await self.compact("auto", tools, scope) is not None:
                context = self.build()
        return context

    async def recover_overflow(self, tools: Sequence[ToolSpec], scope: TurnScope) -> bool:
        return await self.compact("overflow", tools, scope) is not None

    async def compact(self, trigger: str, tools: Sequence[ToolSpec], scope: TurnScope) -> CompactionResult | None:
        """Summarise the older history; None when nothing was (or could be) compacted."""
        span = scope.tracer.start_span("minicode.compaction", {"trigger": trigger}, parent=scope.span)
        started = time.monotonic()
        try:
            result = await compact(
                self.provider,
                self.history.messages,
                self.checkpoint,
                budget=self.budget,
                original_task=self.original_task(),
                tools=tools,
                memory=self.memory,
                system=self.system,
            )
        except CompactionFailed as e:
            for usage in e.usages:
                scope.stats.add_model_call(usage)
            _end(span, started, {"outcome": "failed"}, e)
            scope.emit(Notice(f"compaction failed: {e}; the previous context is kept"))
            return None
        except BaseException as e:
            _end(span, started, {"outcome": "error"}, e)
            raise
        if result is None:
            _end(span, started, {"outcome": "nothing_to_compact"})
            if trigger == "manual":
                scope.emit(Notice("nothing to compact: the history is already within the kept recent part"))
            return None
        self._commit(result, scope, manual=trigger == "manual")
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

    def _commit(self, result: CompactionResult, scope: TurnScope, *, manual: bool) -> None:
        for usage in result.usages:
            scope.stats.add_model_call(usage)
        self._save_checkpoint(result.checkpoint)
        self.checkpoint = result.checkpoint
        self._calibration = None  # the context changed underneath the server's count
        scope.emit(
            CompactionDone(result.tokens_before, result.tokens_after, result.messages_summarised, manual=manual)
        )

    def after_batch(self, written: Sequence[str]) -> None:
        if any(is_memory_index(self.workspace, path) for path in written):
            self.reload_memory()


def _end(span: Span, started: float, attributes: dict[str, str | int], error: BaseException | None = None) -> None:
    if error is not None:
        span.record_error(error)
    span.set({**attributes, "duration_ms": round((time.monotonic() - started) * 1000, 1)})
    span.end()
