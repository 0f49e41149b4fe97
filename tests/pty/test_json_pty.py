"""--output json in a terminal with no TASK: never the full-screen interface; tasks are read
line by line from the terminal (pipe rules) and every stdout line is an event."""

from __future__ import annotations

import io
import json
import os
import sys
from pathlib import Path

import pexpect

from tests.support.fake_openai import FakeOpenAI, Reply

EXE = str(Path(sys.executable).parent / "minicode")


def test_json_output_in_a_terminal_reads_tasks_line_by_line(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / "config").mkdir(parents=True)
    with FakeOpenAI() as server:
        (ws / "config" / "config.toml").write_text(
            f'[model]\nbase_url = "{server.base_url}"\nname = "fake-model"\napi_key = ""\n'
        )
        server.script(Reply.text("pong"))
        env = {"HOME": str(tmp_path), "PATH": os.environ.get("PATH", "/usr/bin:/bin"), "TERM": "xterm-256color",
               "LANG": "C.UTF-8"}
        child = pexpect.spawn(EXE, ["--output", "json"], cwd=str(ws), env=env, encoding="utf-8", timeout=15)
        child.logfile_read = seen = io.StringIO()
        try:
            child.expect_exact("reading tasks from the terminal, one per line; Ctrl+D ends")
            child.sendline("ping")
            child.expect(r'\{"v":1,"type":"result"[^\r\n]*')
            result = json.loads(child.after)
            child.sendeof()
            child.expect(pexpect.EOF)
        finally:
            child.close(force=True)
    assert result["answer"] == "pong" and result["status"] == "done"
    assert child.exitstatus == 0
    everything = seen.getvalue()
    assert "\x1b[" not in everything  # no alternate screen, no styling: not the full-screen UI
    events = [json.loads(line) for line in everything.splitlines() if line.startswith("{")]
    assert [e["type"] for e in events] == ["session", "user", "assistant", "result"]
