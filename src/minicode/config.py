"""Configuration: strict TOML loading (SPEC 2) into frozen values, and the per-run overrides.

Owns the values (``Config`` and its tables), the search order, the schema check and the
validation of each key, and ``--model``/``--think``/``--check`` applied on top; writing a new
file is ``config_writer.py``. The environment is passed in as ``env``; this module never
reads ``os.environ`` itself. Error messages name the file and the key but never echo a value
or a line of the file: values can be secrets. Imports only the standard library (and ``idna``,
httpx2's own, for a host name that is not plain ASCII). One module
on purpose: all of it runs before the first request and the first full-screen frame, where
every module more costs an import; the values are frozen dataclasses.
"""

from __future__ import annotations

import ipaddress
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from minicode.errors import ConfigError
from minicode.tomlfile import read_toml

if TYPE_CHECKING:  # the rule and hook parsers load only for a file with [permissions], [hooks]
    from minicode.hooks.spec import HookSpec
    from minicode.permissions.rules import SourcedRule

__all__ = [
    "DEFAULT_CONTEXT_WINDOW",
    "ENV_NAME",
    "THINKING_LEVELS",
    "DEFAULT_CHECK_TIMEOUT",
    "MAX_CHECK_TIMEOUT",
    "Config",
    "LangfuseConfig",
    "McpServerConfig",
    "ModelConfig",
    "NoConfigError",
    "SubagentConfig",
    "TaskConfig",
    "apply_overrides",
    "candidate_paths",
    "check_base_url",
    "check_command",
    "find_config",
    "is_loopback_url",
    "is_present",
    "load_config",
    "load_mcp_file",
    "merge_mcp",
    "parse_config",
    "user_config_path",
]

DEFAULT_CONTEXT_WINDOW = 256 * 1024
DEFAULT_CHECK_TIMEOUT = 120
"""Seconds an acceptance check may run (like a bash call without a ``timeout``)."""
MAX_CHECK_TIMEOUT = 600
"""The most a check may be given (bash's own maximum)."""
THINKING_LEVELS = ("off", "low", "medium", "high", "max")
ASSIST_MODES = ("auto", "on", "off")
PROVIDERS = ("", "openai")
WORKSPACE_CONFIG = Path("config") / "config.toml"
ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@dataclass(frozen=True, slots=True)
class ModelConfig:
    """The `[model]` table, with the API key already resolved from `api_key` or `api_key_env`."""

    base_url: str
    name: str
    api_key: str = field(repr=False)
    """The secret itself; never printed, logged or stored (left out of ``repr``)."""
    api_key_env: str | None = None
    """Name of the environment variable the key came from; removed from tool environments."""
    provider: str = "openai"
    context_window: int | None = None
    """Tokens, when the file sets it; None: asked of the server (``provider/server_window.py``),
    else ``DEFAULT_CONTEXT_WINDOW``."""
    thinking: str | None = None
    """off|low|medium|high|max, or None to send no thinking fields at all."""
    assists: str = "auto"
    """on|off|auto: the small-model assists (``agent.assists``); auto: when the model needs them."""


@dataclass(frozen=True, slots=True)
class LangfuseConfig:
    public_key: str = field(repr=False)
    secret_key: str = field(repr=False)
    host: str = "https://cloud.langfuse.com"


@dataclass(frozen=True, slots=True)
class TaskConfig:
    """The `[task]` table: how a task is accepted as done."""

    checks: tuple[str, ...] = ()
    """Acceptance checks: shell commands run when the model says it is done (plus `--check`)."""
    check_timeout: int = DEFAULT_CHECK_TIMEOUT
    """Seconds each check may run before its process group is killed (a failure)."""


@dataclass(frozen=True, slots=True)
class SubagentConfig:
    """The `[subagents]` table: the limits of the ``agent`` tool's child loops (docs/subagents.md)."""

    max_turns: int = 15
    """Model requests one sub-agent may make; then it is asked for a summary of what it found."""
    timeout: int = 300
    """Seconds one sub-agent may run; then it is stopped and the parent told what it found so far."""
    per_task: int = 3
    """Sub-agents one user task may start; the next call is refused with a message."""


