"""The provider factory and the import-weight promise of ``minicode.provider``."""

from __future__ import annotations

import subprocess
import sys

import pytest

from minicode.config import ModelConfig
from minicode.errors import ConfigError
from minicode.provider.factory import create_provider
from minicode.provider.openai import OpenAIProvider


def model(provider: str = "openai", thinking: str | None = "low") -> ModelConfig:
    return ModelConfig(base_url="http://127.0.0.1:1/v1", name="m", api_key="k", provider=provider, thinking=thinking)


@pytest.mark.parametrize("name", ["", "openai"])
async def test_openai_compatible_providers(name: str) -> None:
    provider = create_provider(model(name))
    try:
        assert isinstance(provider, OpenAIProvider) and provider.model == "m"
        assert provider._thinking == "low"
    finally:
        await provider.aclose()


async def test_thinking_comes_from_the_model_config() -> None:
    for level in ("max", None):
        provider = create_provider(model(thinking=level))
        assert provider._thinking == level  # type: ignore[attr-defined]
        await provider.aclose()


def test_unknown_provider_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="model.provider") as info:
        create_provider(model("anthropic"))
    assert "'k'" not in str(info.value)


def test_bad_thinking_level_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="thinking"):
        create_provider(model(thinking="extreme"))


def test_importing_provider_package_does_not_import_httpx2() -> None:
    code = "import sys, minicode.provider, minicode.provider.factory, minicode.provider.wire; print('httpx2' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
