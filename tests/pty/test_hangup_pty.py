"""The terminal hangs up (its window is closed, the ssh connection drops) while a command runs:
minicode gets SIGHUP and every write to the terminal fails from then on. It stops like on
SIGTERM — the command is killed, its call answered in the session, exit 130 — in the full
screen and in one-shot mode (text and JSON, the JSON and the human lines both on the dead
terminal), instead of dying by the signal or exiting 1/120 on the dead
terminal."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pexpect
import pytest

from minicode.provider.messages import validate_messages
from minicode.session.store import SessionStore
from tests.pty.conftest import COLUMNS, EXE, ROWS, workspace_for
from tests.support.fake_openai import FakeOpenAI, Reply


def _alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def _wait_for(predicate, what: str, child: pexpect.spawn, timeout: float = 15) -> None:
    end = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < end, f"timed out waiting for {what}"
        try:
            child.read_nonblocking(65536, timeout=0.05)  # keep the terminal drained
        except (pexpect.TIMEOUT, pexpect.EOF):
            pass


@pytest.mark.parametrize("mode", ["full screen", "one-shot", "one-shot json"])
def test_a_hang_up_during_a_command_stops_like_sigterm(tmp_path: Path, mode: str) -> None:
    with FakeOpenAI() as server:
        ws, env = workspace_for(server, tmp_path)
        server.script(Reply.tool("bash", command="echo $$ > cmd.pid; exec sleep 30"), Reply.text("unused"))
        args = (["--output", "json"] if mode.endswith("json") else []) + ["--yes"]
        args += ["run it"] if mode.startswith("one-shot") else []
        # minicode itself leads the terminal's session: the hang-up's SIGHUP is for it
        child = pexpect.spawn(EXE, args, cwd=str(ws), env=env, dimensions=(ROWS, COLUMNS), encoding="utf-8")
        try:
            if mode == "full screen":
                child.expect("context", timeout=15)
                child.send("run it")
                child.expect("run it", timeout=15)  # in the draft: the pause below counts from there
                time.sleep(0.5)  # an Enter right after typed text belongs to the paste
                child.send("\r")
            pid_file = ws / "cmd.pid"
            _wait_for(lambda: pid_file.exists() and pid_file.read_text().strip() != "", "the command", child, 30)
            command = int(pid_file.read_text())

            # the hang-up: the terminal's only descriptor closes — through the file object
            # that owns it, or collecting that object later closes the same number again,
            # by then perhaps a file the test opened (the EBADF warning this test used to cause)
            child.ptyproc.fileobj.close()
            child.ptyproc.closed = child.closed = True
            _, status = os.waitpid(child.pid, 0)
        finally:
            if _alive(child.pid):
                os.kill(child.pid, 9)
        assert os.waitstatus_to_exitcode(status) == 130
        assert not _alive(command), "the command outlived the hang-up"
        sessions = [f for f in (ws / ".minicode" / "sessions").glob("*.jsonl") if f.name != "input-history.jsonl"]
        assert len(sessions) == 1, sessions
        store, loaded = SessionStore.open(ws, sessions[0].stem)
        store.close()
        validate_messages(loaded.messages)
        last = loaded.messages[-1]
        assert last.role == "tool" and (last.content or "").startswith("interrupted after "), last
