"""The early frame in a real terminal (100x30): before the application's modules load, the
screen shows the status bar, the input and a resumed session's last answer; keys typed before
the application runs are neither echoed nor lost (they reach the draft once, and an Enter
among them does not submit); the terminal's attributes after minicode equal those before —
on a normal exit, Ctrl+C or SIGTERM during start-up, and a failure after the early frame.

``early_gate.py`` holds the start right after the early frame until the test opens the gate,
so "before the application runs" is a fact here, not a race."""

from __future__ import annotations

import os
import signal
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pexpect
import pytest

from minicode.provider.types import Message
from minicode.session.store import SessionStore
from tests.pty.conftest import COLUMNS, HUMAN_PAUSE, ROWS, Term
from tests.pty.screen import Screen
from tests.support.fake_openai import FakeOpenAI

GATE = str(Path(__file__).with_name("early_gate.py"))
SID = "eeee1111-0000-4000-8000-00000000000e"


class Gated(Term):
    gate: Path

    def wait_drawn(self) -> None:
        """Until the early frame is out and the start waits at the gate."""
        reached = Path(f"{self.gate}.reached")
        self.wait(lambda: reached.exists() and self.screen.alternate and "idle" in self.screen.text(),
                  what="the early frame")
        assert reached.read_text() == "drawn"

    def open_gate(self) -> None:
        self.gate.write_text("go")
        self.wait(lambda: "context" in self.screen.text(), what="the application's first frame")

    def attributes(self, name: str) -> str:
        return (self.workspace / f"stty.{name}").read_text().strip()


@pytest.fixture
def gated(tmp_path: Path) -> Iterator[Callable[..., Gated]]:
    spawned: list[Gated] = []
    with FakeOpenAI() as server:
        def start(*args: str, home: Path = tmp_path, after: str = "") -> Gated:
            ws = tmp_path / "ws"
            (ws / "config").mkdir(parents=True, exist_ok=True)
            (ws / "config" / "config.toml").write_text(
                f'[model]\nbase_url = "{server.base_url}"\nname = "fake-model"\napi_key = ""\n')
            env = {"HOME": str(home), "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
                   "TERM": "xterm-256color", "LANG": "C.UTF-8", "MINICODE_TEST_GATE": str(tmp_path / "gate")}
            run = " ".join([sys.executable, GATE, *args])
            command = f"stty -g > stty.before; {run}; echo EXIT=$?; stty -g > stty.after; {after} echo DONE"
            child = pexpect.spawn("bash", ["-c", command], cwd=str(ws), env=env,
                                  dimensions=(ROWS, COLUMNS), encoding="utf-8", timeout=10)
            term = Gated(child, Screen(COLUMNS, ROWS), server, ws)
            term.gate = tmp_path / "gate"
            spawned.append(term)
            return term

        yield start
        for term in spawned:
            if term.child.isalive():
                term.child.terminate(force=True)


def _resumable(ws: Path, answer: str = "The last answer: **LAST-MARK**.") -> None:
    ws.mkdir(parents=True, exist_ok=True)
    store, _ = SessionStore.create(ws.resolve(), new_id=lambda: SID)
    for t in range(40):
        store.append_message(Message.user(f"task {t}"))
        store.append_message(Message(role="assistant", content=f"answer {t}"))
    store.append_message(Message.user("and the last question?"))
    store.append_message(Message(role="assistant", content=answer))
    store.close()


def _finished(t: Gated) -> str:
    t.wait(lambda: "DONE" in "".join(t.raw) or not t.child.isalive(), timeout=30, what="the end")
    return t.finish()


