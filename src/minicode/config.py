"""Configuration: strict TOML loading (SPEC 2) into frozen dataclasses, and the --init writer.

The only module that reads ``os.environ`` for settings (it is passed in as ``env``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["Config", "LangfuseConfig", "ModelConfig", "DEFAULT_CONTEXT_WINDOW", "THINKING_LEVELS"]

DEFAULT_CONTEXT_WINDOW = 256 * 1024
THINKING_LEVELS = ("off", "low", "medium", "high", "max")


@dataclass(frozen=True, slots=True)
class ModelConfig:
    """The `[model]` table, with the API key already resolved from `api_key` or `api_key_env`."""

    base_url: str
    name: str
    api_key: str = field(repr=False)
    """The secret itself; never printed, logged or stored."""
    api_key_env: str | None = None
    """Name of the environment variable the key came from; removed from tool environments."""
    provider: str = "openai"
    context_window: int = DEFAULT_CONTEXT_WINDOW
    thinking: str | None = None
    """off|low|medium|high|max, or None to send no thinking fields at all."""


@dataclass(frozen=True, slots=True)
class LangfuseConfig:
    public_key: str = field(repr=False)
    secret_key: str = field(repr=False)
    host: str = "https://cloud.langfuse.com"


@dataclass(frozen=True, slots=True)
class Config:
    model: ModelConfig
    path: Path
    """The file this configuration was read from."""
    langfuse: LangfuseConfig | None = None
