"""A project's own config file may not act for the user without the user's word.

The search order (SPEC 2) prefers ``<workspace>/config/config.toml`` to the user's own file, so a
cloned repository can ship one. Six things in it act without asking, so they need the user's
confirmation when the file is the workspace's (not named with ``--config``):

- ``api_key_env``: ``base_url = "https://collector.example/v1"`` with ``api_key_env =
  "OPENAI_API_KEY"`` would send the key from the user's environment there on the first run — a
  server on this machine too: the project may run it (``docker compose up``), and the variable
  may be any secret (``AWS_SECRET_ACCESS_KEY``);
- ``[task].checks``: shell commands run when a task ends, never asked (``curl … | sh``);
- ``[permissions]`` allow rules: calls the model (or a prompt injection in the repository's
  files) makes would run without asking (``allow = ["bash"]``);
- ``[mcp.servers.*]``: a stdio server is a program started at once, a remote one is sent the
  model's calls (issue 26); ``trust = true`` there never counts (``untrusted_project_servers``);
- ``[[hooks.*]]``: shell commands run before and after calls, at each prompt and each final
  answer, never asked (docs/hooks.md) — exactly like checks;
- a model server not on this machine, with a key of the project's own: every prompt goes there,
  and every file the model reads (``read`` never asks: ``.env``, a token in ``.git/config``),
  and whatever answers there decides the calls (with ``--yes``, any command).

What is confirmed is exactly those (server and variable, the checks, the allow rules, the
servers, the hooks: each one's event, matcher and command): in a terminal minicode asks once,
showing them; a file the user wrote with ``--init`` or the first-run questions is confirmed by writing it. Without a terminal the run stops (exit 2)
and says how to confirm — or to name the file with ``--config``, which is the user choosing it.
A server on this machine with a key of the project's own (or none) needs nothing; nor does a
deny rule.

The confirmations live outside the workspace, under ``~/.minicode/trusted-config/`` (one small
JSON file per config file, 0600) — where nothing the model runs in the workspace writes.
Blocking file I/O (tiny files), before the session starts.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Mapping

from minicode.config import WORKSPACE_CONFIG, Config, ModelConfig, is_loopback_url, user_config_path
from minicode.errors import ConfigError
from minicode.tomlfile import read_toml
from minicode.trust.record import TrustRecord

if TYPE_CHECKING:
    from minicode.permissions.rules import SourcedRule

__all__ = ["Ask", "Grants", "check_project_config", "confirm_written", "shown_url", "untrusted_project_servers"]

Ask = Callable[["Grants"], str | None]
"""Asks the user about the grants on the terminal (the question is the frontend's:
``cli.config_question``) and returns the answer line (None: no answer)."""


def check_project_config(config: Config, workspace: Path, env: Mapping[str, str], *,
                         explicit: bool, ask: Ask | None) -> None:
    """Raise ``ConfigError`` unless ``config`` (as loaded from ``config.path``) may be used as it is."""
    path = config.path
    if explicit or path != workspace / WORKSPACE_CONFIG:
        return
    grants = Grants(config, workspace)
    if not grants:
        return
    record = _record(path, env)
    if record is not None and record.digest() == grants.digest():
        return
    if ask is not None:
        answer = ask(grants)
        if answer is not None and answer.strip().lower() in ("y", "yes"):
            if record is not None:
                try:
                    record.remember(grants.digest())
                except OSError:
                    pass  # used this time; not remembered, so the next run asks again
            return
        own = user_config_path(env)
        instead = f"use your own settings with --config {own}, or " if own is not None and own.is_file() else ""
        raise ConfigError(f"{path}: not used — it {grants.summary()}; {instead}edit it to leave that out")
    raise ConfigError(
        f"{path}: this project's config {grants.summary()}, which you have not confirmed. If you wrote it, "
        f"run minicode once in a terminal and answer yes, or name it with --config {WORKSPACE_CONFIG}")


def untrusted_project_servers(config: Config, workspace: Path, *, explicit: bool) -> Config:
    """``config`` with ``trust`` of its MCP servers dropped when the file is the project's own:
    only the user's config (or a file the user named) may spare a server's calls the question."""
    if explicit or config.path != workspace / WORKSPACE_CONFIG or not any(s.trust for s in config.mcp):
        return config
    from dataclasses import replace

    return replace(config, mcp=tuple(replace(server, trust=False) for server in config.mcp))


def confirm_written(path: Path, workspace: Path, env: Mapping[str, str]) -> None:
    """The user just wrote ``path`` (``--init``, the first-run questions): the server and key
    variable in it are theirs. Read from the file as written (its key variable may not be set yet)."""
    record = _record(path, env)
    if record is None or path != workspace / WORKSPACE_CONFIG:
        return
    try:
        model = read_toml(path).get("model")
    except (ConfigError, OSError):
        return
    base_url = model.get("base_url") if isinstance(model, dict) else None
    var = model.get("api_key_env") if isinstance(model, dict) else None
    if not isinstance(base_url, str):
        return
    if isinstance(var, str) and var.strip():
        digest = _pairing(base_url, var.strip())
    elif not is_loopback_url(base_url):
        digest = _digest(None, (), (), base_url)
    else:
        return
    try:
        record.remember(digest)
    except OSError:
        pass  # not remembered: the next run asks once


class Grants:
    """What a workspace's config file does for the project without asking the user."""

    def __init__(self, config: Config, workspace: Path) -> None:
        model = config.model
        self.key = _sends_users_key(config.path, workspace, model)
        self.base_url, self.var = model.base_url, model.api_key_env
        self.checks = config.task.checks
        self.allow = tuple(rule.rule.text for rule in _allow_rules(config))
        self.server = not self.key and not is_loopback_url(model.base_url)
        """The project picks a server elsewhere, with its own key (the user's key names it already)."""
        servers = [s for s in config.mcp if s.file == config.path]
        self.mcp = tuple((s.name, _server_shown(s.command, s.url, s.env)) for s in servers)
        """Its MCP servers: (name, the command it starts or the URL it calls)."""
        self.mcp_digest = tuple((s.name, json.dumps([s.command, s.url, s.cwd, s.env, [k for k, _ in s.headers]]))
                                for s in servers)
        """What is confirmed of them: an edit of the command, its directory or environment asks again."""
        self.hooks = tuple(_hook_shown(h.event, h.matcher, h.command) for h in config.hooks if h.file == config.path)
        """Its hooks, as confirmed and shown: event, matcher and command (a timeout is no grant)."""

    def __bool__(self) -> bool:
        return self.key or bool(self.checks) or bool(self.allow) or self.server or bool(self.mcp) or bool(self.hooks)

    def digest(self) -> str:
        """What is confirmed. A file that only sends the key keeps the digest of the pairing
        alone (as confirmed before checks, rules and servers were part of it)."""
        pairing = _pairing(self.base_url, self.var) if self.key else None
        if not self.checks and not self.allow and not self.mcp and not self.hooks and pairing is not None:
            return pairing
        return _digest(pairing, self.checks, self.allow, self.base_url if self.server else None, self.mcp_digest,
                       self.hooks)

    def summary(self) -> str:
        """One clause naming what needs the user's word (no command or rule is repeated: values stay out of errors)."""
        parts = []
        if self.key:
            parts.append(f"would send your API key (from ${self.var}) to {shown_url(self.base_url)}")
        if self.checks:
            parts.append(f"would run {_count(len(self.checks), 'command')} of [task].checks without asking")
        if self.allow:
            parts.append(f"would allow calls by {_count(len(self.allow), 'allow rule')} of [permissions] without asking")
        if self.server:
            parts.append(f"would send your prompts and the files the model reads to {shown_url(self.base_url)}")
        if self.mcp:
            parts.append(f"would start or connect to {_count(len(self.mcp), 'MCP server')} of [mcp.servers]")
        if self.hooks:
            parts.append(f"would run {_count(len(self.hooks), 'hook command')} of [hooks] without asking")
        return " and ".join(parts)