@dataclass(frozen=True, slots=True)
class McpServerConfig:
    """One ``[mcp.servers.NAME]`` table: a stdio ``command`` or a Streamable HTTP ``url``."""

    name: str
    command: tuple[str, ...] = ()
    """argv of a stdio server (no shell); empty for a remote one."""
    url: str = ""
    env: tuple[tuple[str, str], ...] = field(default=(), repr=False)
    cwd: str | None = None
    headers: tuple[tuple[str, str], ...] = field(default=(), repr=False)
    """HTTP headers with ``${VAR}`` already expanded from the environment (values can be secrets)."""
    tools: tuple[str, ...] | None = None
    """The server's tools offered (an allow-list); None: all of them."""
    trust: bool = False
    """Its calls need no approval — honoured only from a file the user chose (``trust.project_config``)."""
    startup_timeout: float = 60.0
    call_timeout: float = 120.0
    signin_timeout: float = 300.0
    """Seconds an OAuth sign-in waits for the browser's answer (a remote server that asks for one)."""
    disabled: bool = False
    file: Path | None = None
    """The file that declared it."""


@dataclass(frozen=True, slots=True)
class Config:
    model: ModelConfig
    path: Path
    """The file this configuration was read from."""
    langfuse: LangfuseConfig | None = None
    task: TaskConfig = TaskConfig()
    permissions: tuple[SourcedRule, ...] = ()
    """Permission rules in effect: this file's ``[permissions]``, the per-user file's, and
    ``--allow``/``--deny`` (``cli.added_rules.add_rules``); the workspace's saved rules come later."""
    rule_files: tuple[Path, ...] = ()
    """The configuration files that hold permission rules (a write to them is always asked)."""
    mcp: tuple[McpServerConfig, ...] = ()
    """The ``[mcp.servers.*]`` tables, then ``--mcp-config``'s (same name: the later one)."""
    subagents: SubagentConfig = SubagentConfig()
    hooks: tuple[HookSpec, ...] = ()
    """The ``[[hooks.EVENT]]`` tables (``hooks.spec``), then the per-user file's (``cli.added_rules``)."""


class NoConfigError(ConfigError):
    """No configuration file exists anywhere on the search path (first run)."""

    def __init__(self, message: str, *, searched: tuple[Path, ...]) -> None:
        super().__init__(message)
        self.searched = searched
        """Every path that was looked at, in search order."""


# The schema is data: table -> key -> expected Python type. `bool` is checked apart from
# `int` because TOML `true` must never pass as a number.
_SCHEMA: dict[str, dict[str, type]] = {
    "model": {
        "provider": str,
        "base_url": str,
        "name": str,
        "api_key": str,
        "api_key_env": str,
        "context_window": int,
        "thinking": str,
        "assists": str,
    },
    "langfuse": {"public_key": str, "secret_key": str, "host": str},
    "task": {"checks": list, "check_timeout": int},
    "subagents": {"max_turns": int, "timeout": int, "per_task": int},
}
_REQUIRED_TABLES = ("model",)
_TYPE_NAMES = {str: "a string", int: "an integer", list: "an array of strings"}


# --- search -------------------------------------------------------------------------------


def user_config_path(env: Mapping[str, str]) -> Path | None:
    """The per-user file (`$XDG_CONFIG_HOME/minicode/config.toml`, default under `~/.config`),
    or None when neither variable gives an absolute place for it."""
    xdg = env.get("XDG_CONFIG_HOME", "")
    # The XDG spec says a relative XDG_CONFIG_HOME is invalid and must be ignored.
    if xdg and Path(xdg).is_absolute():
        return Path(xdg) / "minicode" / "config.toml"
    if env.get("HOME"):
        return Path(env["HOME"]) / ".config" / "minicode" / "config.toml"
    return None


def candidate_paths(workspace: Path, env: Mapping[str, str]) -> tuple[Path, ...]:
    """The implicit search path of SPEC 2, in order (without `--config`)."""
    user = user_config_path(env)
    return (workspace / WORKSPACE_CONFIG,) if user is None else (workspace / WORKSPACE_CONFIG, user)


