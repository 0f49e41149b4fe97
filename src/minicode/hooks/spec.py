"""The ``[[hooks.EVENT]]`` tables of a config file, strictly: what a hook is and when it runs.

The format is Claude Code's, flattened into TOML (docs/hooks.md): an event name, a ``matcher``
(a regular expression the whole tool name must match, case-insensitively, so ``Bash`` and
``Edit|Write`` from a Claude Code setup match ``bash``, ``edit`` and ``write``), a ``command``
(a bash command line, so ``~`` and ``$HOME`` expand as in a shell) and a ``timeout``. Any other
key or event is a ``ConfigError`` naming the file and the key, never a value. Stdlib only: it
runs while the configuration loads.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from minicode.errors import ConfigError

__all__ = ["DEFAULT_TIMEOUT", "EVENTS", "MAX_TIMEOUT", "TOOL_EVENTS", "HookSpec", "parse_hooks"]

EVENTS = ("PreToolUse", "PostToolUse", "UserPromptSubmit", "Stop")
TOOL_EVENTS = ("PreToolUse", "PostToolUse")
"""The events that have a tool, so a ``matcher``."""
DEFAULT_TIMEOUT = 60
"""Seconds a hook may run (Claude Code's default)."""
MAX_TIMEOUT = 600
_KEYS: dict[str, type | tuple[type, ...]] = {"matcher": str, "command": str, "timeout": (int, float)}


@dataclass(frozen=True, slots=True)
class HookSpec:
    """One configured hook."""

    event: str
    command: str
    matcher: str = ""
    """The tool-name pattern; "" (or ``*``): every tool."""
    timeout: float = DEFAULT_TIMEOUT
    file: Path | None = None
    """The config file that declared it (the trust gate asks about a project's own)."""

    def matches(self, tool: str) -> bool:
        if self.matcher in ("", "*"):
            return True
        return re.fullmatch(self.matcher, tool, re.IGNORECASE) is not None


def parse_hooks(path: Path, table: Any) -> tuple[HookSpec, ...]:
    """The hooks of a file's ``hooks`` table, in the order written (the order they run in)."""
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: 'hooks' must hold arrays of tables ([[hooks.PreToolUse]])")
    found: list[HookSpec] = []
    for event, entries in table.items():
        if event not in EVENTS:
            raise ConfigError(f"{path}: unknown hook event [[hooks.{event}]] (allowed: {', '.join(EVENTS)})")
        if not isinstance(entries, list):
            raise ConfigError(f"{path}: hooks.{event} must be an array of tables ([[hooks.{event}]])")
        for number, entry in enumerate(entries, start=1):
            found.append(_parse_one(path, event, number, entry))
    return tuple(found)


def _parse_one(path: Path, event: str, number: int, entry: Any) -> HookSpec:
    where = f"{path}: [[hooks.{event}]] entry {number}"
    if not isinstance(entry, dict):
        raise ConfigError(f"{where} must be a table")
    for key, value in entry.items():
        expected = _KEYS.get(key)
        if expected is None:
            raise ConfigError(f"{where}: unknown key {key} (allowed: {', '.join(_KEYS)})")
        if isinstance(value, bool) or not isinstance(value, expected):
            raise ConfigError(f"{where}: {key} must be {'a number of seconds' if key == 'timeout' else 'a string'}")
    command = entry.get("command", "").strip()
    if not command:
        raise ConfigError(f"{where}: command must name what to run: command = \"~/bin/check-call\"")
    if "\0" in command:
        raise ConfigError(f"{where}: command must not contain a NUL character")
    matcher = entry.get("matcher", "").strip()
    if matcher and event not in TOOL_EVENTS:
        raise ConfigError(f"{where}: matcher is only for {' and '.join(TOOL_EVENTS)} (a {event} hook has no tool)")
    try:
        re.compile(matcher)
    except re.error as e:
        raise ConfigError(f"{where}: matcher is not a regular expression ({e})") from None
    timeout = entry.get("timeout", DEFAULT_TIMEOUT)
    if not 1 <= timeout <= MAX_TIMEOUT:
        raise ConfigError(f"{where}: timeout must be 1-{MAX_TIMEOUT} seconds")
    return HookSpec(event=event, command=command, matcher=matcher, timeout=float(timeout), file=path)
