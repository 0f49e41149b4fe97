"""Plain mode and permission rules: the "always in this project" answer, the lines saying
what a rule decided, and /permissions (list, remove)."""

from __future__ import annotations

import io
from pathlib import Path

from minicode.agent.approval import ApprovalRequest, ApprovedBy, Decision
from minicode.agent.events import ApprovalResolved
from minicode.cli.frontends.plain.line_approver import LineApprover
from minicode.cli.frontends.shared.permission_lines import approval_line, permissions_command
from minicode.permissions.rules import Effect, Origin, SourcedRule, parse_rule
from minicode.permissions.store import PermissionStore
from tests.cli.frontends.plain.test_frontend import _Lines


def _bash(command: str, rule: str | None) -> ApprovalRequest:
    return ApprovalRequest("c1", "bash", "/ws", command, {"command": command}, suggested_rule=rule)


async def test_p_saves_the_suggested_rule_and_the_question_says_which():
    err = io.StringIO()
    approval = await LineApprover(_Lines("p"), err).approve(_bash("pytest -q", "bash(pytest *)"))
    assert approval.decision is Decision.ALLOW_ALWAYS
    assert err.getvalue() == (
        "minicode: allow bash $ pytest -q? [y/a/p/N] "
        "(a: allow every bash call for the rest of this session; p: always allow bash(pytest *) in this project) "
    )
    approval = await LineApprover(_Lines("project"), io.StringIO()).approve(_bash("pytest", "bash(pytest *)"))
    assert approval.decision is Decision.ALLOW_ALWAYS


async def test_without_a_suggested_rule_p_is_neither_offered_nor_taken():
    err = io.StringIO()
    approval = await LineApprover(_Lines("p"), err).approve(_bash("pytest && ls", None))
    assert approval.decision is Decision.DENY and approval.reason == "p"
    assert "[y/a/N] " in err.getvalue() and "always allow" not in err.getvalue()


def test_rule_decisions_are_shown_denials_always():
    denied = ApprovalResolved("c1", "bash", False, ApprovedBy.RULE, "bash(rm *)")
    assert approval_line(denied, "bash $ rm -rf x", progress=False) == (
        "minicode: denied bash $ rm -rf x: denied by rule bash(rm *)"
    )
    allowed = ApprovalResolved("c1", "bash", True, ApprovedBy.RULE, "bash(ls *)")
    assert approval_line(allowed, "bash $ ls", progress=False) is None
    assert approval_line(allowed, "bash $ ls", progress=True) == "minicode: allowed by rule bash(ls *): bash $ ls"
    policy = ApprovalResolved("c1", "write", False, ApprovedBy.POLICY, reason="no terminal; the rule …")
    assert approval_line(policy, "write a.txt", progress=False) == "minicode: denied write a.txt: no terminal; the rule …"
    assert approval_line(ApprovalResolved("c1", "bash", True, ApprovedBy.USER), "bash $ ls", True) is None


async def test_permissions_lists_rules_with_their_source(workspace: Path):
    config = workspace / "config" / "config.toml"
    fixed = [SourcedRule(parse_rule("bash(rm *)"), Effect.DENY, Origin.CONFIG, config),
             SourcedRule(parse_rule("edit(src/**)"), Effect.ALLOW, Origin.COMMAND_LINE)]
    store = PermissionStore(workspace, fixed)
    store.remember("bash(pytest *)")
    lines: list[str] = []
    assert await permissions_command(store, "/permissions", lines.append) == 0
    assert lines == [
        "minicode: permission rules (deny wins over allow; calls no rule matches are asked on the terminal,"
        " denied without one):",
        "minicode:   1  deny   bash(rm *)      config/config.toml",
        "minicode:   2  allow  edit(src/**)    --allow (this run)",
        "minicode:   3  allow  bash(pytest *)  .minicode/local/permissions.toml  (saved here: removable)",
        "minicode: /permissions remove N (or RULE) removes a rule saved in this workspace",
    ]


async def test_permissions_remove(workspace: Path):
    store = PermissionStore(workspace, [SourcedRule(parse_rule("bash(ls *)"), Effect.ALLOW, Origin.USER,
                                                    Path("/home/u/.config/minicode/config.toml"))])
    store.remember("bash(pytest *)")
    lines: list[str] = []
    store.remember("bash(ruff *)")
    assert await permissions_command(store, "/permissions remove bash(pytest *)", lines.append) == 0
    assert lines == ["minicode: removed allow rule bash(pytest *) from .minicode/local/permissions.toml"]
    lines.clear()
    assert await permissions_command(store, "/permissions remove 1", lines.append) == 0  # by its number
    assert lines == ["minicode: removed allow rule bash(ruff *) from .minicode/local/permissions.toml"]
    lines.clear()
    assert await permissions_command(store, "/permissions remove bash(ls *)", lines.append) == 1
    assert lines == ["minicode: error: bash(ls *) comes from /home/u/.config/minicode/config.toml: "
                     "edit that file to remove it"]
    lines.clear()
    assert await permissions_command(store, "/permissions drop x", lines.append) == 1
    assert "remove N (or RULE)" in lines[0]


