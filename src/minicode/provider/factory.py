"""Building the configured ``Provider``: one entry per wire protocol.

Owns the mapping from ``model.provider`` to an adapter. Adapters are imported lazily inside
the function so that importing this module (or ``minicode.provider``) never imports httpx.
"""

from __future__ import annotations

from pathlib import Path

from minicode.config import ModelConfig
from minicode.errors import ConfigError
from minicode.provider.base import Provider

__all__ = ["SUPPORTED_PROVIDERS", "create_provider"]

SUPPORTED_PROVIDERS = ("", "openai")
"""Accepted values of ``model.provider``; both mean OpenAI-compatible Chat Completions."""


def create_provider(model: ModelConfig, *, wire_cache: Path | None = None) -> Provider:
    """The provider for ``model``, with its thinking level ``model.thinking``.

    ``--think`` reaches this as ``model.thinking`` (``config.apply_overrides``); ``None``
    sends no thinking fields. ``wire_cache`` is the learned wire-profile file (normally
    ``wire.default_cache_path(Path.home())``, chosen by the caller); ``None`` keeps learned
    profiles in memory for this run only. Raises ``ConfigError`` naming ``model.provider``
    for an unknown provider, or ``thinking`` for an invalid level.
    """
    if model.provider not in SUPPORTED_PROVIDERS:
        raise ConfigError(
            f"model.provider: unknown provider {model.provider!r}; "
            'use "openai" (any OpenAI-compatible endpoint) or leave it out'
        )
    from minicode.provider.openai import OpenAIProvider  # lazy: keeps httpx out of startup

    return OpenAIProvider(
        base_url=model.base_url,
        api_key=model.api_key,
        model=model.name,
        thinking=model.thinking,
        wire_cache=wire_cache,
    )
