"""Permission rules: the ``tool(pattern)`` syntax, where each rule came from, strict parsing
of ``[permissions]`` tables. Pure; imports only the standard library and ``minicode.errors``.

A rule is ``bash``, ``edit`` or ``write`` (every call of that tool) or the tool with a pattern:
``bash(pytest *)``, ``bash(git status)``, ``bash(npm run test:*)``, ``edit(src/**)``,
``write(docs/*.md)``, and for MCP servers' tools ``mcp`` (every one), ``mcp(git__git_status)`` or
``mcp(git__*)`` (``*`` is any run of characters). Tool names are case-insensitive (``Bash(…)`` as Claude Code writes it);
the canonical text is lower-case. Read-only tools (read, ls, glob, grep) never ask, so a rule
for them is an error rather than something silently ignored.
"""

from __future__ import annotations

import enum
import json
import re
from pathlib import Path
from typing import Any

from minicode.errors import ConfigError
from dataclasses import dataclass
from minicode.permissions.patterns import CommandPattern, PathPattern, PatternError, compile_command, compile_path

__all__ = [
    "RULE_TOOLS",
    "Effect",
    "Origin",
    "Rule",
    "RuleError",
    "SourcedRule",
    "parse_rule",
    "rules_from_table",
]

RULE_TOOLS = ("bash", "edit", "write", "mcp")
READ_ONLY_TOOLS = ("read", "ls", "glob", "grep")
MAX_RULE_LENGTH = 1000
TABLE_KEYS = ("allow", "deny")


class RuleError(ConfigError):
    """A rule that cannot be used; the message says why (exit 2 like any configuration error)."""


class Effect(enum.Enum):
    ALLOW = "allow"
    DENY = "deny"


class Origin(enum.Enum):
    """Where a rule came from (shown by /permissions; only PROJECT rules can be removed there)."""

    COMMAND_LINE = "command line"
    PROJECT = "project"  # the per-workspace file "always allow" writes (.minicode/local/permissions.toml)
    CONFIG = "config"  # the workspace's config/config.toml or --config PATH
    USER = "user"  # the per-user config file


@dataclass(frozen=True, slots=True)
class Rule:
    tool: str
    pattern: str | None  # None: every call of the tool
    command: CommandPattern | None = None
    path: PathPattern | None = None

    @property
    def text(self) -> str:
        return self.tool if self.pattern is None else f"{self.tool}({self.pattern})"

    def __str__(self) -> str:
        return self.text


@dataclass(frozen=True, slots=True)
class SourcedRule:
    rule: Rule
    effect: Effect
    origin: Origin
    file: Path | None = None  # None for --allow/--deny


def parse_rule(text: str) -> Rule:
    """``bash``, ``bash(pytest *)``, ``edit(src/**)``, …; raises RuleError saying why not."""
    if not isinstance(text, str):
        raise RuleError("a rule must be a string like \"bash(pytest *)\"")
    stripped = text.strip()
    if not stripped:
        raise RuleError("the rule is empty")
    if len(stripped) > MAX_RULE_LENGTH:
        raise RuleError(f"the rule is longer than {MAX_RULE_LENGTH} characters")
    if any(ord(c) < 32 or ord(c) == 127 for c in stripped):
        raise RuleError("the rule contains a control character (a newline or tab)")
    name, opening, rest = stripped.partition("(")
    tool = name.strip().lower()
    _check_tool(tool, name.strip())
    if not opening:
        return Rule(tool, None)
    if not rest.endswith(")"):
        raise RuleError('a rule with a pattern must end with ")" — e.g. bash(pytest *)')
    pattern = rest[:-1].strip()
    if not pattern:
        raise RuleError(f'the pattern is empty; write "{tool}" alone for every {tool} call')
    if tool == "mcp":
        if not re.fullmatch(r"[A-Za-z0-9_*.-]+", pattern) or "__" not in pattern:
            raise RuleError("an mcp rule names server__tool (letters, digits, _ - . and * for any): mcp(git__git_status)")
        return Rule(tool, pattern)
    try:
        if tool == "bash":
            return Rule(tool, pattern, command=compile_command(pattern))
        return Rule(tool, pattern, path=compile_path(pattern))
    except PatternError as e:
        raise RuleError(str(e)) from e


def _check_tool(tool: str, written: str) -> None:
    if tool in RULE_TOOLS:
        return
    if tool in READ_ONLY_TOOLS:
        raise RuleError(f"{written} is read-only and never asks: it needs no rule")
    raise RuleError(f"unknown tool {written!r} (rules name bash, edit, write or mcp)")


def rules_from_table(table: Any, where: str, origin: Origin, file: Path | None) -> list[SourcedRule]:
    """The rules of a ``[permissions]`` table; ``where`` (the file) starts every error, which
    names the key and the entry: ``<file>: [permissions].allow entry 2 ("bash(x"): …``."""
    if not isinstance(table, dict):
        raise RuleError(f"{where}: 'permissions' must be a table ([permissions])")
    found: list[SourcedRule] = []
    for key, entries in table.items():
        if key not in TABLE_KEYS:
            raise RuleError(f"{where}: unknown key [permissions].{key} (allowed: {', '.join(TABLE_KEYS)})")
        if not isinstance(entries, list):
            raise RuleError(f'{where}: [permissions].{key} must be an array of strings, e.g. ["bash(pytest *)"]')
        for number, entry in enumerate(entries, start=1):
            try:
                rule = parse_rule(entry)
            except RuleError as e:
                raise RuleError(f"{where}: [permissions].{key} entry {number} ({_shown(entry)}): {e}") from None
            found.append(SourcedRule(rule, Effect(key), origin, file))
    return found


def _shown(entry: object) -> str:
    if not isinstance(entry, str):
        return f"a {type(entry).__name__}, not a string"
    text = entry if len(entry) <= 80 else entry[:79] + "…"
    return json.dumps(text, ensure_ascii=False)  # quoted, control characters escaped
