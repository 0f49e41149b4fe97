"""End-to-end findings of the round-5 trial (findings-r5-trial.md), with the real executable."""

from __future__ import annotations

from tests.e2e.conftest import Env
from tests.support.fake_openai import Reply


def test_undo_after_a_task_that_changed_no_file_names_an_earlier_task_not_the_last(e2e: Env) -> None:
    # R11: "/undo" right after a question-only task said "undo the last task (“write a”)"
    (e2e.workspace / "a.txt").write_text("one\n")
    e2e.server.script(
        Reply.tool("write", path="a.txt", content="two\n"), Reply.text("wrote"),
        Reply.text("it says two"),
    )
    r = e2e.run("--yes", stdin="write a\nwhat does a.txt say?\n/undo\n")
    assert r.code == 0, r.stderr
    assert "undo the last task" not in r.stderr
    assert "undo an earlier task (“write a”: the newest one with file changes left to undo)" in r.stderr
    assert (e2e.workspace / "a.txt").read_text() == "one\n"


def test_undo_right_after_the_task_that_changed_files_still_says_the_last_task(e2e: Env) -> None:
    (e2e.workspace / "a.txt").write_text("one\n")
    e2e.server.script(Reply.text("hello"), Reply.tool("write", path="a.txt", content="two\n"),
                      Reply.text("wrote"))
    r = e2e.run("--yes", stdin="say hello\nwrite a\n/undo\n")
    assert r.code == 0, r.stderr
    assert "undo the last task (“write a”): 1 of 1 file(s) can be put back" in r.stderr
    assert "an earlier task" not in r.stderr
