"""Export of minicode's spans to Langfuse, through the Langfuse SDK's OpenTelemetry processor.

Owns: an isolated TracerProvider (the global one is never set) with Langfuse's span processor
(a batching processor: export runs in a background thread), an OTLP/HTTP exporter posting to
``{host}/api/public/otel/v1/traces`` with basic auth, and the failure policy: the first failed
export becomes exactly one warning line through ``warn`` and export stops for the rest of the
process; the SDKs' own loggers are silenced so nothing else reaches the terminal.

The full ``langfuse.Langfuse`` client is deliberately not used: it starts score and media
threads and an atexit flush with no time bound, none of which minicode needs.

One of only two modules allowed to import opentelemetry/langfuse; imported lazily, only when
a ``[langfuse]`` table is configured.
"""

from __future__ import annotations

import base64
import contextlib
import logging
import threading
from collections.abc import Callable, Iterable, Sequence
from typing import Any
from urllib.parse import urlsplit

import requests
from langfuse import __version__ as langfuse_version
from langfuse._client.span_processor import LangfuseSpanProcessor
from opentelemetry.exporter.otlp.proto.http import Compression
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

from minicode import __version__
from minicode.config import LangfuseConfig
from minicode.telemetry.base import Tracer
from minicode.telemetry.otel import DEFAULT_SHUTDOWN_TIMEOUT, OTelTracer, Redactor

__all__ = ["EXPORT_TIMEOUT", "OTLP_TRACES_PATH", "create_langfuse_tracer"]

OTLP_TRACES_PATH = "/api/public/otel/v1/traces"
EXPORT_TIMEOUT = 5.0
"""Seconds one export (retries included) may take; it runs in the background."""
FLUSH_INTERVAL = 1.0
"""Seconds between background batches, so a trace shows up in Langfuse while a session runs."""
BATCH_SIZE = 256
"""Spans per export request (set explicitly so no LANGFUSE_* variable changes it)."""
_SILENCED_LOGGERS = ("opentelemetry", "langfuse")


def create_langfuse_tracer(
    cfg: LangfuseConfig,
    *,
    warn: Callable[[str], None],
    secrets: Iterable[str] = (),
) -> Tracer:
    """A tracer exporting to the Langfuse host of ``cfg`` in the background.

    ``warn`` receives at most one line, possibly from a background thread, so it must be
    thread-safe. ``cfg.secret_key`` is always added to ``secrets``. Never raises for an
    unreachable host: that is only discovered, and reported, when an export fails.
    """
    _silence_sdk_loggers()
    all_secrets = [*secrets, cfg.secret_key]
    host = cfg.host.rstrip("/")
    reporter = _FailureReporter(_display_host(host), warn, Redactor(all_secrets))
    processor = LangfuseSpanProcessor(
        public_key=cfg.public_key,
        secret_key=cfg.secret_key,
        base_url=host,
        flush_at=BATCH_SIZE,
        flush_interval=FLUSH_INTERVAL,
        span_exporter=_ReportingExporter(f"{host}{OTLP_TRACES_PATH}", _headers(cfg), reporter),
        # Only minicode's spans live on this provider; Langfuse's default filter would drop
        # the ones without gen_ai.* attributes (compaction).
        should_export_span=_export_all,
    )
    provider = TracerProvider(
        resource=Resource.create({"service.name": "minicode", "service.version": __version__}),
        shutdown_on_exit=False,  # its atexit flush has no time bound; shutdown() is bounded
    )
    provider.add_span_processor(processor)
    return OTelTracer(
        provider,
        secrets=all_secrets,
        shutdown_timeout=DEFAULT_SHUTDOWN_TIMEOUT,
        on_shutdown_timeout=lambda: reporter.fail(
            f"no answer within {DEFAULT_SHUTDOWN_TIMEOUT:g} s"
        ),
    )


class _FailureReporter:
    """Turns the first export failure into one warning line; thread-safe."""

    def __init__(self, host: str, warn: Callable[[str], None], redactor: Redactor) -> None:
        self._host = host
        self._warn = warn
        self._redactor = redactor
        self._lock = threading.Lock()
        self._last_cause: str | None = None
        self.failed = False

    def note(self, cause: str) -> None:
        """Record why the latest attempt failed (the exporter may retry before giving up)."""
        self._last_cause = cause

    def fail(self, cause: str) -> None:
        """Report the failure (once); a cause noted earlier is more precise and wins."""
        with self._lock:
            if self.failed:
                return
            self.failed = True
        line = (
            f"minicode: warning: trace export to {self._host} failed "
            f"({self._last_cause or cause}); continuing without it"
        )
        # Often the top of the export thread: a broken stderr must neither kill that thread
        # nor make shutdown() raise.
        with contextlib.suppress(Exception):
            self._warn(self._redactor.scrub(line))


