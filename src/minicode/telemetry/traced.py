"""The ``minicode.model_call`` span: one way to open and close it, for every model request.

``model_call_span`` / ``finish_model_call`` are used by both kinds of model call: the agent
loop's streamed main requests (which also forward deltas, so they cannot go through a
wrapper) and ``TracedChat``, a provider wrapper for non-streaming ``chat()`` calls made
elsewhere — the compaction summary requests, which ``compaction.compact`` sends through the
Provider it is handed. Either way the span carries the same attributes (model, request size,
purpose, usage, latency, finish reason, error). Pure: no SDK imports; only counts and names
go into attributes, never message text.
"""

from __future__ import annotations

import time
from collections.abc import AsyncGenerator, Sequence

from minicode.provider.base import Provider
from minicode.provider.types import ChatRequest, ChatResponse, Message, StreamEvent
from minicode.telemetry.base import SPAN_MODEL_CALL, Span, Tracer

__all__ = ["TracedChat", "elapsed_ms", "finish_model_call", "model_call_span"]


def model_call_span(
    tracer: Tracer,
    parent: Span | None,
    *,
    model: str,
    messages: Sequence[Message],
    estimated_tokens: int | None = None,
    purpose: str,
) -> Span:
    """Start the span of one model request; end it with :func:`finish_model_call`."""
    return tracer.start_span(
        SPAN_MODEL_CALL,
        {
            "model": model,
            "request.messages": len(messages),
            "request.estimated_tokens": estimated_tokens,
            "purpose": purpose,
        },
        parent=parent,
    )


def finish_model_call(
    span: Span,
    response: ChatResponse | None,
    latency_ms: float,
    error: BaseException | None = None,
) -> None:
    """Record the outcome of a model request (its response, or the error) and end the span."""
    if error is not None:
        span.record_error(error)
    usage = response.usage if response is not None else None
    span.set(
        {
            "usage.prompt_tokens": usage.prompt_tokens if usage else None,
            "usage.completion_tokens": usage.completion_tokens if usage else None,
            "usage.total_tokens": usage.total_tokens if usage else None,
            "latency_ms": latency_ms,
            "finish_reason": response.finish_reason if response is not None else None,
        }
    )
    span.end()


def elapsed_ms(started: float) -> float:
    """Milliseconds since ``started`` (a ``time.monotonic()`` reading), to 0.1 ms."""
    return round((time.monotonic() - started) * 1000, 1)


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
        span = model_call_span(
            self._tracer,
            self._parent,
            model=self._provider.model,
            messages=request.messages,
            purpose=self._purpose,
        )
        started = time.monotonic()
        try:
            response = await self._provider.chat(request)
        except BaseException as e:
            finish_model_call(span, None, elapsed_ms(started), e)
            raise
        finish_model_call(span, response, elapsed_ms(started))
        return response

    def stream(self, request: ChatRequest) -> AsyncGenerator[StreamEvent, None]:
        return self._provider.stream(request)

    async def aclose(self) -> None:
        """Not this wrapper's to do: the provider belongs to whoever wrapped it."""
