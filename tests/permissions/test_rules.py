"""Rule syntax and strict [permissions] tables: a bad entry names the file, key and entry."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from minicode.errors import ConfigError
from minicode.permissions.rules import Effect, Origin, RuleError, parse_rule, rules_from_table


@pytest.mark.parametrize(
    ("text", "tool", "pattern"),
    [
        ("bash", "bash", None),
        ("edit", "edit", None),
        ("Bash(npm run test:*)", "bash", "npm run test:*"),  # Claude Code's spelling
        ("  write( docs/** )  ", "write", "docs/**"),
        ("bash(echo (x))", "bash", "echo (x)"),
    ],
)
def test_valid_rules(text: str, tool: str, pattern: str | None):
    rule = parse_rule(text)
    assert (rule.tool, rule.pattern) == (tool, pattern)
    assert rule.text == (tool if pattern is None else f"{tool}({pattern})")


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("", "empty"),
        ("bash()", "pattern is empty"),
        ("bash(pytest *", 'must end with ")"'),
        ("read(src/**)", "read-only"),
        ("grep", "read-only"),
        ("webfetch(x)", "unknown tool"),
        ("bash(npm:*:x)", ":* may only end"),
        ('bash(echo "x)', "unbalanced quote"),
        ("edit(~/notes.md)", "~ is not expanded"),
        ("edit(src/../x)", ".. is not allowed"),
        ("edit(src\\x)", "backslash"),
        ("edit(a[b)", "unclosed ["),
        ("bash(ls\nrm)", "control character"),
    ],
)
def test_invalid_rules_say_why(text: str, why: str):
    with pytest.raises(RuleError, match=re.escape(why)):
        parse_rule(text)


def test_a_rule_error_is_a_configuration_error():
    assert issubclass(RuleError, ConfigError)


def test_table_rules_keep_their_effect_and_origin(tmp_path: Path):
    file = tmp_path / "c.toml"
    rules = rules_from_table({"allow": ["bash(pytest *)"], "deny": ["bash(rm *)"]}, str(file), Origin.CONFIG, file)
    assert [(r.rule.text, r.effect, r.origin, r.file) for r in rules] == [
        ("bash(pytest *)", Effect.ALLOW, Origin.CONFIG, file),
        ("bash(rm *)", Effect.DENY, Origin.CONFIG, file),
    ]


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ({"allow": ["bash(pytest *)", "bash(x"]}, '/c.toml: [permissions].allow entry 2 ("bash(x"): '),
        ({"deny": ["read(x)"]}, '[permissions].deny entry 1 ("read(x)"): read is read-only'),
        ({"allow": "bash"}, "[permissions].allow must be an array of strings"),
        ({"allow": [3]}, "[permissions].allow entry 1 (a int, not a string)"),
        ({"ask": ["bash"]}, "unknown key [permissions].ask (allowed: allow, deny)"),
        ({"allow": ["bash(a\u0007b)"]}, '("bash(a\\u0007b)")'),
    ],
)
def test_table_errors_name_file_key_and_entry(table: dict[str, object], message: str):
    with pytest.raises(RuleError) as caught:
        rules_from_table(table, "/c.toml", Origin.CONFIG, Path("/c.toml"))
    assert str(caught.value).startswith("/c.toml: ") and message in str(caught.value)


def test_a_table_that_is_not_a_table():
    with pytest.raises(RuleError, match=r"must be a table \(\[permissions\]\)"):
        rules_from_table(["bash"], "/c.toml", Origin.CONFIG, None)
