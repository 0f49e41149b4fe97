"""End-to-end: undo snapshots and the pipe-mode commands (/undo, /new, /model, /think) with the
real executable against the fake server."""

from __future__ import annotations

import json
import os

from tests.e2e.conftest import Env
from tests.support.fake_openai import Reply


def _write_and_edit(e2e: Env) -> None:
    (e2e.workspace / "app.py").write_text("x = 1\ny = 2\n")
    (e2e.workspace / "notes.txt").write_text("old notes\n")
    os.chmod(e2e.workspace / "notes.txt", 0o640)
    e2e.server.script(
        Reply.tool("read", path="app.py"),
        Reply.tools(("edit", {"path": "app.py", "old_text": "x = 1", "new_text": "x = 100"}),
                    ("write", {"path": "notes.txt", "content": "new notes\n"}),
                    ("write", {"path": "src/new_module.py", "content": "print('new')\n"})),
        Reply.text("Changed three files."),
    )


def test_undo_restores_write_edit_and_new_file_after_resume(e2e: Env) -> None:
    _write_and_edit(e2e)
    run = e2e.run("--yes", stdin="change the files\n")
    assert run.code == 0, run.stderr
    assert (e2e.workspace / "app.py").read_text() == "x = 100\ny = 2\n"
    assert (e2e.workspace / ".minicode" / "snapshots" / ".gitignore").read_text() == "*\n"
    undo = e2e.run("--session", run.session_id[:8], "--yes", stdin="/undo\n")
    assert undo.code == 0, undo.stderr
    assert (e2e.workspace / "app.py").read_text() == "x = 1\ny = 2\n"
    assert (e2e.workspace / "notes.txt").read_text() == "old notes\n"
    assert os.stat(e2e.workspace / "notes.txt").st_mode & 0o777 == 0o640
    assert not (e2e.workspace / "src" / "new_module.py").exists()
    err = undo.stderr
    assert "undo the last task (“change the files”)" in err
    assert "restore app.py (+1 −1)" in err and "delete  src/new_module.py (the task created it, 1 line)" in err
    assert "restored app.py, notes.txt; deleted src/new_module.py" in err
    assert len(e2e.server.requests) == 3  # /undo called no model
    again = e2e.run("--session", run.session_id, "--yes", stdin="/undo\n")
    assert again.code == 0 and "nothing to undo" in again.stderr


def test_undo_without_a_terminal_asks_for_yes(e2e: Env) -> None:
    _write_and_edit(e2e)
    run = e2e.run("--yes", stdin="change the files\n")
    r = e2e.run("--session", run.session_id, stdin="/undo\n")
    assert r.code == 1
    assert "there is no terminal to ask" in r.stderr and "--yes" in r.stderr
    assert (e2e.workspace / "app.py").read_text() == "x = 100\ny = 2\n"  # nothing restored


def test_a_file_changed_since_is_skipped(e2e: Env) -> None:
    _write_and_edit(e2e)
    run = e2e.run("--yes", stdin="change the files\n")
    (e2e.workspace / "notes.txt").write_text("my own edit\n")
    r = e2e.run("--session", run.session_id, "--yes", stdin="/undo\n")
    assert r.code == 0, r.stderr
    assert "skip    notes.txt: it was changed since minicode wrote it" in r.stderr
    assert (e2e.workspace / "notes.txt").read_text() == "my own edit\n"
    assert (e2e.workspace / "app.py").read_text() == "x = 1\ny = 2\n"


def test_undo_in_the_same_run_walks_back_and_tells_the_model(e2e: Env) -> None:
    e2e.server.script(
        Reply.tool("write", path="f.txt", content="one\n"), Reply.text("wrote one"),
        Reply.tool("write", path="f.txt", content="two\n"), Reply.text("wrote two"),
        Reply.text("understood"),
    )
    r = e2e.run("--yes", stdin="write one\nwrite two\n/undo\n/undo\nwhat is in f.txt?\n")
    assert r.code == 0, r.stderr
    assert not (e2e.workspace / "f.txt").exists()
    assert r.stderr.count("undo the last task (“write two”)") == 1
    assert "undo an earlier task (“write one”: the newest one with file changes left to undo)" in r.stderr
    last = e2e.server.requests[-1].messages[-1]["content"]
    assert last.startswith("[minicode note: the user undid file changes with /undo: restored f.txt")
    assert "deleted f.txt" in last and last.endswith("what is in f.txt?")


def test_a_bash_only_task_says_commands_are_not_tracked(e2e: Env) -> None:
    e2e.server.script(Reply.tool("bash", command="echo made > by-bash.txt"), Reply.text("ran it"))
    r = e2e.run("--yes", stdin="run a command\n/undo\n")
    assert r.code == 0, r.stderr
    assert "nothing to undo" in r.stderr and "Commands run by bash are not tracked" in r.stderr
    assert (e2e.workspace / "by-bash.txt").exists()


