"""[permissions] in the configuration files and --allow/--deny, through main(): the per-user
file's rules and the project file's rules add up, and a bad rule stops the start (exit 2)
naming the file (or flag), the key and the entry."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from minicode.cli.main import main
from minicode.permissions.rules import Effect, Origin
from tests.test_config import GOOD, SECRET, frontend, write, ws  # noqa: F401 - fixtures

LOCAL = GOOD.replace("https://api.example.com/v1", "http://127.0.0.1:8080/v1")
"""A project's file the user need not confirm (a server on this machine, a key of its own):
what these tests check comes after that question."""

USER_KEYLESS = '[model]\nbase_url = "http://127.0.0.1:9/v1"\nname = "local"\napi_key = ""\n'


def _user_file(home: Path, text: str) -> Path:
    path = home / ".config" / "minicode" / "config.toml"
    path.parent.mkdir(parents=True)
    path.write_text(text)
    return path


def _rules(call: dict[str, Any]) -> list[tuple[str, Effect, Origin]]:
    return [(r.rule.text, r.effect, r.origin) for r in call["config"].permissions]


def test_project_rules_add_to_the_users_and_the_command_line_comes_first(
    home: Path, ws: Path, frontend: list[dict[str, Any]],
) -> None:
    user = _user_file(home, USER_KEYLESS + '[permissions]\nallow = ["bash(git status)"]\ndeny = ["bash(rm *)"]\n')
    project = write(ws, GOOD + '[permissions]\nallow = ["bash(pytest *)"]\n')
    # named with --config: the project's allow rule is the user's choice (unnamed it must be confirmed first)
    assert main(["-C", str(ws), "--config", "config/config.toml", "--allow", "edit(src/**)", "--deny",
                 "bash(git push *)", "--allow", "write", "x"]) == 0
    (call,) = frontend
    assert _rules(call) == [
        ("edit(src/**)", Effect.ALLOW, Origin.COMMAND_LINE),
        ("write", Effect.ALLOW, Origin.COMMAND_LINE),
        ("bash(git push *)", Effect.DENY, Origin.COMMAND_LINE),
        ("bash(pytest *)", Effect.ALLOW, Origin.CONFIG),
        ("bash(git status)", Effect.ALLOW, Origin.USER),
        ("bash(rm *)", Effect.DENY, Origin.USER),
    ]
    assert call["config"].rule_files == (project, user)


def test_the_user_file_alone_is_read_once(home: Path, tmp_path: Path, frontend: list[dict[str, Any]]) -> None:
    _user_file(home, USER_KEYLESS + '[permissions]\nallow = ["bash(ls *)"]\n')
    empty = tmp_path / "empty"
    empty.mkdir()
    assert main(["-C", str(empty), "x"]) == 0
    assert _rules(frontend[0]) == [("bash(ls *)", Effect.ALLOW, Origin.USER)]


@pytest.mark.parametrize(
    ("where", "text", "message"),
    [
        ("project", '[permissions]\nallow = ["bash(pytest *"]\n', '[permissions].allow entry 1 ("bash(pytest *")'),
        ("project", '[permissions]\ndeny = "bash"\n', "[permissions].deny must be an array of strings"),
        ("project", '[permissions]\nask = ["bash"]\n', "unknown key [permissions].ask"),
        ("user", '[permissions]\nallow = ["ls(src)"]\n', '[permissions].allow entry 1 ("ls(src)"): ls is read-only'),
        ("user", "[permissions\n", "invalid TOML at line 1"),
    ],
)
def test_a_bad_rule_exits_2_naming_file_key_and_entry(
    home: Path, ws: Path, frontend: list[dict[str, Any]], capsys: pytest.CaptureFixture[str],
    where: str, text: str, message: str,
) -> None:
    if where == "project":
        path = write(ws, GOOD + text)
    else:
        write(ws, LOCAL)
        path = _user_file(home, text)
    assert main(["-C", str(ws), "x"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"minicode: error: {path}: ") and message in err and SECRET not in err
    assert frontend == []


@pytest.mark.parametrize(("flag", "rule"), [("--allow", "bash(x"), ("--deny", "grep(*)"), ("--allow", "")])
def test_a_bad_flag_rule_exits_2_naming_the_flag(
    home: Path, ws: Path, frontend: list[dict[str, Any]], capsys: pytest.CaptureFixture[str], flag: str, rule: str,
) -> None:
    write(ws, LOCAL)
    assert main(["-C", str(ws), flag, rule, "x"]) == 2
    assert capsys.readouterr().err.startswith(f"minicode: error: {flag} {rule!r}: ")
    assert frontend == []
