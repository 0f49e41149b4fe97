from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.telemetry.capture import TraceCapture, capture_tracer

API_KEY = "sk-model-0123456789abcdef"
"""A fake model API key registered as a secret with the ``traced`` tracer."""


@pytest.fixture
def traced() -> Iterator[TraceCapture]:
    capture = capture_tracer(secrets=[API_KEY])
    yield capture
    capture.tracer.shutdown()