class _ReportingExporter(SpanExporter):
    """The OTLP/HTTP exporter until the first failure, then a sink that drops everything.

    A connection failure (refused, DNS, timeout, TLS) gives up at once: the OTLP exporter
    would otherwise retry with back-off for seconds, which at exit means waiting for nothing.
    HTTP 429/5xx keep the exporter's own retries.
    """

    def __init__(self, endpoint: str, headers: dict[str, str], reporter: _FailureReporter) -> None:
        self._reporter = reporter
        self._lock = threading.Lock()
        self._inner_shut_down = False
        # Typed as the SpanExporter interface, which is all this class uses (and is annotated).
        self._inner: SpanExporter = OTLPSpanExporter(
            endpoint=endpoint,
            headers=headers,
            timeout=EXPORT_TIMEOUT,
            compression=Compression.Gzip,
            session=_RecordingSession(reporter, give_up=self.shutdown),
        )

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        if self._reporter.failed:
            return SpanExportResult.FAILURE
        result = self._inner.export(spans)
        if result is not SpanExportResult.SUCCESS:
            self._reporter.fail("export rejected")
        return result

    def shutdown(self) -> None:
        """Stop the inner exporter (also ends its retry waits); idempotent."""
        with self._lock:
            if self._inner_shut_down:
                return
            self._inner_shut_down = True
        self._inner.shutdown()

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return True  # nothing is buffered here; the batch processor holds the queue


class _RecordingSession(requests.Session):
    """The exporter's HTTP session: reports why an attempt failed, in a few words."""

    def __init__(self, reporter: _FailureReporter, *, give_up: Callable[[], None]) -> None:
        super().__init__()
        self._reporter = reporter
        self._give_up = give_up

    def request(self, method: Any, url: Any, *args: Any, **kwargs: Any) -> requests.Response:
        if self._reporter.failed:
            raise requests.ConnectionError("trace export abandoned")
        try:
            response = super().request(method, url, *args, **kwargs)
        except requests.RequestException as e:
            self._reporter.note(_describe(e))
            self._reporter.fail(_describe(e))
            self._give_up()
            raise
        if response.status_code >= 400:
            self._reporter.note(f"HTTP {response.status_code}")
        return response


def _headers(cfg: LangfuseConfig) -> dict[str, str]:
    """The headers Langfuse's own processor sends (ingestion version 4 is required for
    direct OTLP exporters, per Langfuse's API docs)."""
    credentials = base64.b64encode(f"{cfg.public_key}:{cfg.secret_key}".encode()).decode("ascii")
    return {
        "Authorization": f"Basic {credentials}",
        "x-langfuse-sdk-name": "python",
        "x-langfuse-sdk-version": langfuse_version,
        "x-langfuse-public-key": cfg.public_key,
        "x-langfuse-ingestion-version": "4",
    }


def _describe(error: requests.RequestException) -> str:
    """A short, secret-free cause: never the exception text, which may echo the request."""
    if isinstance(error, requests.Timeout):
        return "timed out"
    if isinstance(error, requests.exceptions.SSLError):
        return "TLS error"
    if isinstance(error, requests.ConnectionError):
        return "connection refused" if "refused" in str(error).lower() else "cannot connect"
    return type(error).__name__


def _display_host(host: str) -> str:
    """``scheme://host[:port]``: no user info or path in a warning."""
    try:
        parts = urlsplit(host)
        port = f":{parts.port}" if parts.port else ""
    except ValueError:  # a malformed port: show the text as configured
        return host
    if not parts.hostname:
        return host
    return f"{parts.scheme}://{parts.hostname}{port}"


def _export_all(span: ReadableSpan) -> bool:
    return True


def _silence_sdk_loggers() -> None:
    """Export failures are reported once through ``warn``; the SDKs would log each retry
    (with tracebacks) to stderr, which would also corrupt the full-screen UI."""
    for name in _SILENCED_LOGGERS:
        logging.getLogger(name).setLevel(logging.CRITICAL + 1)
