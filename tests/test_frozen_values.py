"""The start-up path's ``@frozen`` values (options, configuration, ``Prepared``): what they keep of a frozen dataclass."""

from __future__ import annotations

import copy
import pickle
from pathlib import Path

import pytest

from minicode.cli.options import Options
from minicode.cli.prepared import Prepared
from minicode.config import Config, LangfuseConfig, ModelConfig, TaskConfig
from minicode.frozen import replace


def model(**changes: object) -> ModelConfig:
    return ModelConfig("http://127.0.0.1:1/v1", "m", "sk-secret-key", **changes)  # type: ignore[arg-type]


def test_equality_and_hash_over_the_fields() -> None:
    assert model() == model() and hash(model()) == hash(model())
    assert model() != model(thinking="high")
    assert model() != ("http://127.0.0.1:1/v1", "m", "sk-secret-key", None, "openai", 262144, None)
    assert Options(yes=True) == Options(yes=True) and Options() != Options(yes=True)
    assert {Config(model(), Path("c.toml")), Config(model(), Path("c.toml"))} == {Config(model(), Path("c.toml"))}


def test_defaults_as_the_dataclasses_had_them() -> None:
    config = Config(model(), Path("c.toml"))
    assert config.task == TaskConfig() and config.task.check_timeout == 120 and config.langfuse is None
    assert (config.permissions, config.rule_files) == ((), ())
    assert (model().provider, model().context_window, model().api_key_env) == ("openai", 256 * 1024, None)


def test_repr_leaves_out_secrets() -> None:
    text = repr(Config(model(), Path("c.toml"), langfuse=LangfuseConfig("pk-public", "sk-lf-secret")))
    assert "sk-secret-key" not in text and "sk-lf-secret" not in text and "pk-public" not in text
    assert "ModelConfig(base_url='http://127.0.0.1:1/v1', name='m'" in text and "host='https://cloud.langfuse.com'" in text


def test_fields_cannot_be_assigned_or_deleted() -> None:
    options = Options()
    with pytest.raises(AttributeError):
        options.yes = True  # type: ignore[misc]
    with pytest.raises(AttributeError):
        del options.yes  # type: ignore[misc]
    with pytest.raises(AttributeError):
        options.other = 1  # type: ignore[attr-defined]
    assert options.yes is False


def test_replace_makes_a_changed_copy_and_refuses_unknown_fields() -> None:
    config = Config(model(), Path("c.toml"))
    changed = replace(config, model=replace(config.model, name="other"))
    assert changed.model.name == "other" and config.model.name == "m" and changed.path == config.path
    with pytest.raises(TypeError, match="no field 'nmae'"):
        replace(config.model, nmae="x")


def test_copies_and_pickles_are_equal_values() -> None:
    prepared = Prepared(Config(model(), Path("c.toml")), Path("/w"), "oneshot", None, {"A": "1"})
    assert copy.copy(prepared) == prepared and copy.deepcopy(prepared) == prepared
    options = Options(task=("fix",), allow=("read",))
    assert pickle.loads(pickle.dumps(options)) == options
