"""A provider wrapper that gives every non-streaming ``chat()`` its ``minicode.model_call`` span.

For model calls made outside the agent loop's own instrumented path — the compaction summary
requests, which ``compaction.compact`` sends through the Provider it is handed. Wrap the
provider with the compaction span as ``parent`` and each summary request shows up under it
with the same attributes as a main call (model, request size, usage, latency, finish reason,
error). Pure: no SDK imports; only counts and names go into attributes, never message text.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator

from minicode.provider.base import Provider
from minicode.provider.types import ChatRequest, ChatResponse, StreamEvent
from minicode.telemetry.base import Span, Tracer
from minicode.telemetry.semconv import SPAN_MODEL_CALL

__all__ = ["TracedChat"]


class TracedChat:
    """``chat()`` of ``provider`` inside a model-call span; ``model`` passes through.

    ``stream()`` is passed through untraced: streamed main requests get their span from the
    agent loop, which also forwards their deltas.
    """

    __slots__ = ("_parent", "_provider", "_purpose", "_tracer", "model")

    def __init__(self, provider: Provider, tracer: Tracer, *, parent: Span | None, purpose: str) -> None:
        self._provider = provider
        self._tracer = tracer
        self._parent = parent
        self._purpose = purpose
        self.model = provider.model

    async def chat(self, request: ChatRequest) -> ChatResponse:
        span = self._tracer.start_span(
            SPAN_MODEL_CALL,
            {"model": self._provider.model, "request.messages": len(request.messages), "purpose": self._purpose},
            parent=self._parent,
        )
        started = time.monotonic()
        try:
            response = await self._provider.chat(request)
        except BaseException as e:
            span.record_error(e)
            span.set({"latency_ms": _ms_since(started)})
            span.end()
            raise
        usage = response.usage
        span.set(
            {
                "usage.prompt_tokens": usage.prompt_tokens if usage else None,
                "usage.completion_tokens": usage.completion_tokens if usage else None,
                "usage.total_tokens": usage.total_tokens if usage else None,
                "latency_ms": _ms_since(started),
                "finish_reason": response.finish_reason,
            }
        )
        span.end()
        return response

    def stream(self, request: ChatRequest) -> AsyncIterator[StreamEvent]:
        return self._provider.stream(request)

    async def aclose(self) -> None:
        """Not this wrapper's to do: the provider belongs to whoever wrapped it."""


def _ms_since(started: float) -> float:
    return round((time.monotonic() - started) * 1000, 1)
