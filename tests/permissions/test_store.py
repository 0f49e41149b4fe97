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


@pytest.mark.parametrize("path", [
    ".minicode/sessions/4f73.jsonl", ".minicode/snapshots/4f73/journal.jsonl",
    ".minicode/sessions/input-history.jsonl", ".minicode/sessions/catalog.json", ".minicode/tmp/writes-1.jsonl",
    "./.minicode/x", "src/../.minicode/sessions/a.jsonl",
])
def test_minicodes_own_state_is_asked_every_time_whatever_the_rules(workspace: Path, path: str):
    """Finding T23: with a write permission the model could plant messages in a session the
    user later resumes, or rewrite what /undo restores."""
    store = PermissionStore(workspace, _fixed("write", "edit", "bash"))
    for tool in ("write", "edit"):
        verdict = store.check(tool, {"path": path})
        assert verdict.outcome is Outcome.ASK and verdict.protected is not None, verdict
        assert verdict.suggested is None
    assert store.check("bash", {"command": f"echo x > {path}"}).protected is not None
    assert store.check("write", {"path": "src/minicode.py"}).outcome is Outcome.ALLOW
    assert store.check("write", {"path": "docs/.minicode.md"}).outcome is Outcome.ALLOW


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


# --- trust: only content minicode wrote (or a person confirmed) is in effect (finding P1) -------


def _trusting(workspace: Path, home: Path, fixed: list[SourcedRule] | None = None) -> PermissionStore:
    return PermissionStore(workspace, fixed or (), env={"HOME": str(home)})


def test_rules_minicode_saved_stay_in_effect_and_are_recorded_outside_the_workspace(workspace: Path, tmp_path: Path):
    home = tmp_path / "home"
    _trusting(workspace, home).remember("bash(pytest *)")
    records = list((home / ".minicode" / "trusted-rules").iterdir())
    assert len(records) == 1 and stat.S_IMODE(records[0].stat().st_mode) == 0o600
    later = _trusting(workspace, home)
    assert later.check("bash", {"command": "pytest"}).outcome is Outcome.ALLOW
    assert not later.untrusted and later.warnings == []


def test_a_planted_rules_file_is_ignored_with_a_warning(workspace: Path, tmp_path: Path):
    file = workspace / PROJECT_RULES_FILE
    file.parent.mkdir(parents=True)
    file.write_text('[permissions]\nallow = ["bash"]\n')
    store = _trusting(workspace, tmp_path / "home")
    assert store.untrusted and store.rules == ()
    assert store.check("bash", {"command": "touch x"}).outcome is Outcome.ASK
    assert store.warnings == [".minicode/local/permissions.toml was not written by minicode, or changed since it "
                              "last did: its 1 rule(s) are not in effect. Check it, then run /permissions trust to use it"]


def test_a_file_changed_after_minicode_wrote_it_is_ignored_and_cannot_be_extended(workspace: Path, tmp_path: Path):
    home = tmp_path / "home"
    _trusting(workspace, home).remember("bash(pytest *)")
    file = workspace / PROJECT_RULES_FILE
    file.write_text(file.read_text().replace('"bash(pytest *)"', '"bash"'))
    store = _trusting(workspace, home)
    assert store.untrusted and store.check("bash", {"command": "touch x"}).outcome is Outcome.ASK
    with pytest.raises(ConfigError, match="changed outside minicode"):
        store.remember("bash(ruff *)")  # saving would bless the planted rule
    assert '"bash"' in file.read_text() and "ruff" not in file.read_text()


def test_without_home_a_planted_file_is_not_in_effect_until_a_person_trusts_it(workspace: Path):
    """A CI job or a service often runs without $HOME: nowhere to record what minicode wrote, so a
    file a cloned repository ships (allow = ["bash"]) must not pass for the user's own."""
    file = workspace / PROJECT_RULES_FILE
    file.parent.mkdir(parents=True)
    file.write_text('[permissions]\nallow = ["bash"]\n')
    store = PermissionStore(workspace, (), env={"PATH": "/usr/bin"})
    assert store.untrusted and store.check("bash", {"command": "touch x"}).outcome is Outcome.ASK
    assert store.warnings == [".minicode/local/permissions.toml cannot be checked without $HOME (where minicode "
                              "records what it wrote): its 1 rule(s) are not in effect. Check it, then run "
                              "/permissions trust to use it"]
    assert [r.rule.text for r in store.trust()] == ["bash"]  # a person's word: for this run
    assert store.check("bash", {"command": "touch x"}).outcome is Outcome.ALLOW
    assert PermissionStore(workspace, (), env={"PATH": "/usr/bin"}).untrusted  # nothing could be recorded


def test_trust_puts_the_file_into_effect(workspace: Path, tmp_path: Path):
    file = workspace / PROJECT_RULES_FILE
    file.parent.mkdir(parents=True)
    file.write_text('[permissions]\nallow = ["bash(make *)"]\n')
    store = _trusting(workspace, tmp_path / "home")
    assert [r.rule.text for r in store.trust()] == ["bash(make *)"]
    assert not store.untrusted and store.check("bash", {"command": "make"}).outcome is Outcome.ALLOW
    assert _trusting(workspace, tmp_path / "home").check("bash", {"command": "make"}).outcome is Outcome.ALLOW


def test_trust_refuses_a_missing_or_broken_file_and_a_record_it_cannot_write(workspace: Path, tmp_path: Path):
    home = tmp_path / "home"
    with pytest.raises(ConfigError, match="there is no .minicode/local/permissions.toml to trust"):
        _trusting(workspace, home).trust()
    file = workspace / PROJECT_RULES_FILE
    file.parent.mkdir(parents=True)
    file.write_text('[permissions]\nallow = ["bash(pytest *"]\n')
    store = _trusting(workspace, home)
    assert "it is not a valid rules file" in store.warnings[0]  # a broken untrusted file never stops the start
    with pytest.raises(ConfigError, match=r"\[permissions\].allow entry 1"):
        store.trust()
    file.write_text('[permissions]\nallow = ["bash(make *)"]\n')
    (home / ".minicode").mkdir(parents=True)
    (home / ".minicode" / "trusted-rules").write_text("a file where the directory should be")
    with pytest.raises(ConfigError, match="cannot record the trusted rules"):
        _trusting(workspace, home).trust()


def test_the_trust_record_and_the_user_configuration_are_protected(workspace: Path, tmp_path: Path):
    home = tmp_path / "home"
    store = PermissionStore(workspace, _fixed("bash(cp *)", "write(**)"), env={"HOME": str(home)},
                            user_dirs=(home / ".config" / "minicode",))
    for command in ("cp x ~/.minicode/trusted-rules/k.json", "cp x ~/.config/minicode/config.toml",
                    "cp x ~/.gitconfig", "echo '[core] fsmonitor = x' >> $HOME/.config/git/config"):
        assert store.check("bash", {"command": command}).protected is not None, command
    assert store.check("write", {"path": str(home / ".config" / "minicode" / "config.toml")}).protected is not None
