"""create_tracer: no-op without [langfuse] (and no SDK import), lazy backend otherwise."""

from __future__ import annotations

import subprocess
import sys
import textwrap

from minicode.config import LangfuseConfig
from minicode.telemetry import create_tracer
from minicode.telemetry.base import NOOP_TRACER
from minicode.telemetry.otel import OTelTracer
from tests.telemetry.otlp_server import unused_port

SDK_PREFIXES = ("opentelemetry", "langfuse")


def _run(code: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *args, "-c", textwrap.dedent(code)],
        capture_output=True, text=True, timeout=120, check=False,
    )


def test_without_langfuse_table_no_sdk_is_imported() -> None:
    result = _run(
        """
        import sys
        from minicode.telemetry import create_tracer
        from minicode.telemetry.base import NOOP_TRACER
        tracer = create_tracer(None, warn=print, secrets=["k"])
        span = tracer.start_span("minicode.turn", {"model": "m"})
        span.end()
        tracer.shutdown()
        assert tracer is NOOP_TRACER
        print(sorted(m for m in sys.modules if m.split(".")[0] in ("opentelemetry", "langfuse")))
        """
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


def test_importtime_shows_no_sdk_import_without_langfuse() -> None:
    result = _run(
        "from minicode.telemetry import create_tracer; create_tracer(None, warn=print)",
        "-X", "importtime",
    )
    assert result.returncode == 0, result.stderr
    imported = [line.rsplit("|", 1)[-1].strip() for line in result.stderr.splitlines()]
    assert "minicode.telemetry" in imported  # the check itself works
    assert [m for m in imported if m.split(".")[0] in SDK_PREFIXES] == []


def test_with_langfuse_table_the_backend_is_loaded() -> None:
    result = _run(
        f"""
        import sys
        from minicode.config import LangfuseConfig
        from minicode.telemetry import create_tracer
        tracer = create_tracer(LangfuseConfig("pk", "sk", "http://127.0.0.1:{unused_port()}"),
                               warn=lambda line: None)
        tracer.shutdown()
        print(type(tracer).__name__, "langfuse" in sys.modules, "opentelemetry.sdk" in sys.modules)
        """
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["OTelTracer", "True", "True"]


def test_missing_tracing_package_is_one_warning_and_no_tracing() -> None:
    result = _run(
        """
        import sys
        sys.modules["langfuse"] = None  # what an uninstalled package looks like to import
        from minicode.config import LangfuseConfig
        from minicode.telemetry import create_tracer
        from minicode.telemetry.base import NOOP_TRACER
        tracer = create_tracer(LangfuseConfig("pk", "sk-secret"), warn=print)
        assert tracer is NOOP_TRACER
        """
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == ["minicode: warning: tracing is off: cannot import langfuse"]


def test_create_tracer_in_process() -> None:
    assert create_tracer(None, warn=lambda line: None) is NOOP_TRACER
    tracer = create_tracer(
        LangfuseConfig("pk", "sk", f"http://127.0.0.1:{unused_port()}"), warn=lambda line: None
    )
    try:
        assert isinstance(tracer, OTelTracer)
    finally:
        tracer.shutdown()