def test_nothing_to_undo_in_a_new_session(e2e: Env) -> None:
    r = e2e.run(stdin="/undo\n")
    assert r.code == 0 and "nothing to undo" in r.stderr and e2e.server.requests == []


def test_a_damaged_snapshot_is_an_error_with_a_clear_message(e2e: Env) -> None:
    (e2e.workspace / "a.txt").write_text("precious\n")
    e2e.server.script(Reply.tool("write", path="a.txt", content="replaced\n"), Reply.text("done"))
    run = e2e.run("--yes", stdin="overwrite a.txt\n")
    blobs = e2e.workspace / ".minicode" / "snapshots" / run.session_id / "blobs"
    for blob in blobs.iterdir():
        blob.write_bytes(b"corrupted")
    r = e2e.run("--session", run.session_id, "--yes", stdin="/undo\n")
    assert r.code == 1
    assert "skip    a.txt: cannot be restored: its copy is damaged" in r.stderr
    assert (e2e.workspace / "a.txt").read_text() == "replaced\n"
    (e2e.workspace / ".minicode" / "snapshots" / run.session_id / "journal.jsonl").write_text("{oops\n")
    r = e2e.run("--session", run.session_id, "--yes", stdin="/undo\n")
    assert r.code == 1 and "undo journal" in r.stderr and "damaged at line 1" in r.stderr


def test_new_starts_a_fresh_session_and_keeps_the_old_one(e2e: Env) -> None:
    e2e.server.script(Reply.text("first answer"), Reply.text("second answer"))
    r = e2e.run(stdin="remember the number 7\n/new\nwhat number?\n")
    assert r.code == 0, r.stderr
    sessions = [line.split()[-1] for line in r.stderr.splitlines() if line.startswith("minicode: session ")]
    assert len(sessions) == 2 and sessions[0] != sessions[1]
    assert f"the previous session stays: resume it with minicode --session {sessions[0]}" in r.stderr
    second = [m["content"] for m in e2e.server.requests[1].messages if m["role"] == "user"]
    assert second == ["what number?"]
    listed = e2e.run("--sessions")
    assert sessions[0][:8] in listed.stdout and sessions[1][:8] in listed.stdout


def test_model_and_think_switch_for_the_rest_of_the_session(e2e: Env) -> None:
    e2e.server.script(Reply.text("a"), Reply.text("b"), Reply.text("c"))
    r = e2e.run(stdin="one\n/model other-model\n/think high\ntwo\n")
    assert r.code == 0, r.stderr
    assert "model other-model for the rest of this session" in r.stderr
    first, second = (req.body for req in e2e.server.requests)
    assert first["model"] == "fake-model" and "reasoning_effort" not in first
    assert second["model"] == "other-model" and second.get("reasoning_effort") == "high"
    resumed = e2e.run("--session", r.session_id, stdin="three\n")
    assert resumed.code == 0, resumed.stderr
    assert e2e.server.requests[-1].body["model"] == "other-model"
    assert e2e.server.requests[-1].body.get("reasoning_effort") == "high"
    lines = [json.loads(x) for x in e2e.session_file(r.session_id).read_text().splitlines()]
    assert {"type": "settings", "model": "other-model"} in lines


def test_a_bad_thinking_level_changes_nothing(e2e: Env) -> None:
    e2e.server.script(Reply.text("a"))
    r = e2e.run(stdin="/think enormous\n/model two words\none\n")
    assert r.code == 1
    assert "unknown thinking level 'enormous'" in r.stderr and "spaces" in r.stderr
    assert e2e.server.requests[0].body["model"] == "fake-model"


def test_a_task_whose_files_all_changed_since_is_passed_over_and_undo_goes_further_back(e2e: Env) -> None:
    e2e.server.script(
        Reply.tool("write", path="first.txt", content="one\n"), Reply.text("wrote first"),
        Reply.tool("write", path="second.txt", content="two\n"), Reply.text("wrote second"),
    )
    run = e2e.run("--yes", stdin="write first\nwrite second\n")
    assert run.code == 0, run.stderr
    (e2e.workspace / "second.txt").write_text("my own edit\n")
    r = e2e.run("--session", run.session_id, "--yes", stdin="/undo\n/undo\n/undo\n")
    assert r.code == 0, r.stderr
    assert "skip    second.txt: it was changed since minicode wrote it" in r.stderr
    assert "passed over: another /undo goes to the task before it" in r.stderr
    assert "undo an earlier task (“write first”" in r.stderr  # the second /undo went further back
    assert not (e2e.workspace / "first.txt").exists()
    assert (e2e.workspace / "second.txt").read_text() == "my own edit\n"  # never overwritten
    assert "minicode: nothing to undo: no file changed by write or edit is left to restore." in r.stderr
