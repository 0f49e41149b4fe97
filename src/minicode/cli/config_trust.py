"""A project's own config file may not send the user's API key anywhere without the user's word.

The search order (SPEC 2) prefers ``<workspace>/config/config.toml`` to the user's own file. A
repository can ship one: ``base_url = "https://collector.example/v1"`` with ``api_key_env =
"OPENAI_API_KEY"`` would send the key from the user's environment to that server on the first
run. So when the workspace's file takes a key from the environment for a server that is not on
this machine, that pairing (base URL and variable) must be one the user confirmed: in a
terminal minicode asks once; a pairing the user wrote with ``--init`` or the first-run questions
is confirmed by writing it. Without a terminal the run stops (exit 2) and says how to confirm —
or to name the file with ``--config``, which is the user choosing it. A key written in the file
itself is the project's own and needs nothing; nor does a loopback server.

The confirmations live outside the workspace, under ``~/.minicode/trusted-config/`` (one small
JSON file per config file, 0600) — where nothing the model runs in the workspace writes.
Blocking file I/O (tiny files), before the session starts.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Callable, Mapping

from minicode import jsonsafe
from minicode.config import WORKSPACE_CONFIG, Config, ModelConfig, is_loopback_url
from minicode.errors import ConfigError
from minicode.private_file import write_private
from minicode.tomlfile import read_toml

__all__ = ["check_project_config", "confirm_written"]

_DIR_MODE = 0o700

Ask = Callable[[str], "str | None"]
"""Shows a question on the terminal and returns the answer line (None: no answer)."""


def check_project_config(config: Config, workspace: Path, env: Mapping[str, str], *,
                         explicit: bool, ask: Ask | None) -> None:
    """Raise ``ConfigError`` unless ``config`` (as loaded from ``config.path``) may be used as it is."""
    model, path = config.model, config.path
    if explicit or not _sends_users_key(path, workspace, model):
        return
    record = _record_file(path, env)
    if record is not None and _confirmed(record) == _pairing(model.base_url, model.api_key_env):
        return
    where = _shown_url(model.base_url)
    if ask is not None:
        answer = ask(f"{WORKSPACE_CONFIG} in this project sends your API key (from ${model.api_key_env}) to {where}.\n"
                     "Use it? Answer yes only if you wrote this file or trust whoever did. [y/N] ")
        if answer is not None and answer.strip().lower() in ("y", "yes"):
            if record is not None:
                try:
                    _remember(record, path, model.base_url, model.api_key_env)
                except OSError:
                    pass  # used this time; not remembered, so the next run asks again
            return
        raise ConfigError(f"{path}: not used — it would send your API key (from ${model.api_key_env}) to {where}")
    raise ConfigError(
        f"{path}: this project's config would send your API key (from ${model.api_key_env}) to {where}, "
        "which you have not confirmed. If you wrote it, run minicode once in a terminal and answer yes, "
        f"or name it with --config {WORKSPACE_CONFIG}")


def confirm_written(path: Path, workspace: Path, env: Mapping[str, str]) -> None:
    """The user just wrote ``path`` (``--init``, the first-run questions): the server and key
    variable in it are theirs. Read from the file as written (its key variable may not be set yet)."""
    record = _record_file(path, env)
    if record is None or path != workspace / WORKSPACE_CONFIG:
        return
    try:
        model = read_toml(path).get("model")
    except (ConfigError, OSError):
        return
    base_url = model.get("base_url") if isinstance(model, dict) else None
    var = model.get("api_key_env") if isinstance(model, dict) else None
    if isinstance(base_url, str) and isinstance(var, str) and var.strip() and not is_loopback_url(base_url):
        try:
            _remember(record, path, base_url, var.strip())
        except OSError:
            pass  # not remembered: the next run asks once


def _sends_users_key(path: Path, workspace: Path, model: ModelConfig) -> bool:
    return (path == workspace / WORKSPACE_CONFIG and bool(model.api_key_env) and bool(model.api_key)
            and not is_loopback_url(model.base_url))


def _pairing(base_url: str, var: str | None) -> str:
    """What is confirmed: this server with this variable (other edits of the file need nothing)."""
    text = f"{base_url.strip().rstrip('/')}\0{var}"
    return hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()


def _record_file(path: Path, env: Mapping[str, str]) -> Path | None:
    home = env.get("HOME", "")
    if not home or not os.path.isabs(home):
        return None  # nowhere to remember: every run in a terminal asks
    key = hashlib.sha256(os.path.realpath(path).encode("utf-8", "surrogateescape")).hexdigest()[:32]
    return Path(home) / ".minicode" / "trusted-config" / f"{key}.json"


def _confirmed(record: Path) -> str | None:
    try:
        data = jsonsafe.loads(record.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    digest = data.get("sha256") if isinstance(data, dict) else None
    return digest if isinstance(digest, str) else None


def _remember(record: Path, path: Path, base_url: str, var: str | None) -> None:
    record.parent.mkdir(mode=_DIR_MODE, parents=True, exist_ok=True)
    body = {"config": os.path.realpath(path), "sha256": _pairing(base_url, var)}
    write_private(record, json.dumps(body).encode("utf-8") + b"\n")


def _shown_url(url: str) -> str:
    """The base URL without any user or password in it."""
    scheme, sep, rest = url.partition("://")
    if not sep:
        return url
    authority, slash, path = rest.partition("/")
    return f"{scheme}://{authority.rpartition('@')[2]}{slash}{path}"