def _hook_shown(event: str, matcher: str, command: str) -> str:
    return f"{event}" + (f" ({matcher})" if matcher else "") + f": {command}"


def _server_shown(command: tuple[str, ...], url: str, env: tuple[tuple[str, str], ...]) -> str:
    if not command:
        return shown_url(url)
    import shlex

    settings = "".join(f"{name}={shlex.quote(value)} " for name, value in env)
    return settings + shlex.join(command)


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}" + ("" if number == 1 else "s")


def _allow_rules(config: Config) -> list[SourcedRule]:
    from minicode.permissions.rules import Effect

    return [rule for rule in config.permissions if rule.effect is Effect.ALLOW and rule.file == config.path]


def _sends_users_key(path: Path, workspace: Path, model: ModelConfig) -> bool:
    """Whether the file sends a secret from the user's environment. A server on this machine is
    no exception: the project may run it (``docker compose up`` of the repository listens on
    127.0.0.1), and ``api_key_env`` may name any variable (``AWS_SECRET_ACCESS_KEY``)."""
    return path == workspace / WORKSPACE_CONFIG and bool(model.api_key_env) and bool(model.api_key)


def _digest(pairing: str | None, checks: tuple[str, ...], allow: tuple[str, ...], server: str | None,
            mcp: tuple[tuple[str, str], ...] = (), hooks: tuple[str, ...] = ()) -> str:
    grants: dict[str, object] = {"key": pairing, "checks": list(checks), "allow": list(allow)}
    if server is not None:  # (absent, the digest is the one confirmations made before servers counted)
        grants["server"] = server.strip().rstrip("/")
    if mcp:  # (likewise for MCP servers)
        grants["mcp"] = [list(entry) for entry in mcp]
    if hooks:  # (and for hooks)
        grants["hooks"] = list(hooks)
    return hashlib.sha256(json.dumps(grants).encode("utf-8", "surrogateescape")).hexdigest()


def _pairing(base_url: str, var: str | None) -> str:
    """The server with this variable (other edits of the model table need nothing)."""
    text = f"{base_url.strip().rstrip('/')}\0{var}"
    return hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()


def _record(path: Path, env: Mapping[str, str]) -> TrustRecord | None:
    return TrustRecord.for_home(env.get("HOME", ""), "trusted-config", path, ("config", os.path.realpath(path)))


def shown_url(url: str) -> str:
    """The base URL without any user or password in it."""
    scheme, sep, rest = url.partition("://")
    if not sep:
        return url
    authority, slash, path = rest.partition("/")
    return f"{scheme}://{authority.rpartition('@')[2]}{slash}{path}"
