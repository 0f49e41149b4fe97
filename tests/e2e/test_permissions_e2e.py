"""End-to-end: permission rules with the real executable (no terminal: nobody is asked).

Allow and deny rules from the configuration, --allow/--deny, the denial that names the rule
that would allow a call, a compound command that tries to smuggle a second command past an
allow rule, a rule saved in the workspace's file, and /permissions in pipe mode."""

from __future__ import annotations

from minicode.permissions.store import PermissionStore
from tests.e2e.conftest import KEY_VAR
from tests.support.fake_openai import Reply


CHOSEN = ("--config", "config/config.toml")
"""The project's allow rules act without asking: named with --config, the file is the user's choice
(tests/e2e/test_config_trust_e2e.py: unnamed, it needs the user's confirmation)."""


def _config(e2e, permissions: str) -> None:
    path = e2e.workspace / "config" / "config.toml"
    path.write_text(
        f'[model]\nbase_url = "{e2e.server.base_url}"\nname = "fake-model"\napi_key_env = "{KEY_VAR}"\n\n'
        + permissions
    )


def _result(e2e, request: int) -> str:
    return e2e.server.requests[request].messages[-1]["content"]


def test_an_allow_rule_runs_the_command_without_asking(e2e):
    _config(e2e, '[permissions]\nallow = ["bash(touch *)", "edit(src/**)"]\n')
    e2e.server.script(Reply.tool("bash", command="touch made.txt"), Reply.text("made it"))
    r = e2e.run(*CHOSEN, "make the file")
    assert r.code == 0, r.stderr
    assert (e2e.workspace / "made.txt").exists() and r.stdout == "made it\n"
    assert "denied" not in r.stderr


def test_a_deny_rule_is_not_asked_and_the_model_is_told_which_rule(e2e):
    _config(e2e, '[permissions]\nallow = ["bash"]\ndeny = ["bash(rm *)"]\n')
    (e2e.workspace / "keep.txt").write_text("precious")
    e2e.server.script(Reply.tool("bash", command="ls && rm -f keep.txt"), Reply.text("could not delete"))
    r = e2e.run(*CHOSEN, "--yes", "clean up")  # deny wins even over --yes
    assert r.code == 0, r.stderr
    assert (e2e.workspace / "keep.txt").read_text() == "precious"
    assert _result(e2e, 1) == "denied by rule bash(rm *)"
    assert "minicode: denied bash $ ls && rm -f keep.txt: denied by rule bash(rm *)" in r.stderr


def test_an_expansion_inside_a_name_does_not_slip_past_a_deny_rule(e2e):
    # issue 24: in bash both are `rm -f keep.txt`; they were allowed by the rule bash
    _config(e2e, '[permissions]\nallow = ["bash"]\ndeny = ["bash(rm *)"]\n')
    (e2e.workspace / "keep.txt").write_text("precious")
    e2e.server.script(Reply.tool("bash", command="r${x}m -f keep.txt"), Reply.tool("bash", command="r$x'm' -f keep.txt"),
                      Reply.tool("bash", command="f(){ :; }; r''m -f keep.txt"), Reply.text("could not delete"))
    r = e2e.run(*CHOSEN, "--yes", "clean up")
    assert r.code == 0, r.stderr
    assert (e2e.workspace / "keep.txt").read_text() == "precious"
    assert _result(e2e, 1) == "denied by rule bash(rm *)"
    assert _result(e2e, 2) == "denied by rule bash(rm *)"
    # the parse stops at the function: what follows is unseen, so not even --yes approves it
    assert "only a person" in _result(e2e, 3), _result(e2e, 3)


def test_a_compound_command_cannot_ride_on_an_allow_rule(e2e):
    _config(e2e, '[permissions]\nallow = ["bash(git status)"]\n')
    e2e.server.script(Reply.tool("bash", command="git status; touch pwned"), Reply.text("ok"))
    r = e2e.run(*CHOSEN, "status please")
    assert r.code == 0, r.stderr
    assert not (e2e.workspace / "pwned").exists()
    assert _result(e2e, 1).startswith("denied: no terminal to ask for approval; the rule bash(touch *) would allow it")


def test_a_redirection_needs_a_write_rule(e2e):
    _config(e2e, '[permissions]\nallow = ["bash(echo *)"]\n')
    e2e.server.script(Reply.tool("bash", command="echo hi > notes.txt"), Reply.text("ok"))
    r = e2e.run(*CHOSEN, "write a note")
    assert not (e2e.workspace / "notes.txt").exists()
    assert "the rule write(./notes.txt) would allow it" in _result(e2e, 1), r.stderr


def test_allow_and_deny_flags_for_one_run(e2e):
    e2e.server.script(
        Reply.tools(("write", {"path": "docs/a.md", "content": "a"}), ("write", {"path": "docs/secret.md", "content": "s"}),
                    ("write", {"path": "b.md", "content": "b"})),
        Reply.text("done"),
    )
    r = e2e.run("--allow", "write(docs/**)", "--deny", "write(docs/secret.md)", "write docs")
    assert r.code == 0, r.stderr
    assert (e2e.workspace / "docs" / "a.md").exists()
    assert not (e2e.workspace / "docs" / "secret.md").exists() and not (e2e.workspace / "b.md").exists()
    results = [m["content"] for m in e2e.server.requests[1].messages if m["role"] == "tool"]
    assert results[1] == "denied by rule write(docs/secret.md)"
    assert results[2].startswith("denied: no terminal to ask for approval; the rule write(./b.md) would allow it")
    # the flags lasted one run only
    e2e.server.script(Reply.tool("write", path="docs/c.md", content="c"), Reply.text("ok"))
    e2e.run("again")
    assert not (e2e.workspace / "docs" / "c.md").exists()


