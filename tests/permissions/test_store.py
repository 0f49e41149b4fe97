"""The workspace's rules file: saving, removing, strictness, and which rules are in effect."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from minicode.errors import ConfigError
from minicode.permissions.policy import Outcome
from minicode.permissions.rules import Effect, Origin, SourcedRule, parse_rule
from minicode.permissions.store import PROJECT_RULES_FILE, PermissionStore


def _fixed(*texts: str, origin: Origin = Origin.CONFIG, effect: Effect = Effect.ALLOW) -> list[SourcedRule]:
    return [SourcedRule(parse_rule(t), effect, origin, None if origin is Origin.COMMAND_LINE else Path("/c.toml"))
            for t in texts]


def test_remember_saves_a_private_ignored_file_and_applies_at_once(workspace: Path):
    store = PermissionStore(workspace, ())
    assert store.check("bash", {"command": "pytest -q"}).outcome is Outcome.ASK
    assert store.remember("bash(pytest *)") == ".minicode/local/permissions.toml"
    assert store.check("bash", {"command": "pytest -q"}).outcome is Outcome.ALLOW
    file = workspace / PROJECT_RULES_FILE
    assert stat.S_IMODE(file.stat().st_mode) == 0o600
    assert stat.S_IMODE(file.parent.stat().st_mode) == 0o700
    assert (file.parent / ".gitignore").read_text().splitlines()[-1] == "*"
    assert 'allow = [\n    "bash(pytest *)",\n]' in file.read_text()
    # a new session sees it
    assert PermissionStore(workspace, ()).check("bash", {"command": "pytest"}).rule == "bash(pytest *)"


def test_remember_keeps_rules_another_run_saved_meanwhile(workspace: Path):
    first, second = PermissionStore(workspace, ()), PermissionStore(workspace, ())
    first.remember("bash(pytest *)")
    second.remember("bash(ruff check *)")
    second.remember("bash(ruff check *)")  # saved once only
    texts = [r.rule.text for r in PermissionStore(workspace, ()).rules]
    assert texts == ["bash(pytest *)", "bash(ruff check *)"]


def test_remove_takes_a_workspace_rule_out(workspace: Path):
    store = PermissionStore(workspace, ())
    store.remember("bash(pytest *)")
    removed = store.remove(" bash(pytest *) ")
    assert removed.rule.text == "bash(pytest *)" and removed.origin is Origin.PROJECT
    assert store.check("bash", {"command": "pytest"}).outcome is Outcome.ASK
    assert "bash(pytest *)" not in (workspace / PROJECT_RULES_FILE).read_text()


def test_rules_from_elsewhere_cannot_be_removed_and_the_error_says_where(workspace: Path):
    store = PermissionStore(workspace, [*_fixed("bash(ls *)"), *_fixed("bash(cat *)", origin=Origin.COMMAND_LINE)])
    with pytest.raises(ConfigError, match=r"bash\(ls \*\) comes from /c.toml: edit that file"):
        store.remove("bash(ls *)")
    with pytest.raises(ConfigError, match="given on the command line"):
        store.remove("bash(cat *)")
    with pytest.raises(ConfigError, match=r"no rule bash\(x\) in \.minicode/local/permissions\.toml"):
        store.remove("bash(x)")


def test_rules_in_effect_are_listed_command_line_first(workspace: Path):
    (workspace / PROJECT_RULES_FILE).parent.mkdir(parents=True)
    (workspace / PROJECT_RULES_FILE).write_text('[permissions]\nallow = ["bash(pytest *)"]\ndeny = ["bash(rm *)"]\n')
    store = PermissionStore(workspace, [*_fixed("bash(ls *)"), *_fixed("edit", origin=Origin.COMMAND_LINE)])
    assert [(r.rule.text, r.origin) for r in store.rules] == [
        ("edit", Origin.COMMAND_LINE), ("bash(pytest *)", Origin.PROJECT), ("bash(rm *)", Origin.PROJECT),
        ("bash(ls *)", Origin.CONFIG),
    ]
    assert store.check("bash", {"command": "rm x"}).outcome is Outcome.DENY


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("[permissions\n", "invalid TOML at line 1"),
        ('[permissions]\nallow = ["bash(x"]\n', '[permissions].allow entry 1 ("bash(x")'),
        ("[model]\nname = 'x'\n", "unknown table or key 'model' (allowed: [permissions])"),
    ],
)
def test_a_broken_rules_file_stops_with_its_name(workspace: Path, content: str, message: str):
    file = workspace / PROJECT_RULES_FILE
    file.parent.mkdir(parents=True)
    file.write_text(content)
    with pytest.raises(ConfigError) as caught:
        PermissionStore(workspace, ())
    assert str(file) in str(caught.value) and message in str(caught.value)


def test_saving_refuses_to_write_through_a_symlink(workspace: Path, tmp_path: Path):
    target = tmp_path / "elsewhere.toml"
    target.write_text("[permissions]\n")
    file = workspace / PROJECT_RULES_FILE
    file.parent.mkdir(parents=True)
    os.symlink(target, file)
    store = PermissionStore(workspace, ())
    with pytest.raises(ConfigError, match="symbolic link"):
        store.remember("bash(pytest *)")
    assert target.read_text() == "[permissions]\n"


def test_saving_fails_cleanly_when_the_directory_is_not_writable(workspace: Path):
    (workspace / ".minicode").mkdir()
    (workspace / ".minicode" / "local").write_text("a file where the directory should be")
    store = PermissionStore(workspace, ())
    with pytest.raises(ConfigError, match="cannot save the permission rules"):
        store.remember("bash(pytest *)")
    assert store.check("bash", {"command": "pytest"}).outcome is Outcome.ASK


def test_the_rules_files_are_protected(workspace: Path):
    config = workspace / "config" / "config.toml"
    store = PermissionStore(workspace, _fixed("write", "edit"), protected=[config])
    assert store.check("write", {"path": "config/config.toml"}).protected is not None
    assert store.check("edit", {"path": ".minicode/local/permissions.toml"}).protected is not None
    assert store.check("write", {"path": "config/other.toml"}).outcome is Outcome.ALLOW


@pytest.mark.parametrize(
    "command",
    [
        "cp evil.toml .minicode/local/permissions.toml",
        "sed -i 's/x/y/' config/config.toml",
        "tee -a ./config/config.toml < x",
        "cp hook .git/hooks/pre-commit",
        "cp hook .git/hooks/*",
        "git --git-dir=.git --work-tree=. status --config=.git/config",
        "echo x > .git/hooks/post-checkout",
        "echo x >> .git/config",
    ],
)
def test_commands_naming_protected_files_are_asked_whatever_the_rules(workspace: Path, command: str):
    config = workspace / "config" / "config.toml"
    store = PermissionStore(workspace, _fixed("bash", "write", "edit"), protected=[config])
    verdict = store.check("bash", {"command": command})
    assert verdict.outcome is Outcome.ASK and verdict.protected is not None, verdict


def test_git_hooks_and_config_are_protected_from_the_file_tools_too(workspace: Path):
    store = PermissionStore(workspace, _fixed("write", "edit"))
    assert store.check("write", {"path": ".git/hooks/pre-commit"}).protected is not None
    assert store.check("edit", {"path": ".git/config"}).protected is not None
    assert store.check("write", {"path": ".git/info/exclude"}).outcome is Outcome.ALLOW
    assert store.check("bash", {"command": "git config --get user.name"}).outcome is Outcome.ASK  # no rule
    plain = PermissionStore(workspace, _fixed("bash(cat *)"))
    assert plain.check("bash", {"command": "cat docs/config.md"}).outcome is Outcome.ALLOW  # just a name


@pytest.mark.parametrize("command", ["cat *", "ls src/*.py", "cp x .git/info/*", "rm -f *.pyc"])
def test_ordinary_globs_do_not_count_as_naming_a_protected_file(workspace: Path, command: str):
    store = PermissionStore(workspace, _fixed("bash"), protected=[workspace / "config" / "config.toml"])
    assert store.check("bash", {"command": command}).outcome is Outcome.ALLOW