def is_present(path: Path) -> bool:
    """True when *something* is at path (even a broken symlink); only absence moves the search on."""
    try:
        path.lstat()
    except (FileNotFoundError, NotADirectoryError):
        return False
    except OSError as e:
        raise ConfigError(f"{path}: cannot access the configuration file ({e.strerror})") from e
    return True


def find_config(workspace: Path, explicit: Path | None, env: Mapping[str, str]) -> Path | None:
    """The file to load: `explicit` if given (it must exist), else the first present candidate."""
    if explicit is not None:
        if not is_present(explicit):
            raise ConfigError(f"{explicit}: configuration file does not exist (--config)")
        return explicit
    for path in candidate_paths(workspace, env):
        if is_present(path):
            return path
    return None


# --- load ---------------------------------------------------------------------------------


def load_config(workspace: Path, explicit: Path | None, env: Mapping[str, str]) -> Config:
    """Find and strictly load the configuration; raises ConfigError (NoConfigError if none)."""
    path = find_config(workspace, explicit, env)
    if path is None:
        searched = candidate_paths(workspace, env)
        listing = ", ".join(str(p) for p in searched)
        raise NoConfigError(f"no configuration file found (looked in: {listing})", searched=searched)
    return parse_config(path, read_toml(path), env)


def _check_shape(path: Path, data: dict[str, Any]) -> None:
    """Unknown tables/keys, wrong types and missing tables, with no value ever echoed."""
    for table, body in data.items():
        if table in ("permissions", "mcp", "hooks"):
            continue  # checked entry by entry in parse_config (permissions.rules, _parse_mcp, hooks.spec)
        if table not in _SCHEMA:
            raise ConfigError(f"{path}: unknown table or key {table!r} "
                              "(allowed: [model], [langfuse], [task], [subagents], [permissions], [mcp], [hooks])")
        if not isinstance(body, dict):
            raise ConfigError(f"{path}: {table!r} must be a table ([{table}])")
        for key, value in body.items():
            expected = _SCHEMA[table].get(key)
            if expected is None:
                allowed = ", ".join(_SCHEMA[table])
                raise ConfigError(f"{path}: unknown key [{table}].{key} (allowed: {allowed})")
            if isinstance(value, bool) or not isinstance(value, expected):
                raise ConfigError(f"{path}: [{table}].{key} must be {_TYPE_NAMES[expected]}")
    for table in _REQUIRED_TABLES:
        if table not in data:
            raise ConfigError(f"{path}: missing required table [{table}]")


def parse_config(path: Path, data: dict[str, Any], env: Mapping[str, str]) -> Config:
    """The configuration a file's parsed TOML holds (``ConfigError`` naming ``path`` if wrong)."""
    _check_shape(path, data)
    model = _parse_model(path, data["model"], env)
    langfuse = _parse_langfuse(path, data["langfuse"]) if "langfuse" in data else None
    task = _parse_task(path, data.get("task", {}))
    rules: list[SourcedRule] = []
    if "permissions" in data:
        from minicode.permissions.rules import Origin, rules_from_table

        origin = Origin.USER if path == user_config_path(env) else Origin.CONFIG
        rules = rules_from_table(data["permissions"], str(path), origin, path)
    mcp = _parse_mcp(path, data["mcp"], env) if "mcp" in data else ()
    subagents = _parse_subagents(path, data.get("subagents", {}))
    hooks: tuple[HookSpec, ...] = ()
    if "hooks" in data:
        from minicode.hooks.spec import parse_hooks

        hooks = parse_hooks(path, data["hooks"])
    return Config(model=model, path=path, langfuse=langfuse, task=task, permissions=tuple(rules), rule_files=(path,),
                  mcp=mcp, subagents=subagents, hooks=hooks)


# --- [mcp] --------------------------------------------------------------------------------

