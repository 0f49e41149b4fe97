"""Reusable span capture for tests: an OTelTracer on an in-memory exporter.

Use the ``traced`` fixture (tests/telemetry/conftest.py) or call ``capture_tracer()`` directly,
e.g. from an end-to-end test that drives the real agent loop with ``capture.tracer``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from minicode.telemetry.base import Tracer
from minicode.telemetry.otel import OTelTracer


@dataclass(frozen=True)
class TraceCapture:
    tracer: OTelTracer
    exporter: InMemorySpanExporter

    def spans(self) -> list[ReadableSpan]:
        """Finished spans, in the order they ended."""
        return list(self.exporter.get_finished_spans())

    def one(self, name: str) -> ReadableSpan:
        matches = self.named(name)
        assert len(matches) == 1, f"expected one {name!r} span, got {len(matches)}"
        return matches[0]

    def named(self, name: str) -> list[ReadableSpan]:
        return [s for s in self.spans() if s.name == name]

    def parent_of(self, span: ReadableSpan) -> ReadableSpan | None:
        if span.parent is None:
            return None
        by_id = {s.context.span_id: s for s in self.spans()}
        return by_id[span.parent.span_id]

    def tree(self) -> list[tuple[str, str | None]]:
        """(span name, parent span name) for every finished span, sorted."""
        pairs = []
        for span in self.spans():
            parent = self.parent_of(span)
            pairs.append((span.name, parent.name if parent is not None else None))
        return sorted(pairs, key=lambda p: (p[0], p[1] or ""))

    def all_attribute_text(self) -> str:
        """Every exported attribute key and value, events and status included, as one text."""
        parts: list[str] = []
        for span in self.spans():
            parts.append(span.name)
            parts.extend(f"{k}={v!r}" for k, v in (span.attributes or {}).items())
            for event in span.events:
                parts.extend(f"{k}={v!r}" for k, v in (event.attributes or {}).items())
            parts.append(span.status.description or "")
        return "\n".join(parts)


def capture_tracer(secrets: Iterable[str] = ()) -> TraceCapture:
    """An OTelTracer exporting synchronously into memory, on its own TracerProvider."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider(shutdown_on_exit=False)
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return TraceCapture(OTelTracer(provider, secrets=secrets), exporter)


def drive_sample_task(tracer: Tracer) -> None:
    """What the agent loop does for: model call -> 2 tools -> compaction -> model call."""
    turn = tracer.start_span("minicode.turn", {"session.id": "s-1", "model": "m-large-2025"})
    call = tracer.start_span(
        "minicode.model_call",
        {"model": "m-large-2025", "request.messages": 3, "request.estimated_tokens": 900,
         "purpose": "main"},
        parent=turn,
    )
    call.set({"usage.prompt_tokens": 900, "usage.completion_tokens": 40,
              "usage.total_tokens": 940, "latency_ms": 812, "finish_reason": "tool_calls"})
    call.end()
    for call_id, name, outcome, exit_code in (("c1", "read", "ok", None), ("c2", "bash", "error", 2)):
        tool = tracer.start_span("minicode.tool", {"tool.name": name, "tool.call_id": call_id},
                                 parent=turn)
        tool.set({"duration_ms": 5, "outcome": outcome, "exit_code": exit_code})
        tool.end()
    compaction = tracer.start_span("minicode.compaction", {"trigger": "auto"}, parent=turn)
    compaction.set({"tokens_before": 9000, "tokens_after": 1200, "messages_summarised": 12,
                    "outcome": "ok"})
    compaction.end()
    call = tracer.start_span("minicode.model_call", {"model": "m-large-2025", "purpose": "main"},
                             parent=turn)
    call.set({"usage.prompt_tokens": 1300, "usage.completion_tokens": 20,
              "usage.total_tokens": 1320, "finish_reason": "stop"})
    call.end()
    turn.set({"status": "done", "model_calls": 2, "tool_calls": 2, "tokens.total": 2260})
    turn.end()
