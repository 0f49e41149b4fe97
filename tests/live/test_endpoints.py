"""Which endpoints the live suite uses (tests/live/endpoints.py), without a model."""

from __future__ import annotations

from pathlib import Path

import pytest

from minicode.errors import ConfigError
from tests.live.endpoints import JUDGE, UNDER_TEST, EndpointError, load_endpoint


def test_a_local_server_named_by_url_and_model_needs_no_key(tmp_path: Path) -> None:
    env = {"MINICODE_LIVE_BASE_URL": "http://127.0.0.1:8080/v1", "MINICODE_LIVE_MODEL": "qwen2.5-coder-1.5b"}
    config = load_endpoint(UNDER_TEST, env, tmp_path)
    assert config is not None
    assert (config.model.base_url, config.model.name, config.model.api_key) == \
        ("http://127.0.0.1:8080/v1", "qwen2.5-coder-1.5b", "")


def test_a_judge_reads_its_key_from_the_variable_named(tmp_path: Path) -> None:
    env = {"MINICODE_LIVE_JUDGE_BASE_URL": "https://api.example.com/v1", "MINICODE_LIVE_JUDGE_MODEL": "big",
           "MINICODE_LIVE_JUDGE_KEY_ENV": "JUDGE_KEY", "JUDGE_KEY": "sk-judge-0000"}
    config = load_endpoint(JUDGE, env, tmp_path)
    assert config is not None and config.model.api_key == "sk-judge-0000" and config.model.name == "big"
    assert "sk-judge" not in (tmp_path / "minicode_live_judge.toml").read_text()  # the file names the variable only
    assert load_endpoint(UNDER_TEST, env, tmp_path) is None  # the judge's variables name no model under test


def test_no_judge_named_is_none(tmp_path: Path) -> None:
    assert load_endpoint(JUDGE, {"MINICODE_LIVE_BASE_URL": "http://127.0.0.1:8080/v1"}, tmp_path) is None


@pytest.mark.parametrize(("env", "error", "message"), [
    ({"MINICODE_LIVE_BASE_URL": "http://127.0.0.1:8080/v1"}, EndpointError, "set both"),
    ({"MINICODE_LIVE_BASE_URL": "http://127.0.0.1:8080/v1", "MINICODE_LIVE_MODEL": "m",
      "MINICODE_LIVE_CONFIG": "/x.toml"}, EndpointError, "keep one"),
    ({"MINICODE_LIVE_BASE_URL": "https://api.example.com/v1", "MINICODE_LIVE_MODEL": "m"}, ConfigError, "api_key"),
    ({"MINICODE_LIVE_BASE_URL": "http://127.0.0.1:8080/v1", "MINICODE_LIVE_MODEL": "m",
      "MINICODE_LIVE_KEY_ENV": "UNSET_KEY"}, ConfigError, "UNSET_KEY"),
])
def test_an_endpoint_named_in_part_or_wrongly_is_an_error(
    env: dict[str, str], error: type[Exception], message: str, tmp_path: Path
) -> None:
    with pytest.raises(error, match=message):
        load_endpoint(UNDER_TEST, env, tmp_path)
