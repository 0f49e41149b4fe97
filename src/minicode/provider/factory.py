"""Building the configured ``Provider``: one entry per wire protocol.

Owns the mapping from ``model.provider`` to an adapter, and ``check_model``: what building one
would refuse, checked without building it. Adapters are imported lazily inside the function so
that importing this module (or ``minicode.provider``) never imports httpx2.
"""

from __future__ import annotations

import ssl
from pathlib import Path
from typing import TYPE_CHECKING, Mapping

from minicode.config import ModelConfig
from minicode.errors import ConfigError
from minicode.provider import ca_bundle
from minicode.provider.base import ProbeableProvider, Provider

if TYPE_CHECKING:
    from minicode.provider.openai import OpenAIProvider

__all__ = [
    "PROBE_MAX_RETRIES",
    "SUPPORTED_PROVIDERS",
    "check_model",
    "create_probeable_provider",
    "create_provider",
    "tls_context",
]

PROBE_MAX_RETRIES = 1
"""A probe retries once at most: it is there to report what the endpoint does, not to wait."""

SUPPORTED_PROVIDERS = ("", "openai")
"""Accepted values of ``model.provider``; both mean OpenAI-compatible Chat Completions."""


def create_provider(
    model: ModelConfig, *, wire_cache: Path | None = None, env: Mapping[str, str] | None = None
) -> Provider:
    """The provider for ``model``, with its thinking level ``model.thinking``.

    ``--think`` reaches this as ``model.thinking`` (``config.apply_overrides``); ``None``
    sends no thinking fields. ``wire_cache`` is the learned wire-profile file (normally
    ``wire.default_cache_path(Path.home())``, chosen by the caller); ``None`` keeps learned
    profiles in memory for this run only. ``env`` is the process environment (the CA bundle,
    ``provider/ca_bundle.py``; none given: the system's store). Raises ``ConfigError`` for what
    ``check_model`` refuses, or ``thinking`` for an invalid level.
    """
    return _adapter(model, wire_cache=wire_cache, env=env)


def create_probeable_provider(
    model: ModelConfig, *, wire_cache: Path | None = None, env: Mapping[str, str] | None = None
) -> ProbeableProvider:
    """Like ``create_provider``, with what ``minicode --doctor`` asks beyond chatting (the
    model list, the wire profile) and at most ``PROBE_MAX_RETRIES`` retries per request."""
    return _adapter(model, wire_cache=wire_cache, max_retries=PROBE_MAX_RETRIES, env=env)


def check_model(model: ModelConfig, env: Mapping[str, str]) -> None:
    """Raise the ``ConfigError`` that building a provider for ``model`` in ``env`` would raise —
    an unknown provider name; for an https endpoint, a CA bundle variable naming nothing
    readable (``ca_bundle.check``; an http:// one never reads it) — without building one
    (nothing heavy imported): a ``DeferredProvider`` checks first. The key, the URL and the
    thinking level are the configuration's to check (``config``)."""
    if model.provider not in SUPPORTED_PROVIDERS:
        raise ConfigError(
            f"model.provider: unknown provider {model.provider!r}; "
            'use "openai" (any OpenAI-compatible endpoint) or leave it out'
        )
    if model.base_url.strip().lower().startswith("https:"):
        ca_bundle.check(env)


def _adapter(
    model: ModelConfig, *, wire_cache: Path | None, max_retries: int | None = None,
    env: Mapping[str, str] | None = None,
) -> "OpenAIProvider":
    check_model(model, env or {})
    from minicode.provider.openai import MAX_RETRIES, OpenAIProvider  # lazy: keeps httpx2 out of startup

    return OpenAIProvider(
        base_url=model.base_url,
        api_key=model.api_key,
        model=model.name,
        thinking=model.thinking,
        wire_cache=wire_cache,
        max_retries=MAX_RETRIES if max_retries is None else max_retries,
        env=env,
    )


def tls_context(env: Mapping[str, str]) -> ssl.SSLContext:
    """The TLS verification settings of the adapter's HTTP client built with ``env`` (its CA
    bundle, ``provider/ca_bundle.py``), for a probe's own handshake: it judges the same way."""
    return ca_bundle.context(env)
