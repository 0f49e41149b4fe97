"""The Tracer protocol on the OpenTelemetry SDK, with a redaction filter in front of it.

Owns: turning minicode's explicit-parent spans into OpenTelemetry spans on a TracerProvider it
is given (never the global one; no context variables are read or set), enriching them with the
GenAI/Langfuse attributes of ``semconv``, dropping any attribute that contains a configured
secret, and a shutdown that is bounded in time. Export itself is the provider's span
processors' business (batching, in a background thread).

One of only two modules allowed to import opentelemetry; it is imported lazily, only when
tracing is configured.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Mapping

from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.trace import SpanKind, Status, StatusCode

from minicode import __version__
from minicode.redact import contains_secret, redact, significant_secrets
from minicode.telemetry.base import AttributeValue, Span
from minicode.telemetry.semconv import (
    SPAN_MODEL_CALL,
    ExportValue,
    derived_attributes,
    error_attributes,
    start_attributes,
)

__all__ = ["DEFAULT_SHUTDOWN_TIMEOUT", "OTelSpan", "OTelTracer", "Redactor"]

DEFAULT_SHUTDOWN_TIMEOUT = 2.0
"""Seconds ``shutdown()`` may take at most: exit must never wait on a slow trace backend."""

INSTRUMENTATION_SCOPE = "minicode"
_MAX_ERROR_MESSAGE = 500
"""Characters of an exception message kept on a span; provider errors can be long."""


class Redactor:
    """Keeps secrets out of exported data: drops attributes, scrubs free text.

    Which strings count as secrets, and how text is rewritten, is ``minicode.redact``'s
    decision; this class only applies it to attributes and remembers the secrets.
    """

    __slots__ = ("_secrets",)

    def __init__(self, secrets: Iterable[str]) -> None:
        self._secrets = significant_secrets(secrets)

    def contains_secret(self, text: str) -> bool:
        return contains_secret(text, self._secrets)

    def scrub(self, text: str) -> str:
        return redact(text, self._secrets)

    def clean(self, attributes: Mapping[str, AttributeValue | None]) -> dict[str, ExportValue]:
        """The attributes worth exporting: no ``None``s, no foreign types, nothing secret.

        Values of other types are dropped rather than stringified, because ``str()`` of an
        arbitrary object (a message, a tool call) could carry exactly what must not leave.
        """
        kept: dict[str, ExportValue] = {}
        for key, value in attributes.items():
            if not isinstance(value, (str, int, float, bool)):
                continue
            if self.contains_secret(key) or (
                isinstance(value, str) and self.contains_secret(value)
            ):
                continue
            kept[key] = value
        return kept


class OTelSpan:
    """One minicode span backed by an OpenTelemetry SDK span. Not shared between tasks."""

    __slots__ = ("_ended", "_name", "_redactor", "otel_span")

    def __init__(self, otel_span: trace.Span, name: str, redactor: Redactor) -> None:
        self.otel_span = otel_span
        self._name = name
        self._redactor = redactor
        self._ended = False

    def set(self, attributes: Mapping[str, AttributeValue | None]) -> None:
        """Add attributes (``None`` skipped, secrets dropped); ignored after ``end()``."""
        if self._ended:
            return
        clean = self._redactor.clean(attributes)
        if clean:
            self.otel_span.set_attributes({**clean, **derived_attributes(self._name, clean)})

    def record_error(self, error: BaseException) -> None:
        """Mark the span failed with the exception's type and (scrubbed, shortened) message."""
        if self._ended:
            return
        error_type = type(error).__name__
        message = self._redactor.scrub(str(error))[:_MAX_ERROR_MESSAGE]
        description = f"{error_type}: {message}" if message else error_type
        self.otel_span.set_status(Status(StatusCode.ERROR, description))
        # Not span.record_exception(): its stack trace would bypass the redaction.
        self.otel_span.add_event(
            "exception", {"exception.type": error_type, "exception.message": message}
        )
        self.otel_span.set_attributes(error_attributes(error_type, description))

    def end(self) -> None:
        if not self._ended:
            self._ended = True
            self.otel_span.end()


class OTelTracer:
    """A ``Tracer`` on an OpenTelemetry SDK ``TracerProvider`` (typically an isolated one).

    ``secrets``: strings that must never be exported; any attribute containing one is dropped
    and error messages have them replaced. ``on_shutdown_timeout`` runs (once) if the
    provider has not finished flushing within ``shutdown_timeout`` seconds.
    """

    def __init__(
        self,
        tracer_provider: TracerProvider,
        *,
        secrets: Iterable[str] = (),
        shutdown_timeout: float = DEFAULT_SHUTDOWN_TIMEOUT,
        on_shutdown_timeout: Callable[[], None] | None = None,
    ) -> None:
        self._provider = tracer_provider
        self._tracer = tracer_provider.get_tracer(INSTRUMENTATION_SCOPE, __version__)
        self._redactor = Redactor(secrets)
        self._shutdown_timeout = shutdown_timeout
        self._on_shutdown_timeout = on_shutdown_timeout
        self._shut_down = False

    def start_span(
        self,
        name: str,
        attributes: Mapping[str, AttributeValue | None] | None = None,
        parent: Span | None = None,
    ) -> Span:
        # An empty Context, not the current one: parents are explicit, never ambient.
        if isinstance(parent, OTelSpan):
            context = trace.set_span_in_context(parent.otel_span)
        else:
            context = Context()
        clean = self._redactor.clean(attributes or {})
        otel_span = self._tracer.start_span(
            name,
            context=context,
            kind=SpanKind.CLIENT if name == SPAN_MODEL_CALL else SpanKind.INTERNAL,
            attributes={
                **start_attributes(name),
                **clean,
                **derived_attributes(name, clean),
            },
        )
        return OTelSpan(otel_span, name, self._redactor)

    def shutdown(self) -> None:
        """Flush and stop the provider, waiting at most ``shutdown_timeout`` seconds.

        The provider's own shutdown can wait on a slow export for much longer, so it runs in
        a daemon thread that is abandoned (and dies with the process) when time is up.
        Idempotent.
        """
        if self._shut_down:
            return
        self._shut_down = True
        worker = threading.Thread(
            target=self._provider.shutdown, name="minicode-trace-shutdown", daemon=True
        )
        worker.start()
        worker.join(self._shutdown_timeout)
        if worker.is_alive() and self._on_shutdown_timeout is not None:
            self._on_shutdown_timeout()