_MCP_KEYS: dict[str, tuple[type, ...]] = {
    "command": (list,), "url": (str,), "env": (dict,), "cwd": (str,), "headers": (dict,), "tools": (list,),
    "trust": (bool,), "startup_timeout": (int, float), "call_timeout": (int, float),
    "signin_timeout": (int, float), "disabled": (bool,),
}
MCP_SERVER_NAME = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9-]|_(?!_)){0,31}")
"""A server's name: its tools are ``NAME__tool``, so no ``__`` inside (nor at the end)."""
_MAX_MCP_TIMEOUT = 3600
_ENV_REF = re.compile(r"\$\{([^}]*)\}")


def load_mcp_file(path: Path, env: Mapping[str, str]) -> tuple[McpServerConfig, ...]:
    """``--mcp-config PATH``: a file of ``[mcp.servers.*]`` tables alone (ConfigError if not)."""
    if not is_present(path):
        raise ConfigError(f"{path}: MCP configuration file does not exist (--mcp-config)")
    data = read_toml(path)
    extra = sorted(set(data) - {"mcp"})
    if extra:
        raise ConfigError(f"{path}: unknown table or key {extra[0]!r} (an --mcp-config file holds [mcp.servers.NAME] tables)")
    return _parse_mcp(path, data.get("mcp", {}), env)


def merge_mcp(first: tuple[McpServerConfig, ...], later: tuple[McpServerConfig, ...]) -> tuple[McpServerConfig, ...]:
    """``first`` with ``later``'s servers added; a server of the same name is replaced."""
    names = {server.name for server in later}
    return (*(server for server in first if server.name not in names), *later)


def _parse_mcp(path: Path, table: Any, env: Mapping[str, str]) -> tuple[McpServerConfig, ...]:
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: 'mcp' must be a table ([mcp.servers.NAME])")
    for key in table:
        if key != "servers":
            raise ConfigError(f"{path}: unknown key [mcp].{key} (allowed: servers)")
    servers = table.get("servers", {})
    if not isinstance(servers, dict):
        raise ConfigError(f"{path}: [mcp].servers must be tables ([mcp.servers.NAME])")
    return tuple(_parse_server(path, name, body, env) for name, body in servers.items())


def _parse_server(path: Path, name: str, t: Any, env: Mapping[str, str]) -> McpServerConfig:
    where = f"{path}: [mcp.servers.{name}]"
    if not MCP_SERVER_NAME.fullmatch(name):
        raise ConfigError(f"{path}: MCP server name {name!r} must be 1-32 letters, digits, - or _ (no __)")
    if not isinstance(t, dict):
        raise ConfigError(f"{where} must be a table")
    for key, value in t.items():
        types = _MCP_KEYS.get(key)
        if types is None:
            raise ConfigError(f"{where}: unknown key {key} (allowed: {', '.join(_MCP_KEYS)})")
        if (isinstance(value, bool) and bool not in types) or not isinstance(value, types):
            kind = {list: "an array of strings", str: "a string", dict: "a table of strings", bool: "true or false",
                    int: "a number of seconds"}[types[0]]
            raise ConfigError(f"{where}.{key} must be {kind}")
    if ("command" in t) == ("url" in t):
        raise ConfigError(f"{where}: give either command (a stdio server) or url (Streamable HTTP), not both or neither")
    command = tuple(_strings(t.get("command", []), f"{where}.command"))
    if "command" in t and (not command or not command[0].strip()):
        raise ConfigError(f"{where}.command must name a program: command = [\"program\", \"arg\", …]")
    url = t.get("url", "").strip()
    if url:
        check_base_url(url, f"{where}.url")
    for key in ("env", "headers"):
        if key in t and (url if key == "env" else command):
            raise ConfigError(f"{where}.{key} is for a {'stdio' if key == 'env' else 'remote'} server")
    pairs = _string_table(t.get("env", {}), f"{where}.env")
    for variable, _ in pairs:
        if not ENV_NAME.fullmatch(variable):
            raise ConfigError(f"{where}.env: {variable!r} is not an environment variable name")
    headers = tuple((k, _expand(v, env, f"{where}.headers.{k}")) for k, v in _string_table(t.get("headers", {}), f"{where}.headers"))
    tools = tuple(_strings(t["tools"], f"{where}.tools")) if "tools" in t else None
    timeouts = []
    for key, default in (("startup_timeout", 60), ("call_timeout", 120), ("signin_timeout", 300)):
        value = t.get(key, default)
        if not 0 < value <= _MAX_MCP_TIMEOUT:
            raise ConfigError(f"{where}.{key} must be 1-{_MAX_MCP_TIMEOUT} seconds")
        timeouts.append(float(value))
    if "signin_timeout" in t and command:
        raise ConfigError(f"{where}.signin_timeout is for a remote server")
    return McpServerConfig(
        name=name, command=command, url=url, env=pairs, cwd=t.get("cwd"), headers=headers, tools=tools,
        trust=t.get("trust", False), startup_timeout=timeouts[0], call_timeout=timeouts[1],
        signin_timeout=timeouts[2], disabled=t.get("disabled", False), file=path,
    )


