"""Sub-agents in a real terminal: the full screen's nested lines under the agent call (live and
resumed), Esc cancelling a running sub-agent at once, and the one-shot mode's indented stderr lines."""

from __future__ import annotations

import io
import os
import re
import sys
import time
from pathlib import Path
from typing import Callable

import pexpect

from tests.pty.conftest import Term, workspace_for
from tests.support.fake_openai import FakeOpenAI, Reply

Start = Callable[..., Term]


def _script_a_sub_agent(server: FakeOpenAI) -> None:
    server.script(
        Reply.tool("agent", task="Which port does notes.txt name?"),
        Reply.tool("read", path="notes.txt"),
        Reply.tool("grep", pattern="port"),
        Reply.text("notes.txt:1 names port 8042."),
        Reply.text("The port is 8042."),
    )


def test_the_sub_agents_calls_are_indented_under_the_agent_call_live_and_resumed(term_factory: Start) -> None:
    t = term_factory()
    (t.workspace / "notes.txt").write_text("port 8042\n")
    _script_a_sub_agent(t.server)
    t.send_line("which port?")
    t.wait_answered("The port is 8042.")
    rows = t.screen.lines()
    agent = next(i for i, row in enumerate(rows) if "agent Which port does notes.txt name?" in row)
    assert rows[agent].startswith("✓ agent") and "reported · 2 calls" in rows[agent]
    assert rows[agent + 1].startswith("    ✓ read notes.txt — 1 line")
    assert rows[agent + 2].startswith("    ✓ grep port")
    assert "(1 sub-agent included)" in t.screen.text()
    t.send("\x04")
    out = t.finish()
    assert "EXIT=0" in out
    # resumed: the record of its calls is shown under the call again
    r = term_factory("-c")
    r.wait_text("resumed session")
    r.wait_text("    ✓ read notes.txt — 1 line")
    assert "    ✓ grep port" in r.screen.text()
    r.send("\x04")
    assert "EXIT=0" in r.finish()


def test_esc_cancels_a_running_sub_agent_at_once(term_factory: Start) -> None:
    t = term_factory()
    (t.workspace / "a.txt").write_text("a\n")
    t.server.script(Reply.tool("agent", task="look at a.txt"), Reply.tool("read", path="a.txt"), Reply.hang())
    t.send_line("go")
    t.wait_text("    ✓ read a.txt")
    assert t.server.wait_for_requests(3)
    pressed = time.monotonic()
    t.send("\x1b", 0.05)
    t.wait(lambda: t.idle(), timeout=5, what="idle after Esc")
    assert time.monotonic() - pressed < 3
    text = t.screen.text()
    assert "agent look at a.txt  — interrupted after" in text and "■ interrupted" in text
    assert len(t.server.requests) == 3  # the sub-agent's request was the last one
    t.send("\x04")
    assert "EXIT=0" in t.finish()


def test_one_shot_mode_indents_the_sub_agents_lines_on_stderr(tmp_path: Path) -> None:
    with FakeOpenAI() as server:
        ws, env = workspace_for(server, tmp_path)
        (ws / "notes.txt").write_text("port 8042\n")
        _script_a_sub_agent(server)
        child = pexpect.spawn(str(Path(sys.executable).parent / "minicode"), ["which port?"], cwd=str(ws),
                              env={**env, "TERM": "dumb", "PATH": os.environ.get("PATH", "/usr/bin:/bin")},
                              encoding="utf-8", timeout=15, dimensions=(30, 200))
        child.logfile_read = seen = io.StringIO()
        child.expect_exact("The port is 8042.")
        child.expect(pexpect.EOF)
        child.close()
        lines = seen.getvalue().replace("\r\n", "\n").splitlines()
        assert child.exitstatus == 0
        agent = lines.index("  … agent: Which port does notes.txt name?")
        nested = [re.sub(r"\d+\.\ds\)", "N s)", line) for line in lines[agent + 1:agent + 6]]
        assert nested == [
            "    … read notes.txt", "    ✓ read notes.txt (1 line, N s)", "    … grep port in .",
            "    ✓ grep port in . (1 matches, N s)",
            "  ✓ agent: Which port does notes.txt name? (reported · 2 calls, N s)",
        ]
