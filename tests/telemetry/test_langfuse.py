"""Langfuse export against a local stand-in host: spans arrive; failures are one warning."""

from __future__ import annotations

import base64
import logging
import time

import pytest

from minicode.config import LangfuseConfig
from minicode.telemetry import create_tracer
from minicode.telemetry.langfuse import OTLP_TRACES_PATH
from tests.telemetry.capture import drive_sample_task
from tests.telemetry.conftest import API_KEY
from tests.telemetry.otlp_server import otlp_server, unused_port

PUBLIC_KEY = "pk-lf-public-1234"
SECRET_KEY = "sk-lf-secret-5678-abcdefgh"
SHUTDOWN_BOUND = 8.0
"""Generous upper bound for shutdown() (its own limit is 2 s) on a loaded machine."""

ALL_SPANS = ["minicode.compaction", "minicode.model_call", "minicode.model_call",
             "minicode.tool", "minicode.tool", "minicode.turn"]


@pytest.fixture(autouse=True)
def _no_proxy(monkeypatch: pytest.MonkeyPatch) -> None:
    """The exporter honours proxy variables; the stand-in host is local and must be direct."""
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"):
        monkeypatch.delenv(name, raising=False)


def _config(host: str) -> LangfuseConfig:
    return LangfuseConfig(public_key=PUBLIC_KEY, secret_key=SECRET_KEY, host=host)


def _timed_shutdown(tracer: object) -> float:
    started = time.monotonic()
    tracer.shutdown()  # type: ignore[attr-defined]
    return time.monotonic() - started


def _sdk_records(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.name.startswith(("opentelemetry", "langfuse"))]


def test_spans_arrive_at_the_otlp_path_with_basic_auth(caplog: pytest.LogCaptureFixture) -> None:
    warnings: list[str] = []
    with otlp_server() as server:
        tracer = create_tracer(_config(server.url + "/"), warn=warnings.append, secrets=[API_KEY])
        drive_sample_task(tracer)
        tracer.shutdown()
    assert warnings == []
    assert server.posts, "no export reached the server"
    post = server.posts[0]
    assert post.path == OTLP_TRACES_PATH
    expected = base64.b64encode(f"{PUBLIC_KEY}:{SECRET_KEY}".encode()).decode()
    assert post.headers["authorization"] == f"Basic {expected}"
    assert post.headers["x-langfuse-ingestion-version"] == "4"
    assert post.headers["content-encoding"] == "gzip"
    assert sorted(server.span_names()) == ALL_SPANS
    bodies = b"".join(p.body for p in server.posts)
    assert b"gen_ai.request.model" in bodies and b"langfuse.observation.usage_details" in bodies
    assert SECRET_KEY.encode() not in bodies and API_KEY.encode() not in bodies
    assert _sdk_records(caplog) == []


def test_resource_names_the_service() -> None:
    with otlp_server() as server:
        tracer = create_tracer(_config(server.url), warn=lambda line: None)
        tracer.start_span("minicode.turn").end()
        tracer.shutdown()
    resource = server.posts[0].request().resource_spans[0].resource
    attrs = {a.key: a.value.string_value for a in resource.attributes}
    assert attrs["service.name"] == "minicode"


def test_dead_host_is_one_warning_and_a_bounded_shutdown(
    caplog: pytest.LogCaptureFixture, capfd: pytest.CaptureFixture[str]
) -> None:
    caplog.set_level(logging.DEBUG)
    warnings: list[str] = []
    host = f"http://127.0.0.1:{unused_port()}"
    tracer = create_tracer(_config(host), warn=warnings.append, secrets=[API_KEY])
    drive_sample_task(tracer)  # must neither raise nor wait for the host
    assert _timed_shutdown(tracer) < SHUTDOWN_BOUND
    assert warnings == [
        f"minicode: warning: trace export to {host} failed (connection refused); "
        "continuing without it"
    ]
    assert SECRET_KEY not in warnings[0]
    assert _sdk_records(caplog) == []
    assert capfd.readouterr().err == ""


def test_host_dying_mid_session_still_warns_only_once() -> None:
    warnings: list[str] = []
    tracer = create_tracer(_config(f"http://127.0.0.1:{unused_port()}"), warn=warnings.append)
    drive_sample_task(tracer)
    deadline = time.monotonic() + 20
    while not warnings and time.monotonic() < deadline:  # the background batch fails first
        time.sleep(0.05)
    assert len(warnings) == 1
    drive_sample_task(tracer)  # later spans are dropped silently
    assert _timed_shutdown(tracer) < SHUTDOWN_BOUND
    assert len(warnings) == 1


def test_rejected_keys_are_one_warning_naming_the_status() -> None:
    warnings: list[str] = []
    with otlp_server(status=401) as server:
        tracer = create_tracer(_config(server.url), warn=warnings.append)
        drive_sample_task(tracer)
        tracer.shutdown()
    assert len(server.posts) == 1  # a 401 is not retried
    assert len(warnings) == 1 and "failed (HTTP 401)" in warnings[0]


def test_hanging_host_does_not_hold_up_shutdown() -> None:
    warnings: list[str] = []
    with otlp_server(hang=True) as server:
        tracer = create_tracer(_config(server.url), warn=warnings.append)
        drive_sample_task(tracer)
        assert _timed_shutdown(tracer) < SHUTDOWN_BOUND
        assert server.received.is_set()
    assert len(warnings) == 1 and "failed (no answer within 2 s)" in warnings[0]


def test_warning_shows_no_credentials_from_the_host_url() -> None:
    warnings: list[str] = []
    port = unused_port()
    tracer = create_tracer(_config(f"http://user:{SECRET_KEY}@127.0.0.1:{port}/base"),
                           warn=warnings.append)
    tracer.start_span("minicode.turn").end()
    tracer.shutdown()
    assert warnings == [
        f"minicode: warning: trace export to http://127.0.0.1:{port} failed "
        "(connection refused); continuing without it"
    ]


def test_a_failing_warn_callback_breaks_nothing() -> None:
    calls: list[str] = []

    def broken_warn(line: str) -> None:
        calls.append(line)
        raise BrokenPipeError("stderr is gone")

    with otlp_server(hang=True) as server:
        tracer = create_tracer(_config(server.url), warn=broken_warn)
        drive_sample_task(tracer)
        tracer.shutdown()  # the report runs here, in the caller's thread, and must not raise
    assert len(calls) == 1