def _strings(values: list[Any], what: str) -> list[str]:
    if not all(isinstance(v, str) and "\0" not in v for v in values):
        raise ConfigError(f"{what} must be an array of strings")
    return values


def _string_table(table: dict[str, Any], what: str) -> tuple[tuple[str, str], ...]:
    if not all(isinstance(v, str) and "\0" not in v for v in table.values()):
        raise ConfigError(f"{what} must be a table of strings")
    return tuple(table.items())


def _expand(value: str, env: Mapping[str, str], what: str) -> str:
    """``${VAR}`` replaced by the variable's value; an unset one is a config error (never echoed)."""

    def variable(match: re.Match[str]) -> str:
        name = match.group(1)
        if not ENV_NAME.fullmatch(name):
            raise ConfigError(f"{what}: ${{{name}}} is not an environment variable name")
        if name not in env:
            raise ConfigError(f"{what} names ${{{name}}}, which is not set in the environment; set it first: export {name}=…")
        return env[name]

    return _ENV_REF.sub(variable, value)


def _parse_task(path: Path, t: dict[str, Any]) -> TaskConfig:
    checks = []
    for number, command in enumerate(t.get("checks", []), start=1):
        if not isinstance(command, str):
            raise ConfigError(f"{path}: [task].checks must be an array of strings (item {number} is not)")
        checks.append(check_command(command, f"{path}: [task].checks item {number}"))
    timeout = t.get("check_timeout", DEFAULT_CHECK_TIMEOUT)
    if not 0 < timeout <= MAX_CHECK_TIMEOUT:
        raise ConfigError(f"{path}: [task].check_timeout must be 1-{MAX_CHECK_TIMEOUT} seconds")
    return TaskConfig(checks=_unique(checks), check_timeout=timeout)


_SUBAGENT_RANGES = {"max_turns": (1, 100), "timeout": (1, 3600), "per_task": (0, 20)}
"""Each ``[subagents]`` key's allowed range (``per_task = 0`` turns the agent tool's calls away)."""


def _parse_subagents(path: Path, t: dict[str, Any]) -> SubagentConfig:
    defaults, values = SubagentConfig(), {}
    for key, (low, high) in _SUBAGENT_RANGES.items():
        value = t.get(key, getattr(defaults, key))
        if not low <= value <= high:
            raise ConfigError(f"{path}: [subagents].{key} must be {low}-{high}")
        values[key] = value
    return SubagentConfig(**values)


def check_command(command: str, what: str) -> str:
    """An acceptance check as run: stripped; empty or with a NUL byte is a ConfigError."""
    command = command.strip()
    if not command:
        raise ConfigError(f"{what}: a check must not be empty")
    if "\0" in command:
        raise ConfigError(f"{what}: a check must not contain a NUL character")
    return command


def _unique(commands: list[str]) -> tuple[str, ...]:
    """The commands in order, each once (the file and --check may name the same one)."""
    return tuple(dict.fromkeys(commands))


