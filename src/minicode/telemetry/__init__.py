"""minicode.telemetry: the factory that picks a tracing backend (the Tracer seam is ``base``).

``create_tracer(None, ...)`` returns the no-op tracer without importing opentelemetry or
langfuse (they cost hundreds of milliseconds); the backends are imported only when a
``[langfuse]`` table is configured.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from minicode.config import LangfuseConfig
from minicode.telemetry.base import NOOP_TRACER, Tracer

__all__ = ["create_tracer"]


def create_tracer(
    cfg: LangfuseConfig | None,
    *,
    warn: Callable[[str], None],
    secrets: Iterable[str] = (),
) -> Tracer:
    """The tracer for this process: Langfuse export when configured, otherwise the no-op.

    ``secrets`` (API keys) never reach an exported attribute. ``warn`` gets at most one line,
    possibly from a background thread. Never raises: if the tracing packages cannot be
    imported, that is one warning and tracing is off.
    """
    if cfg is None:
        return NOOP_TRACER
    try:
        # Lazy on purpose: importing the SDKs is the expensive part of tracing.
        from minicode.telemetry.langfuse import create_langfuse_tracer
    except ImportError as e:
        warn(f"minicode: warning: tracing is off: cannot import {e.name or 'its packages'}")
        return NOOP_TRACER
    return create_langfuse_tracer(cfg, warn=warn, secrets=secrets)
