"""OTelTracer on the SDK's in-memory exporter: tree, attributes, redaction, errors, shutdown."""

from __future__ import annotations

import json
import threading
import time

from opentelemetry.sdk.trace import ReadableSpan, SpanProcessor, TracerProvider
from opentelemetry.trace import SpanKind, StatusCode

from minicode.errors import APIError
from minicode.telemetry.base import NOOP_TRACER
from minicode.telemetry.otel import OTelTracer, Redactor
from tests.telemetry.capture import TraceCapture, drive_sample_task
from tests.telemetry.conftest import API_KEY


def test_task_span_tree_has_the_right_parents(traced: TraceCapture) -> None:
    drive_sample_task(traced.tracer)
    assert traced.tree() == [
        ("minicode.compaction", "minicode.turn"),
        ("minicode.model_call", "minicode.turn"),
        ("minicode.model_call", "minicode.turn"),
        ("minicode.tool", "minicode.turn"),
        ("minicode.tool", "minicode.turn"),
        ("minicode.turn", None),
    ]
    trace_ids = {s.context.trace_id for s in traced.spans()}
    assert len(trace_ids) == 1


def test_span_attributes_are_present_and_mapped(traced: TraceCapture) -> None:
    drive_sample_task(traced.tracer)
    turn = traced.one("minicode.turn")
    assert turn.attributes is not None
    assert turn.attributes["session.id"] == "s-1"
    assert turn.attributes["status"] == "done"
    assert turn.attributes["tokens.total"] == 2260
    assert turn.attributes["gen_ai.operation.name"] == "invoke_agent"
    assert turn.attributes["langfuse.observation.type"] == "agent"

    first_call = traced.named("minicode.model_call")[0]
    attrs = first_call.attributes or {}
    assert first_call.kind is SpanKind.CLIENT
    assert attrs["model"] == "m-large-2025" and attrs["purpose"] == "main"
    assert attrs["request.estimated_tokens"] == 900 and attrs["latency_ms"] == 812
    assert attrs["gen_ai.request.model"] == "m-large-2025"
    assert attrs["gen_ai.usage.input_tokens"] == 900
    assert attrs["gen_ai.usage.output_tokens"] == 40
    assert tuple(attrs["gen_ai.response.finish_reasons"]) == ("tool_calls",)
    assert attrs["langfuse.observation.type"] == "generation"
    assert attrs["langfuse.observation.model.name"] == "m-large-2025"
    assert json.loads(str(attrs["langfuse.observation.usage_details"])) == {
        "input": 900, "output": 40, "total": 940}

    read, bash = traced.named("minicode.tool")
    assert (read.attributes or {})["gen_ai.tool.name"] == "read"
    assert "exit_code" not in (read.attributes or {})  # None values are skipped
    assert (bash.attributes or {})["exit_code"] == 2
    assert (bash.attributes or {})["langfuse.observation.level"] == "WARNING"

    compaction = traced.one("minicode.compaction").attributes or {}
    assert compaction["trigger"] == "auto" and compaction["tokens_after"] == 1200


def test_manual_compaction_without_parent_is_its_own_root(traced: TraceCapture) -> None:
    span = traced.tracer.start_span("minicode.compaction", {"trigger": "manual"}, parent=None)
    span.end()
    assert traced.tree() == [("minicode.compaction", None)]


def test_a_foreign_parent_span_starts_a_new_trace(traced: TraceCapture) -> None:
    span = traced.tracer.start_span("minicode.tool", {"tool.name": "ls"},
                                    parent=NOOP_TRACER.start_span("x"))
    span.end()
    assert traced.tree() == [("minicode.tool", None)]


def test_attribute_containing_a_secret_is_dropped(traced: TraceCapture) -> None:
    span = traced.tracer.start_span(
        "minicode.turn", {"session.id": "s-2", "model": f"prefix-{API_KEY}"})
    span.set({"status": "done", "leak": f"Authorization: Bearer {API_KEY}",
              f"key-{API_KEY}": 1, "ok": "fine"})
    span.end()
    attrs = traced.one("minicode.turn").attributes or {}
    assert "model" not in attrs and "gen_ai.request.model" not in attrs
    assert "leak" not in attrs
    assert attrs["ok"] == "fine" and attrs["session.id"] == "s-2"
    assert API_KEY not in traced.all_attribute_text()