def _parse_model(path: Path, t: dict[str, Any], env: Mapping[str, str]) -> ModelConfig:
    for key in ("base_url", "name"):
        if key not in t:
            raise ConfigError(f"{path}: missing required key [model].{key}")
        if not t[key].strip():
            raise ConfigError(f"{path}: [model].{key} must not be empty")
    base_url = t["base_url"].strip()
    check_base_url(base_url, f"{path}: [model].base_url")
    provider = t.get("provider", "openai")
    if provider not in PROVIDERS:
        raise ConfigError(f'{path}: [model].provider must be "openai" (or empty); other providers are not supported')
    window = t.get("context_window")
    if window is not None and window <= 0:
        raise ConfigError(f"{path}: [model].context_window must be a positive number of tokens")
    thinking = t.get("thinking")
    if thinking is not None and thinking not in THINKING_LEVELS:
        raise ConfigError(f"{path}: [model].thinking must be one of {'|'.join(THINKING_LEVELS)}")
    assists = t.get("assists", "auto")
    if assists not in ASSIST_MODES:
        raise ConfigError(f"{path}: [model].assists must be one of {'|'.join(ASSIST_MODES)}")
    api_key, key_env = _resolve_key(path, t, env, base_url)
    return ModelConfig(
        base_url=base_url,
        name=t["name"].strip(),
        api_key=api_key,
        api_key_env=key_env,
        provider="openai",
        context_window=window,
        thinking=thinking,
        assists=assists,
    )


def _resolve_key(path: Path, t: dict[str, Any], env: Mapping[str, str], base_url: str) -> tuple[str, str | None]:
    """Returns (key, variable name). An empty key is accepted only for a loopback server."""
    if "api_key" in t and "api_key_env" in t:
        raise ConfigError(f"{path}: set either [model].api_key or [model].api_key_env, not both")
    if "api_key" not in t and "api_key_env" not in t:
        raise ConfigError(f"{path}: missing required key [model].api_key or [model].api_key_env")
    if "api_key" in t:
        key, var = t["api_key"].strip(), None
        if not key and not is_loopback_url(base_url):
            raise ConfigError(
                f"{path}: [model].api_key is empty; an empty key is allowed only for a loopback base_url"
            )
        _check_key(key, f"{path}: [model].api_key", "copy the key into the file again")
        return key, var
    var = t["api_key_env"].strip()
    if not ENV_NAME.fullmatch(var):
        raise ConfigError(f"{path}: [model].api_key_env must be an environment variable name")
    if var not in env:
        raise ConfigError(
            f"{path}: [model].api_key_env names {var}, which is not set in the environment; "
            f"set it first: export {var}=…"
        )
    key = env[var].strip()
    if not key and not is_loopback_url(base_url):
        raise ConfigError(f"{path}: [model].api_key_env names {var}, which is empty; set it: export {var}=…")
    _check_key(key, f"{path}: [model].api_key_env {var}", f"set it again: export {var}=…")
    return key, var


def _check_key(key: str, what: str, fix: str) -> None:
    """An HTTP header carries printable ASCII only: a key with anything else (a non-breaking
    space or a typographic quote pasted with it) could never be sent. Says where, not what."""
    odd = next((i for i, c in enumerate(key) if not (c.isascii() and c.isprintable())), None)
    if odd is not None:
        raise ConfigError(f"{what}: the key has a character that is not printable ASCII at position {odd + 1} "
                          f"(a non-breaking space or a typographic quote copied with it?); {fix}")