def test_the_early_frame_then_type_ahead_reaches_the_draft_once(gated, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    _resumable(tmp_path / "ws")
    t = gated("--session", SID[:6])
    t.wait_drawn()
    screen = t.screen.text()
    lines = t.screen.lines()
    assert "LAST-MARK" in screen and "› and the last question?" in screen
    assert lines[ROWS - 2].startswith(" idle  fake-model · eeee1111") and lines[ROWS - 1] == "›"
    assert "context" not in screen  # the application has not drawn: this is the early frame
    before = t.screen.text()
    t.send("hello")
    t.send("\x1b[200~pasted line one\npasted line two\x1b[201~")
    t.send(" world\r")
    t.pump(0.3)
    assert t.screen.text() == before  # nothing echoed onto the frame
    t.open_gate()
    t.wait(lambda: t.draft_shows("world"), what="the typed keys in the draft")
    typed = "\n".join(t.screen.lines()[ROWS - 8:])
    assert typed.count("hello") == 1 and typed.count("pasted line one") == 1 and typed.count("pasted line two") == 1
    time.sleep(HUMAN_PAUSE)
    t.pump(0.3)
    assert t.server.requests == []  # the Enter typed during start-up did not submit
    t.send("\x03")  # clears the draft
    t.keys("\x04")  # leaves
    out = _finished(t)
    assert "EXIT=0" in out
    assert t.attributes("after") == t.attributes("before")


def test_the_early_frame_of_a_new_session_is_drawn_before_the_heavy_imports(gated) -> None:  # type: ignore[no-untyped-def]
    t = gated()
    t.wait_drawn()
    loaded = set((t.gate.parent / "gate.modules").read_text().split())
    assert "minicode.cli.tui.early" in loaded and "minicode.config" in loaded
    # issue 16: the path to the first frame stays short (cli.args' quick path, @frozen values,
    # toml_quick); the resumed tail's reader and the application come after it
    heavy = {"argparse", "dataclasses", "inspect", "tomllib", "typing", "json", "threading", "asyncio",
             "prompt_toolkit", "rich", "httpx", "minicode.cli.tui.early_tail", "minicode.cli.tui.app",
             "minicode.provider.types", "minicode.agent.loop"}
    assert not heavy & loaded, heavy & loaded
    t.open_gate()
    t.send("\x04")
    _finished(t)


def test_a_new_session_keeps_the_id_the_early_frame_showed(gated) -> None:  # type: ignore[no-untyped-def]
    t = gated()
    t.wait_drawn()
    first = t.screen.lines()[0]
    assert first.startswith("session ") and "model fake-model" in first
    sid = first.split()[1]
    assert t.screen.lines()[ROWS - 2].startswith(f" idle  fake-model · {sid[:8]}")
    t.open_gate()
    assert t.screen.lines()[0] == first and sid[:8] in t.screen.lines()[ROWS - 2]
    t.keys("\x03")  # Ctrl+C on an empty draft leaves
    assert "EXIT=0" in _finished(t)
    assert t.attributes("after") == t.attributes("before")


@pytest.mark.parametrize("how", ["ctrl-c", "sigterm", "sighup", "sigterm-in-app"])
def test_stopping_during_start_up_restores_the_terminal(gated, how: str) -> None:  # type: ignore[no-untyped-def]
    t = gated()
    t.wait_drawn()
    t.send("typed")
    if how == "sigterm-in-app":  # the application's own stop, then the early frame's restore
        t.open_gate()
        os.kill(t.minicode_pid(), signal.SIGTERM)
    elif how == "ctrl-c":
        t.send("\x03")  # signals stay on until the application runs: a stop, as before
    else:
        os.kill(t.minicode_pid(), signal.SIGTERM if how == "sigterm" else signal.SIGHUP)
    out = _finished(t)
    assert "EXIT=130" in out and ("minicode: interrupted" in out or how == "sigterm-in-app")
    assert not t.screen.alternate
    assert t.attributes("after") == t.attributes("before")


def test_a_failure_after_the_early_frame_is_shown_on_the_restored_terminal(gated, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    ws = tmp_path / "ws"
    _resumable(ws)
    path = ws / ".minicode" / "sessions" / f"{SID}.jsonl"
    lines = path.read_bytes().split(b"\n")
    lines[3] = b'{"type":"checkpoint","summary":12}'  # damaged in the middle: opening refuses it
    path.write_bytes(b"\n".join(lines))
    # what is left in the terminal's input after minicode is read back by the shell wrapper
    t = gated("--session", SID, after='read -t 1 -r left; echo "LEFT=[$left]";')
    t.wait_drawn()
    assert "LAST-MARK" in t.screen.text()  # only the end was read for the frame
    t.send("echo typed for the draft\r")
    t.gate.write_text("go")
    out = _finished(t)
    assert "EXIT=1" in out and "minicode: error:" in out and "refusing to load it" in out
    assert "LEFT=[]" in out  # what was typed for the draft never reaches the shell
    assert not t.screen.alternate and "minicode: error:" in t.screen.text()
    assert t.attributes("after") == t.attributes("before")


def test_a_stored_answer_with_escape_codes_is_shown_neutralised(gated, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    _resumable(tmp_path / "ws", answer="owned \x1b]0;PWNED\x07\x1b[2J\x1b[31mred")
    t = gated("--session", SID)
    t.wait_drawn()
    assert "owned ␛]0;PWNED␇␛[2J␛[31mred" in t.screen.text()
    assert "\x1b]0;PWNED" not in "".join(t.raw)
    t.open_gate()
    t.keys("\x04")
    assert "EXIT=0" in _finished(t)
    assert t.attributes("after") == t.attributes("before")


def test_a_resize_before_the_application_is_drawn_at_the_new_size(gated, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    _resumable(tmp_path / "ws")
    t = gated("--session", SID)
    t.wait_drawn()
    t.child.setwinsize(24, 80)
    t.screen.resize(80, 24)
    t.open_gate()
    t.wait(lambda: "context" in t.screen.lines()[22] and t.screen.lines()[23].startswith("›"),
           what="the status bar and the input on the last rows of 80x24")
    assert "LAST-MARK" in t.screen.text()
    t.keys("\x04")
    assert "EXIT=0" in _finished(t)


def test_the_workspace_question_comes_before_the_early_frame(gated, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    t = gated(home=tmp_path / "ws")  # started in the home directory: asked on the plain terminal first
    t.wait_text("Use it anyway? [y/N]")
    assert not t.screen.alternate and not Path(f"{t.gate}.reached").exists()
    t.send("y\r")
    t.wait_drawn()
    t.open_gate()
    t.pump(0.3)
    assert not t.draft_shows("y")  # the answer was the question's, not the draft's
    t.keys("\x04")
    assert "EXIT=0" in _finished(t)
    assert t.attributes("after") == t.attributes("before")


@pytest.mark.parametrize(("term", "rows", "columns"), [("dumb", ROWS, COLUMNS), ("xterm-256color", 4, 15)])
def test_no_early_frame_on_a_dumb_terminal_or_a_tiny_window(tmp_path: Path, term: str, rows: int,
                                                            columns: int) -> None:
    ws = tmp_path / "ws"
    (ws / "config").mkdir(parents=True)
    (ws / "config" / "config.toml").write_text('[model]\nbase_url = "http://127.0.0.1:9/v1"\nname = "m"\napi_key = ""\n')
    env = {"HOME": str(tmp_path), "PATH": os.environ.get("PATH", ""), "TERM": term, "LANG": "C.UTF-8",
           "MINICODE_TEST_GATE": str(tmp_path / "gate")}
    (tmp_path / "gate").write_text("go")  # open from the start: only whether a frame was drawn counts
    child = pexpect.spawn(sys.executable, [GATE], cwd=str(ws), env=env, dimensions=(rows, columns),
                          encoding="utf-8", timeout=20)
    try:
        reached = tmp_path / "gate.reached"
        deadline = time.monotonic() + 20
        while not reached.exists() and time.monotonic() < deadline:
            try:
                child.read_nonblocking(65536, timeout=0.05)
            except pexpect.TIMEOUT:
                pass
        assert reached.read_text() == "none"
    finally:
        child.terminate(force=True)


def test_each_tasks_end_line_is_in_the_early_frame_where_the_application_draws_it(gated, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Trial R13: the replay shows "■ done · …" under each task; the early frame shows the
    same rows, so the transcript does not jump when the application's frame replaces it."""
    from minicode.agent.stats import TaskStats

    ws = tmp_path / "ws"
    ws.mkdir(parents=True, exist_ok=True)
    store, _ = SessionStore.create(ws.resolve(), new_id=lambda: SID)
    for t in range(12):
        store.append_message(Message.user(f"task {t}"))
        store.append_message(Message(role="assistant", content=f"answer {t}"))
        store.append_turn_end("done" if t % 3 else "interrupted", TaskStats(wall_seconds=t, model_calls=1))
    store.close()
    t = gated("--session", SID[:6])
    t.wait_drawn()
    early = t.screen.lines()[: ROWS - 2]
    assert "■ done · 11.0s · 1 model call · 0 tool calls · tokens: unavailable" in early
    assert "■ interrupted · 9.0s · 1 model call · 0 tool calls · tokens: unavailable" in early
    t.open_gate()
    t.pump(0.3)
    assert t.screen.lines()[1: ROWS - 2] == early[1:]  # row 0: the opening note
    t.keys("\x04")
    assert "EXIT=0" in _finished(t)
