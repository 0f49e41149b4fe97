"""Which endpoints the live suite talks to, from the environment.

The model under test: ``MINICODE_LIVE_BASE_URL`` + ``MINICODE_LIVE_MODEL`` (+ ``MINICODE_LIVE_KEY_ENV``,
the name of the variable holding its key; none: no key, which the config allows for a loopback
server only), else the config file ``MINICODE_LIVE_CONFIG``, else the usual search.

The compaction acceptance's judge: ``MINICODE_LIVE_JUDGE_BASE_URL`` + ``MINICODE_LIVE_JUDGE_MODEL``
(+ ``MINICODE_LIVE_JUDGE_KEY_ENV``). There is no default: a model asked to check its own
summaries proves nothing when it is too small to quote them (a 1.5B model rejects even the
reference summary), so without a judge the acceptance is skipped, saying why. To let a strong
model judge itself, name its own endpoint as the judge.

Each endpoint becomes a config file written with tomli-w and loaded by ``minicode.config``, so
the same rules hold as for a user's file (a bad URL or a missing key variable is a config error).
"""

from __future__ import annotations

from pathlib import Path
from typing import Mapping

import tomli_w

from minicode.config import Config, load_config

__all__ = ["JUDGE", "NO_JUDGE", "UNDER_TEST", "EndpointError", "config_text", "load_endpoint"]

UNDER_TEST = "MINICODE_LIVE"
JUDGE = "MINICODE_LIVE_JUDGE"
NO_JUDGE = ("skipped: no judge stronger than the model under test (set MINICODE_LIVE_JUDGE_BASE_URL and "
            "MINICODE_LIVE_JUDGE_MODEL, see docs/testing.md)")


class EndpointError(ValueError):
    """The variables name an endpoint only in part, or clash with MINICODE_LIVE_CONFIG."""


def config_text(prefix: str, env: Mapping[str, str]) -> str | None:
    """A config file's text for the endpoint ``prefix``_BASE_URL/_MODEL/_KEY_ENV names; None if unset."""
    base_url = env.get(f"{prefix}_BASE_URL", "")
    model = env.get(f"{prefix}_MODEL", "")
    if not base_url and not model:
        return None
    if not base_url or not model:
        raise EndpointError(f"set both {prefix}_BASE_URL and {prefix}_MODEL (only one of them is set)")
    if prefix == UNDER_TEST and env.get("MINICODE_LIVE_CONFIG"):
        raise EndpointError("MINICODE_LIVE_CONFIG and MINICODE_LIVE_BASE_URL both name the endpoint: keep one")
    key_env = env.get(f"{prefix}_KEY_ENV", "")
    table: dict[str, str] = {"base_url": base_url, "name": model}
    table |= {"api_key_env": key_env} if key_env else {"api_key": ""}
    return tomli_w.dumps({"model": table})


def load_endpoint(prefix: str, env: Mapping[str, str], directory: Path) -> Config | None:
    """The endpoint's config, its file written under ``directory``; None when ``prefix`` names none.
    Raises EndpointError, or ConfigError for what minicode's config rules refuse."""
    text = config_text(prefix, env)
    if text is None:
        return None
    path = directory / f"{prefix.lower()}.toml"
    path.write_text(text, encoding="utf-8")
    return load_config(directory, path, env)