def check_base_url(url: str, what: str = "--base-url") -> None:
    """ConfigError("<what> …") unless httpx2 can request the URL and minicode can append to it:
    http(s) with a host and a port from 1 to 65535, no space or control character anywhere (a
    pasted non-breaking space, a tab), a host name httpx2 accepts (an IPv4 address that is one,
    a non-ASCII name by the IDNA rules httpx2 applies), and no query or fragment (minicode appends
    ``/chat/completions``: ``…/v1?x=1`` would send ``?x=1/chat/completions``, ``…/v1#f`` a
    request to ``/v1``). The messages never repeat the URL: it may hold a password."""
    url = url.strip()
    odd = next((i for i, c in enumerate(url) if c.isspace() or not c.isprintable()), None)
    if odd is not None:
        raise ConfigError(f"{what} has a space or an invisible character (U+{ord(url[odd]):04X}) at position "
                          f"{odd + 1}; type the URL again without it")
    try:
        parts = urlsplit(url)
    except ValueError as e:  # "[" without its "]", or brackets around what is not an IPv6 address
        raise ConfigError(f"{what} is not a URL ({e}); e.g. https://api.openai.com/v1") from e
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ConfigError(f"{what} must be an http:// or https:// URL with a host")
    try:
        port = parts.port
    except ValueError:
        port = 0
    if port == 0:  # not a number, or out of range, or 0 (which nothing listens on)
        raise ConfigError(f"{what} has an invalid port: use a number 1-65535")
    if parts.query or parts.fragment or "?" in url or "#" in url:  # "/chat/completions" is appended
        raise ConfigError(f"{what} must not have a query (?…) or a fragment (#…): give the URL up to the part "
                          "before /chat/completions, e.g. https://api.openai.com/v1")
    problem = _host_problem(parts.hostname)
    if problem is not None:
        raise ConfigError(f"{what} has an invalid host name ({parts.hostname}): {problem}")


def _host_problem(host: str) -> str | None:
    """Why httpx2 or the resolver cannot take ``host``, or None: an IPv6 literal is urlsplit's to
    check; four dotted numbers must be an IPv4 address; a non-ASCII name (or one that starts with the
    ``xn--`` of an encoded one) must pass httpx2's IDNA step, the ``idna`` package's; every name
    must fit the resolver's limits (labels of 1-63 characters, 253 in all)."""
    if ":" in host:
        return None
    if re.fullmatch(r"[0-9]+\.[0-9]+\.[0-9]+\.[0-9]+", host):  # httpx2's test for an IPv4 address
        try:
            ipaddress.IPv4Address(host)
        except ValueError:
            return "not an IPv4 address (four numbers 0-255 between dots)"
        return None
    if not host.isascii() or host.startswith("xn--"):
        import idna  # loaded for such a name only

        try:
            if host.isascii():
                idna.decode(host)
            else:
                host = idna.encode(host).decode("ascii")
        except idna.IDNAError as e:
            return f"not a valid international name ({e})"
    labels = host[:-1].split(".") if host.endswith(".") else host.split(".")  # "host." is a full name
    if len(host) > 253 or not all(0 < len(label) < 64 for label in labels):
        return ("a name is labels of 1 to 63 characters between dots (at most 253 in all), e.g. api.openai.com, "
                "or an IP address")
    return None


def _parse_langfuse(path: Path, t: dict[str, Any]) -> LangfuseConfig:
    for key in ("public_key", "secret_key"):
        if not t.get(key, "").strip():
            raise ConfigError(f"{path}: missing or empty required key [langfuse].{key}")
    host = t.get("host", "https://cloud.langfuse.com").strip()
    parts = urlsplit(host)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ConfigError(f"{path}: [langfuse].host must be an http:// or https:// URL")
    return LangfuseConfig(public_key=t["public_key"].strip(), secret_key=t["secret_key"].strip(), host=host)


def is_loopback_url(url: str) -> bool:
    """True for http(s) URLs whose host is localhost, 127.0.0.0/8 or ::1."""
    try:
        host = urlsplit(url).hostname
    except ValueError:
        return False
    if not host:
        return False
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        return False
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        return ip.ipv4_mapped.is_loopback
    return ip.is_loopback


def apply_overrides(
    config: Config, *, model: str | None = None, thinking: str | None = None, checks: tuple[str, ...] = ()
) -> Config:
    """The per-run `--model` / `--think` overrides and `--check` additions, validated like
    the file values. `--check` commands run after the file's `[task].checks`."""
    if checks:
        added = [check_command(c, "--check") for c in checks]
        config = replace(config, task=replace(config.task, checks=_unique([*config.task.checks, *added])))
    m = config.model
    if model is not None:
        if not model.strip():
            raise ConfigError("--model must not be empty")
        m = replace(m, name=model.strip())
    if thinking is not None:
        if thinking not in THINKING_LEVELS:
            raise ConfigError(f"--think must be one of {'|'.join(THINKING_LEVELS)}")
        m = replace(m, thinking=thinking)
    return replace(config, model=m)