def test_no_secret_in_any_attribute_of_a_full_task() -> None:
    from tests.telemetry.capture import capture_tracer

    capture = capture_tracer(secrets=["m-large-2025"])  # make an ordinary value a "secret"
    drive_sample_task(capture.tracer)
    assert "m-large-2025" not in capture.all_attribute_text()
    assert capture.named("minicode.model_call")  # the spans themselves still exported


def test_non_primitive_values_are_dropped_not_stringified(traced: TraceCapture) -> None:
    span = traced.tracer.start_span("minicode.tool", {"tool.name": "edit"})
    span.set({"arguments": {"path": "a.py", "new": "secret code"}})  # type: ignore[dict-item]
    span.end()
    assert "arguments" not in (traced.one("minicode.tool").attributes or {})
    assert "secret code" not in traced.all_attribute_text()


def test_record_error_sets_status_type_and_scrubbed_message(traced: TraceCapture) -> None:
    turn = traced.tracer.start_span("minicode.turn", {"session.id": "s"})
    call = traced.tracer.start_span("minicode.model_call", {"model": "m"}, parent=turn)
    call.record_error(APIError(f"401 invalid key {API_KEY}", status=401))
    call.end()
    turn.end()
    span = traced.one("minicode.model_call")
    assert span.status.status_code is StatusCode.ERROR
    assert span.status.description is not None
    assert span.status.description.startswith("APIError: ")
    assert span.status.description.endswith("401 invalid key [redacted]")
    assert (span.attributes or {})["error.type"] == "APIError"
    assert (span.attributes or {})["langfuse.observation.level"] == "ERROR"
    (event,) = span.events
    assert event.name == "exception"
    assert (event.attributes or {})["exception.type"] == "APIError"
    assert API_KEY not in traced.all_attribute_text()
    assert traced.one("minicode.turn").status.status_code is StatusCode.UNSET


def test_end_twice_and_set_after_end_are_ignored(traced: TraceCapture) -> None:
    span = traced.tracer.start_span("minicode.tool", {"tool.name": "ls"})
    span.end()
    span.set({"outcome": "ok"})
    span.record_error(RuntimeError("late"))
    span.end()
    (finished,) = traced.spans()
    assert "outcome" not in (finished.attributes or {})
    assert finished.status.status_code is StatusCode.UNSET


class _StuckProcessor(SpanProcessor):
    """A processor whose shutdown hangs until released, like an export to a dead host."""

    def __init__(self) -> None:
        self.release = threading.Event()

    def on_end(self, span: ReadableSpan) -> None:
        pass

    def shutdown(self) -> None:
        self.release.wait(30)


def test_shutdown_is_bounded_and_reports_the_timeout_once() -> None:
    stuck = _StuckProcessor()
    provider = TracerProvider(shutdown_on_exit=False)
    provider.add_span_processor(stuck)
    timeouts: list[str] = []
    tracer = OTelTracer(provider, shutdown_timeout=0.2,
                        on_shutdown_timeout=lambda: timeouts.append("late"))
    tracer.start_span("minicode.turn").end()
    try:
        started = time.monotonic()
        tracer.shutdown()
        assert time.monotonic() - started < 10  # a hang would take 30 s
        tracer.shutdown()  # idempotent: no second wait, no second report
        assert timeouts == ["late"]
    finally:
        stuck.release.set()


def test_shutdown_in_time_reports_nothing() -> None:
    reports: list[str] = []
    tracer = OTelTracer(TracerProvider(shutdown_on_exit=False),
                        on_shutdown_timeout=lambda: reports.append("late"))
    tracer.start_span("minicode.turn").end()
    tracer.shutdown()
    assert reports == []


def test_redactor_scrubs_longest_secret_first_and_ignores_empty_and_short() -> None:
    redactor = Redactor(["", "abc", "sk-abcdef", "sk-abcdef-ghij"])
    assert redactor.scrub("x sk-abcdef-ghij y sk-abcdef abc") == "x [redacted] y [redacted] abc"
    assert redactor.clean({"a": "plain", "b": None, "c": 3}) == {"a": "plain", "c": 3}
    assert redactor.clean({"k": "has sk-abcdef inside", "sk-abcdef": "v", "ok": "abc"}) == {"ok": "abc"}
