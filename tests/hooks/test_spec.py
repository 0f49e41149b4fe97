"""The [[hooks.EVENT]] tables: what is accepted, what is a config error (naming file and key, never a value)."""

from __future__ import annotations

from pathlib import Path

import pytest

from minicode.config import parse_config
from minicode.errors import ConfigError
from minicode.hooks.spec import DEFAULT_TIMEOUT, HookSpec, parse_hooks

PATH = Path("/p/config.toml")


def test_tables_parse_in_order_with_defaults() -> None:
    hooks = parse_hooks(PATH, {
        "PreToolUse": [{"matcher": "Bash", "command": " ~/bin/check-call ", "timeout": 5}, {"command": "b"}],
        "Stop": [{"command": "c"}],
    })
    assert hooks == (
        HookSpec("PreToolUse", "~/bin/check-call", "Bash", 5.0, PATH),
        HookSpec("PreToolUse", "b", "", float(DEFAULT_TIMEOUT), PATH),
        HookSpec("Stop", "c", "", float(DEFAULT_TIMEOUT), PATH),
    )


@pytest.mark.parametrize(("matcher", "tool", "matches"), [
    ("", "bash", True), ("*", "edit", True), ("Bash", "bash", True), ("Edit|Write", "write", True),
    ("bash", "bash_extra", False), ("ed", "edit", False), ("mcp__.*", "mcp__files__read", True),
])
def test_the_matcher_is_a_case_blind_regex_of_the_whole_tool_name(matcher: str, tool: str, matches: bool) -> None:
    assert HookSpec("PreToolUse", "x", matcher).matches(tool) is matches


@pytest.mark.parametrize(("table", "message"), [
    ({"PreToolCall": [{"command": "x"}]}, "unknown hook event [[hooks.PreToolCall]]"),
    ({"pretooluse": [{"command": "x"}]}, "unknown hook event [[hooks.pretooluse]]"),
    ({"PreToolUse": {"command": "x"}}, "hooks.PreToolUse must be an array of tables"),
    ({"PreToolUse": ["x"]}, "entry 1 must be a table"),
    ({"PreToolUse": [{"command": "x", "type": "command"}]}, "unknown key type (allowed: matcher, command, timeout)"),
    ({"PreToolUse": [{"matcher": "bash"}]}, "command must name what to run"),
    ({"PreToolUse": [{"command": "  "}]}, "command must name what to run"),
    ({"PreToolUse": [{"command": ["ls"]}]}, "command must be a string"),
    ({"PreToolUse": [{"command": "a\0b"}]}, "must not contain a NUL"),
    ({"PreToolUse": [{"command": "x", "timeout": 0.5}]}, "timeout must be 1-600 seconds"),
    ({"PreToolUse": [{"command": "x", "timeout": 601}]}, "timeout must be 1-600 seconds"),
    ({"PreToolUse": [{"command": "x", "timeout": True}]}, "timeout must be a number of seconds"),
    ({"PreToolUse": [{"command": "x", "matcher": "(bash"}]}, "matcher is not a regular expression"),
    ({"Stop": [{"command": "x", "matcher": "bash"}]}, "matcher is only for PreToolUse and PostToolUse"),
])
def test_mistakes_are_config_errors(table: dict, message: str) -> None:
    with pytest.raises(ConfigError, match="^/p/config.toml: ") as caught:
        parse_hooks(PATH, table)
    assert message in str(caught.value)


def test_a_hooks_key_that_is_no_table_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="'hooks' must hold arrays of tables"):
        parse_hooks(PATH, "x")


def test_the_config_file_carries_its_hooks() -> None:
    data = {"model": {"base_url": "http://127.0.0.1:9/v1", "name": "m", "api_key": ""},
            "hooks": {"UserPromptSubmit": [{"command": "true"}]}}
    config = parse_config(PATH, data, {})
    assert config.hooks == (HookSpec("UserPromptSubmit", "true", file=PATH),)
    assert parse_config(PATH, {"model": data["model"]}, {}).hooks == ()