async def test_permissions_without_rules_says_how_to_add_them(workspace: Path):
    lines: list[str] = []
    await permissions_command(PermissionStore(workspace, ()), "/permissions", lines.append)
    assert lines[0] == ("minicode: no permission rules: every write, edit and bash call is asked on the terminal,"
                        " denied without one")
    lines.clear()
    await permissions_command(PermissionStore(workspace, ()), "/permissions", lines.append, yes=True)
    assert lines[0] == "minicode: no permission rules: every write, edit and bash call is approved (--yes)"
    lines.clear()
    assert await permissions_command(PermissionStore(workspace, ()), "/permissions remove 1", lines.append) == 1
    assert lines == ["minicode: error: no rule number 1: /permissions lists 0"]


async def test_a_rules_file_write_offers_neither_session_nor_always():
    err = io.StringIO()
    request = ApprovalRequest("c1", "write", ".minicode/local/permissions.toml", "1 line", {}, always_ask=True)
    approval = await LineApprover(_Lines("a"), err).approve(request)
    assert approval.decision is Decision.DENY and approval.reason == "a"
    assert err.getvalue().endswith("? [y/N] ")


async def test_permissions_trust_puts_a_planted_file_into_effect(workspace: Path, tmp_path: Path):
    file = workspace / ".minicode" / "local" / "permissions.toml"
    file.parent.mkdir(parents=True)
    file.write_text('[permissions]\nallow = ["bash(make *)"]\n')
    store = PermissionStore(workspace, (), env={"HOME": str(tmp_path / "home")})
    lines: list[str] = []
    assert await permissions_command(store, "/permissions", lines.append) == 0
    assert lines[0] == ("minicode: .minicode/local/permissions.toml is not in effect: minicode did not write it, "
                        "or it changed since; check it, then /permissions trust")
    lines.clear()
    assert await permissions_command(store, "/permissions trust", lines.append) == 0
    assert lines == ["minicode: trusted .minicode/local/permissions.toml as it is now: in effect: bash(make *)"]
    lines.clear()
    await permissions_command(store, "/permissions", lines.append)
    assert "is not in effect" not in "".join(lines) and "bash(make *)" in "".join(lines)


async def test_permissions_trust_without_a_file_or_with_words_after_it_fails(workspace: Path, tmp_path: Path):
    store = PermissionStore(workspace, (), env={"HOME": str(tmp_path / "home")})
    lines: list[str] = []
    assert await permissions_command(store, "/permissions trust", lines.append) == 1
    assert lines == ["minicode: error: there is no .minicode/local/permissions.toml to trust"]
    lines.clear()
    assert await permissions_command(store, "/permissions trust all", lines.append) == 1
    assert "/permissions trust puts a rules file" in lines[0]


async def test_remove_by_number_means_the_number_of_the_listing_shown(workspace: Path):
    """Finding T33: after an earlier removal, "remove 2" is still number 2 of the listing the
    user read, not of a renumbered list."""
    store = PermissionStore(workspace, ())
    for rule in ("bash(npm run test *)", "edit(src/**)", 'bash(echo "a b")'):
        store.remember(rule)
    lines: list[str] = []
    await permissions_command(store, "/permissions", lines.append)
    assert any(" 2  allow  edit(src/**)" in line for line in lines)
    lines.clear()
    assert await permissions_command(store, "/permissions remove bash(npm run test *)", lines.append) == 0
    assert await permissions_command(store, "/permissions remove 2", lines.append) == 0
    assert lines[-1] == "minicode: removed allow rule edit(src/**) from .minicode/local/permissions.toml"
    assert await permissions_command(store, "/permissions remove 1", lines.append) == 1  # already removed
    assert "rule number 1 of the last listing, bash(npm run test *), is no longer in effect" in lines[-1]
    assert [r.rule.text for r in store.rules] == ['bash(echo "a b")']
    lines.clear()
    await permissions_command(store, "/permissions", lines.append)  # a new listing renumbers
    assert await permissions_command(store, "/permissions remove 1", lines.append) == 0
    assert lines[-1] == "minicode: removed allow rule bash(echo \"a b\") from .minicode/local/permissions.toml"
