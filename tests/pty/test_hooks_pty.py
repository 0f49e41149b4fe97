"""Hooks in a terminal: the full screen shows a hook's block and a hook's failure as transcript
lines, and a project's hook is shown and asked about before anything runs (a "no" runs nothing)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Callable

import pexpect

from tests.pty.conftest import EXE, Term
from tests.support.fake_openai import FakeOpenAI, Reply

Start = Callable[..., Term]


def _user_hooks(home: Path, hooks: str) -> None:
    """The per-user file with ``hooks``: they run in the project too (its own config picks the model)."""
    user = home / ".config" / "minicode" / "config.toml"
    user.parent.mkdir(parents=True, exist_ok=True)
    user.write_text('[model]\nbase_url = "http://127.0.0.1:9/v1"\nname = "unused"\napi_key = ""\n' + hooks)


def test_the_full_screen_shows_a_block_and_a_failure(term_factory: Start, tmp_path: Path) -> None:
    _user_hooks(tmp_path, '[[hooks.PreToolUse]]\nmatcher = "bash"\ncommand = "echo not on Fridays >&2; exit 2"\n'
                          '[[hooks.PreToolUse]]\nmatcher = "read"\ncommand = "sleep 30"\ntimeout = 1\n')
    t = term_factory()
    (t.workspace / "notes.txt").write_text("hello\n")
    t.server.script(Reply.tool("bash", command="touch made.txt"), Reply.tool("read", path="notes.txt"),
                    Reply.text("All done."))
    t.send_line("make the file")
    t.wait_text("All done.", timeout=20)
    screen = t.screen.text()
    assert "⊘ PreToolUse hook `echo not on Fridays >&2; exit 2` blocked bash: not on Fridays" in screen
    assert "⊘ PreToolUse hook `sleep 30` failed (ignored): timed out after 1 s (stopped)" in screen
    assert "Allow once" not in screen  # the blocked call was never asked about
    assert not (t.workspace / "made.txt").exists()


def test_a_projects_hook_is_shown_and_a_no_runs_nothing(tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    with FakeOpenAI() as server:
        ws = tmp_path / "ws"
        (ws / "config").mkdir(parents=True)
        (ws / "config" / "config.toml").write_text(
            f'[model]\nbase_url = "{server.base_url}"\nname = "fake-model"\napi_key = ""\n'
            f'[[hooks.UserPromptSubmit]]\ncommand = "touch {marker}"\n')
        env = {"HOME": str(tmp_path), "PATH": os.environ.get("PATH", "/usr/bin:/bin"), "TERM": "xterm-256color",
               "LANG": "C.UTF-8"}
        child = pexpect.spawn("bash", ["-c", f"{EXE}; echo EXIT=$?"], cwd=str(ws), env=env, encoding="utf-8",
                              timeout=15, dimensions=(30, 100))
        try:
            child.expect_exact("runs these hook commands before and after calls and at each prompt and answer")
            child.expect_exact(f"UserPromptSubmit: touch {marker}")
            child.expect_exact("[y/N]")
            child.sendline("n")
            child.expect_exact("would run 1 hook command of [hooks] without asking")
            child.expect_exact("EXIT=2")
        finally:
            child.terminate(force=True)
        assert not marker.exists() and server.requests == []