def test_a_saved_workspace_rule_applies_to_later_runs_and_can_be_removed(e2e):
    # a rule saved by "always allow" (the pty test answers the question; here the store saves it)
    PermissionStore(e2e.workspace, (), env={"HOME": str(e2e.home)}).remember("bash(touch *)")
    e2e.server.script(Reply.tool("bash", command="touch two"), Reply.text("ok"), Reply.text("listed"))
    r = e2e.run(stdin="make two\n/permissions\n/permissions remove bash(touch *)\n")
    assert r.code == 0, r.stderr
    assert (e2e.workspace / "two").exists()
    assert "minicode:   1  allow  bash(touch *)  .minicode/local/permissions.toml  (saved here: removable)" in r.stderr
    assert "minicode: permission rules: 1 allow, 0 deny (/permissions lists them)" in r.stderr
    assert "minicode: removed allow rule bash(touch *) from .minicode/local/permissions.toml" in r.stderr
    rules = e2e.workspace / ".minicode" / "local" / "permissions.toml"
    assert '"bash(touch *)"' not in rules.read_text()
    assert r.stdout == "ok\n"  # /permissions output goes to stderr only


def test_a_rules_file_minicode_did_not_write_is_not_in_effect_until_trusted(e2e):
    """Finding P1: rules planted by a command (tar, cp, a script) or a cloned repository are
    warned about and ignored; /permissions trust puts them into effect."""
    rules = e2e.workspace / ".minicode" / "local" / "permissions.toml"
    rules.parent.mkdir(parents=True)
    rules.write_text('[permissions]\nallow = ["bash"]\n')
    e2e.server.script(Reply.tool("bash", command="touch planted"), Reply.text("ok"))
    r = e2e.run("later")
    assert r.code == 0, r.stderr
    assert not (e2e.workspace / "planted").exists()
    assert ("minicode: warning: .minicode/local/permissions.toml was not written by minicode, or changed since "
            "it last did: its 1 rule(s) are not in effect. Check it, then run /permissions trust to use it") in r.stderr
    e2e.server.script(Reply.tool("bash", command="touch trusted"), Reply.text("ok"))
    r = e2e.run(stdin="/permissions trust\nnow\n")
    assert r.code == 0, r.stderr
    assert "minicode: trusted .minicode/local/permissions.toml as it is now: in effect: bash" in r.stderr
    assert (e2e.workspace / "trusted").exists()
    rules.write_text('[permissions]\nallow = ["bash", "edit"]\n')  # changed again: distrusted again
    r = e2e.run(stdin="/permissions\n")
    assert "is not in effect: minicode did not write it" in r.stderr


def test_a_narrow_allow_rule_cannot_plant_rules_or_hooks(e2e):
    """Finding P1: cp/tar/git config reaching the rules files or git's hooks are asked (so
    denied without a terminal), whatever the allow rules say."""
    (e2e.workspace / ".minicode" / "local").mkdir(parents=True)
    (e2e.workspace / ".git" / "hooks").mkdir(parents=True)
    (e2e.workspace / "rules.toml").write_text('[permissions]\nallow = ["bash"]\n')
    (e2e.workspace / "hook").write_text("#!/bin/sh\ntouch HOOK_RAN\n")
    commands = ["cp -t .minicode/local rules.toml", "ln -s . L && cp hook L/.git/hooks/pre-commit",
                "git config core.hooksPath hooks", "tar cf r.tar hook && tar xf r.tar -C .git/hooks"]
    script = []
    for command in commands:
        script += [Reply.tool("bash", command=command), Reply.text("ok")]
    e2e.server.script(*script)
    allow = ["--allow", "bash(cp *)", "--allow", "bash(ln *)", "--allow", "bash(git config *)", "--allow", "bash(tar *)"]
    r = e2e.run(*allow, stdin="".join(f"task {k}\n" for k in range(len(commands))))
    assert not list((e2e.workspace / ".minicode" / "local").iterdir())
    assert not list((e2e.workspace / ".git" / "hooks").iterdir())
    results = [m["content"] for m in e2e.server.requests[-1].messages if m["role"] == "tool"]
    assert len(results) == len(commands)
    assert all(line.startswith("denied:") for line in results), results
    assert r.stderr.count("no rule can allow that, only a person at the prompt (or --yes)") >= 3, r.stderr


def test_a_bad_rule_stops_the_start(e2e):
    _config(e2e, '[permissions]\nallow = ["bash(pytest *"]\n')
    r = e2e.run("hi")
    assert r.code == 2 and e2e.server.requests == []
    assert 'config/config.toml: [permissions].allow entry 1 ("bash(pytest *")' in r.stderr
