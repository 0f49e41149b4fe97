"""One-shot mode asks on the terminal, offering "always allow … in this project": answering
``p`` saves the rule, shows it, and the next run is not asked (real executable, real pty)."""

from __future__ import annotations

import io
import os
import sys
import threading
from pathlib import Path

import pexpect

from tests.support.fake_openai import FakeOpenAI, Reply

EXE = str(Path(sys.executable).parent / "minicode")


def _spawn(ws: Path, home: Path, *args: str) -> pexpect.spawn:
    env = {"HOME": str(home), "PATH": os.environ.get("PATH", "/usr/bin:/bin"), "TERM": "dumb", "LANG": "C.UTF-8"}
    return pexpect.spawn(EXE, list(args), cwd=str(ws), env=env, encoding="utf-8", timeout=15,
                         dimensions=(30, 200))


def _workspace(tmp_path: Path, server: FakeOpenAI) -> Path:
    ws = tmp_path / "ws"
    (ws / "config").mkdir(parents=True)
    (ws / "config" / "config.toml").write_text(
        f'[model]\nbase_url = "{server.base_url}"\nname = "fake-model"\napi_key = ""\n'
    )
    return ws


def test_answer_p_saves_the_rule_and_the_next_run_is_not_asked(tmp_path: Path):
    with FakeOpenAI() as server:
        ws = _workspace(tmp_path, server)
        server.script(Reply.tool("bash", command="touch first"), Reply.text("made first"))
        child = _spawn(ws, tmp_path, "make the first file")
        child.expect_exact("[y/a/p/N] (a: allow every bash call for the rest of this session; "
                           "p: always allow bash(touch *) in this project)")
        child.send("p\r")
        child.expect_exact("saved rule bash(touch *) in .minicode/local/permissions.toml")
        child.expect_exact("made first")
        child.expect(pexpect.EOF)
        child.close()
        assert child.exitstatus == 0
        assert (ws / "first").exists()
        saved = ws / ".minicode" / "local" / "permissions.toml"
        assert '"bash(touch *)"' in saved.read_text() and (saved.stat().st_mode & 0o777) == 0o600

        server.script(Reply.tool("bash", command="touch second"), Reply.text("made second"))
        child = _spawn(ws, tmp_path, "make the second file")
        child.logfile_read = seen = io.StringIO()
        child.expect_exact("made second")
        child.expect(pexpect.EOF)
        output = seen.getvalue()
        child.close()
        assert child.exitstatus == 0 and (ws / "second").exists()
        assert "[y/" not in output  # not asked: the saved rule allowed it


def test_a_compound_command_is_asked_without_the_always_choice(tmp_path: Path):
    with FakeOpenAI() as server:
        ws = _workspace(tmp_path, server)
        server.script(Reply.tool("bash", command="touch a && touch b"), Reply.text("skipped"))
        child = _spawn(ws, tmp_path, "make two")
        child.expect_exact("? [y/a/N] ")
        child.send("n\r")
        child.expect_exact("skipped")
        child.expect(pexpect.EOF)
        child.close()
        assert not (ws / "a").exists()
        assert server.requests[1].messages[-1]["content"] == "denied by the user"


def test_a_task_typed_ahead_in_pipe_mode_is_not_taken_as_the_answer(tmp_path: Path):
    """``minicode > out.txt`` reads tasks from the terminal; a task typed while the model works
    must stay a task, and the approval that appears next waits for a line typed after it."""
    with FakeOpenAI() as server:
        ws = _workspace(tmp_path, server)
        typed_ahead = threading.Event()

        def first_reply(_request: object) -> Reply:
            typed_ahead.wait(15)
            return Reply.tool("bash", command="touch made")

        server.script(Reply.dynamic(first_reply), Reply.text("first done"), Reply.text("second done"))
        env = {"HOME": str(tmp_path), "PATH": os.environ.get("PATH", "/usr/bin:/bin"), "TERM": "dumb",
               "LANG": "C.UTF-8"}
        child = pexpect.spawn("bash", ["-c", f"{EXE} > out.txt; echo EXIT=$?"], cwd=str(ws), env=env,
                              encoding="utf-8", timeout=15, dimensions=(30, 200))
        child.send("first task\r")
        assert server.wait_for_requests(1)
        child.send("second task\r")
        child.expect_exact("second task")  # echoed: the line reached minicode's input
        typed_ahead.set()
        child.expect_exact("1 line typed ahead kept as the next task")
        child.expect_exact("[y/a/p/N]")
        child.send("y\r")
        assert server.wait_for_requests(3)
        child.sendeof()
        child.expect_exact("EXIT=0")
        child.expect(pexpect.EOF)
        assert (ws / "made").exists()
        assert server.requests[2].messages[-1] == {"role": "user", "content": "second task"}
        assert (ws / "out.txt").read_text() == "first done\nsecond done\n"
