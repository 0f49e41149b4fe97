"""A new user's trial, round 4: what the real executable does with a user's slips."""

from __future__ import annotations

from tests.e2e.conftest import Env
from tests.support.fake_openai import Reply


def test_an_empty_task_is_a_usage_error_not_pipe_mode(e2e: Env) -> None:
    """`git diff | minicode --yes "$PROMPT"` with PROMPT unset: minicode saw a TASK of "" and
    ran pipe mode, every line of the diff a task of its own, approved by --yes."""
    e2e.server.script(Reply.text("one"), Reply.text("two"))
    for task in ("", "   ", "\t\n"):
        r = e2e.run("--yes", task, stdin="diff line one\ndiff line two\n")
        assert r.code == 2, r
        assert r.stdout == ""
        assert "minicode: error: the TASK is empty" in r.stderr
    assert e2e.server.requests == []
    assert not (e2e.workspace / ".minicode" / "sessions").exists() or not list(
        (e2e.workspace / ".minicode" / "sessions").glob("*-*.jsonl"))


def test_a_task_given_with_blank_words_around_it_still_runs(e2e: Env) -> None:
    e2e.server.script(Reply.text("ran"))
    r = e2e.run("", "say hi", " ", stdin="")
    assert r.code == 0 and r.stdout == "ran\n"
    assert e2e.server.requests[0].messages[-1]["content"] == "say hi"


def test_permissions_in_pipe_mode_says_what_happens_to_calls_no_rule_decides(e2e: Env) -> None:
    """With --yes nothing is asked: /permissions said "every write, edit and bash call is asked"."""
    yes = e2e.run("--yes", stdin="/permissions\n")
    assert yes.code == 0
    assert "minicode: no permission rules: every write, edit and bash call is approved (--yes)" in yes.stderr
    plain = e2e.run("--allow", "bash(ls *)", stdin="/permissions\n")
    assert plain.code == 0
    assert ("calls no rule matches are asked on the terminal, denied without one" in plain.stderr), plain.stderr
    assert e2e.server.requests == []
