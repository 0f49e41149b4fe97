"""The Tracer protocol and the no-op tracer used when tracing is not configured.

Spans are parented explicitly (``parent=``) rather than through context variables, so they
work across the agent loop's async generator and the frontends' tasks alike. Attribute
values must never contain secrets.
"""

from __future__ import annotations

from typing import Any, Mapping, Protocol

__all__ = [
    "NOOP_TRACER",
    "SPAN_COMPACTION",
    "SPAN_MODEL_CALL",
    "SPAN_TOOL",
    "SPAN_TURN",
    "NoopSpan",
    "NoopTracer",
    "Span",
    "Tracer",
]

AttributeValue = str | int | float | bool

# The span names minicode emits: the loop, the context manager and the backends' attribute
# mapping (semconv) must agree on them, so they are defined once, here at the seam.
SPAN_TURN = "minicode.turn"
SPAN_MODEL_CALL = "minicode.model_call"
SPAN_TOOL = "minicode.tool"
SPAN_COMPACTION = "minicode.compaction"


class Span(Protocol):
    def set(self, attributes: Mapping[str, AttributeValue | None]) -> None:
        """Add attributes; ``None`` values are skipped."""

    def record_error(self, error: BaseException) -> None: ...

    def end(self) -> None:
        """End the span; a second call does nothing."""


class Tracer(Protocol):
    """Starts spans. Contract: never raises and never blocks; export happens in the background."""

    def start_span(
        self,
        name: str,
        attributes: Mapping[str, AttributeValue | None] | None = None,
        parent: Span | None = None,
    ) -> Span: ...

    def shutdown(self) -> None:
        """Flush what can be flushed quickly and stop exporting."""


class NoopSpan:
    __slots__ = ()

    def set(self, attributes: Mapping[str, Any]) -> None:
        pass

    def record_error(self, error: BaseException) -> None:
        pass

    def end(self) -> None:
        pass


class NoopTracer:
    __slots__ = ()

    def start_span(
        self,
        name: str,
        attributes: Mapping[str, Any] | None = None,
        parent: Span | None = None,
    ) -> Span:
        return _NOOP_SPAN

    def shutdown(self) -> None:
        pass


_NOOP_SPAN = NoopSpan()
NOOP_TRACER = NoopTracer()
