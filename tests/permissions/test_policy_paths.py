"""edit/write rules: both the path as given and as resolved must be allowed; either denies."""

from __future__ import annotations

import os
from pathlib import Path

from minicode.permissions.policy import Outcome, PermissionPolicy
from minicode.permissions.rules import Effect, Origin, SourcedRule, parse_rule


def _policy(workspace: Path, allow: list[str] = [], deny: list[str] = [], protected: list[Path] = []):
    rules = [SourcedRule(parse_rule(r), Effect.ALLOW, Origin.CONFIG) for r in allow]
    rules += [SourcedRule(parse_rule(r), Effect.DENY, Origin.CONFIG) for r in deny]
    return PermissionPolicy(workspace, rules, protected)


def test_allow_by_tool_and_path(workspace: Path):
    policy = _policy(workspace, allow=["edit(src/**)", "write(docs/**)"])
    assert policy.check("edit", {"path": "src/a.py"}).outcome is Outcome.ALLOW
    assert policy.check("edit", {"path": str(workspace / "src" / "a.py")}).outcome is Outcome.ALLOW
    assert policy.check("write", {"path": "src/a.py"}).outcome is Outcome.ASK  # edit rules are for edit
    assert policy.check("write", {"path": "docs/x/y.md"}).rule == "write(docs/**)"
    assert policy.check("edit", {"path": "src/../README.md"}).outcome is Outcome.ASK


def test_a_bare_tool_rule_covers_the_workspace(workspace: Path):
    policy = _policy(workspace, allow=["write"])
    assert policy.check("write", {"path": "a/b.txt"}).outcome is Outcome.ALLOW


def test_deny_for_edit_or_write_covers_both_tools_and_redirections(workspace: Path):
    policy = _policy(workspace, allow=["write", "edit", "bash(echo *)"], deny=["edit(.env)"])
    for tool in ("edit", "write"):
        verdict = policy.check(tool, {"path": "sub/.env"})
        assert verdict.outcome is Outcome.DENY and verdict.rule == "edit(.env)"
    assert policy.check("bash", {"command": "echo KEY=1 >> .env"}).outcome is Outcome.DENY


def test_a_symlink_into_an_allowed_directory_is_not_enough(workspace: Path):
    (workspace / "src").mkdir()
    (workspace / "secret").mkdir()
    os.symlink(workspace / "secret", workspace / "src" / "link")
    policy = _policy(workspace, allow=["edit(src/**)"], deny=["edit(secret/**)"])
    verdict = policy.check("edit", {"path": "src/link/key.txt"})
    assert verdict.outcome is Outcome.DENY and verdict.rule == "edit(secret/**)"
    policy = _policy(workspace, allow=["edit(src/**)"])
    assert policy.check("edit", {"path": "src/link/key.txt"}).outcome is Outcome.ASK


def test_files_holding_rules_are_always_asked(workspace: Path):
    rules_file = workspace / ".minicode" / "local" / "permissions.toml"
    policy = _policy(workspace, allow=["write", "edit", "bash"], protected=[rules_file])
    for tool in ("write", "edit"):
        verdict = policy.check(tool, {"path": ".minicode/local/permissions.toml"})
        assert verdict.outcome is Outcome.ASK and verdict.protected is not None and verdict.suggested is None
    verdict = policy.check("bash", {"command": "echo 'allow = [\"bash\"]' >> .minicode/local/permissions.toml"})
    assert verdict.outcome is Outcome.ASK and verdict.protected is not None
    assert "no rule can allow that, only a person at the prompt (or --yes)" in verdict.hint()


def test_redirect_outside_the_workspace_needs_an_absolute_rule(workspace: Path, tmp_path: Path):
    outside = tmp_path / "out.log"
    policy = _policy(workspace, allow=["bash(echo *)", "write"])
    verdict = policy.check("bash", {"command": f"echo hi > {outside}"})
    assert verdict.outcome is Outcome.ASK and verdict.needed == (f"write(/{outside})",)
    policy = _policy(workspace, allow=["bash(echo *)", f"write(/{tmp_path}/**)"])
    assert policy.check("bash", {"command": f"echo hi > {outside}"}).outcome is Outcome.ALLOW


def test_the_hint_names_what_would_allow_the_call(workspace: Path):
    policy = _policy(workspace, allow=["bash(git status)"])
    verdict = policy.check("bash", {"command": "git status && pytest -q && touch x"})
    assert verdict.needed == ("bash(pytest *)", "bash(touch *)")
    assert verdict.hint() == (
        "the rules bash(pytest *), bash(touch *) would allow it "
        "(--allow 'bash(pytest *)' --allow 'bash(touch *)', or [permissions] allow in the config)"
    )
    unclear = policy.check("bash", {"command": "eval \"$X\""})
    assert "could not be fully understood (eval runs text as a command)" in unclear.hint()


def test_other_tools_are_asked_unless_denied(workspace: Path):
    assert _policy(workspace).check("future_tool", {}).outcome is Outcome.ASK


def test_a_path_that_cannot_be_resolved_is_never_allowed_by_a_rule(workspace: Path):
    def racing_realpath(path: str) -> str:
        if path.endswith("swapped.txt"):
            raise OSError(22, "Invalid argument")  # readlink of a component renamed meanwhile
        return os.path.realpath(path)

    rules = [SourcedRule(parse_rule("write"), Effect.ALLOW, Origin.CONFIG),
             SourcedRule(parse_rule("write(*.env)"), Effect.DENY, Origin.CONFIG)]
    policy = PermissionPolicy(workspace, rules, realpath=racing_realpath)
    assert policy.check("write", {"path": "d/swapped.txt"}).outcome is Outcome.ASK
    assert policy.check("write", {"path": "d/ok.txt"}).outcome is Outcome.ALLOW
    assert policy.check("write", {"path": "d/x.env"}).outcome is Outcome.DENY


def test_the_hint_for_a_link_names_rules_that_do_allow_it(workspace: Path, tmp_path: Path):
    """Finding P4: following the headless hint must end the loop — it names a rule for the
    real path too, and says where the link leads."""
    (workspace / "src").mkdir()
    (workspace / "top.txt").write_text("t")
    os.symlink("../top.txt", workspace / "src" / "link_top")
    os.symlink("..", workspace / "src" / "up")
    for path, real in (("src/link_top", "top.txt"), ("src/up/x4.txt", "x4.txt")):
        verdict = _policy(workspace, allow=["write(src/**)"]).check("write", {"path": path})
        assert verdict.outcome is Outcome.ASK and verdict.needed == (f"write(./{real})",), verdict
        assert f"{path} leads to {real} through a symbolic link" in verdict.hint()
        followed = _policy(workspace, allow=["write(src/**)", *verdict.needed]).check("write", {"path": path})
        assert followed.outcome is Outcome.ALLOW, followed
    # an absolute path through a link to the workspace: the hint is not the bare "write"
    link = tmp_path / "wslink"
    os.symlink(workspace, link)
    verdict = _policy(workspace, allow=["write(src/**)"]).check("write", {"path": str(link / "src" / "n.py")})
    assert verdict.needed and "write" not in verdict.needed
    followed = _policy(workspace, allow=["write(src/**)", *verdict.needed]).check("write", {"path": str(link / "src" / "n.py")})
    assert followed.outcome is Outcome.ALLOW, (verdict, followed)
