"""``/model`` and ``/think``: the model settings a session runs with, and a provider for new ones.

A provider is built for one (model, thinking level): the wire profile it learns is per model.
Switching therefore builds a new provider (through the factory the session was opened with)
and checks the new settings first, so a bad name or level changes nothing.
"""

from __future__ import annotations

from typing import Callable

from minicode.config import THINKING_LEVELS, ModelConfig
from minicode.errors import ConfigError, SessionError
from dataclasses import replace
from minicode.provider.base import Provider
from minicode.session.records import SessionSettings, validate_model_name

__all__ = ["ModelSwitcher", "ProviderFactory"]

ProviderFactory = Callable[[ModelConfig], Provider]


class ModelSwitcher:
    """The session's current model settings and how to get a provider for other ones."""

    def __init__(self, model: ModelConfig, factory: ProviderFactory | None) -> None:
        self.model = model
        self._factory = factory

    @property
    def thinking(self) -> str | None:
        return self.model.thinking

    def prepare(self, *, name: str | None = None, thinking: str | None = None) -> tuple[ModelConfig, Provider, SessionSettings]:
        """The new settings, a provider for them and the record that says so; SessionError
        (exit_code 2) for a name or level that cannot be used."""
        if name is not None:
            why = validate_model_name(name)
            if why is not None:
                raise SessionError(f"cannot switch the model: {why}", exit_code=2)
        if thinking is not None and thinking not in THINKING_LEVELS:
            raise SessionError(
                f"unknown thinking level {thinking!r}: use one of {', '.join(THINKING_LEVELS)}", exit_code=2
            )
        if self._factory is None:
            raise SessionError("this session cannot switch its model or thinking level (its provider was given)")
        model = replace(self.model, name=name or self.model.name, thinking=thinking or self.model.thinking)
        try:
            provider = self._factory(model)
        except ConfigError as e:
            raise SessionError(f"cannot switch: {e}", exit_code=2) from e
        return model, provider, SessionSettings(name, thinking)
