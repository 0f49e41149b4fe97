"""Run the real ``minicode`` executable in a pseudo-terminal against the fake server."""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pexpect
import pytest

from minicode.cli.frontends.tui.approval import ANSWER_GRACE
from minicode.cli.frontends.tui.burst import ENTER_GUARD
from tests.pty.screen import Screen
from tests.support.fake_openai import FakeOpenAI

EXE = str(Path(sys.executable).parent / "minicode")
COLUMNS, ROWS = 100, 30
HUMAN_PAUSE = 3 * ENTER_GUARD  # between keys a person presses (> the paste tail rule)
READ_PAUSE = ANSWER_GRACE + 0.2  # a person reads a question before answering it


@dataclass
class Term:
    child: pexpect.spawn
    screen: Screen
    server: FakeOpenAI
    workspace: Path
    raw: list[str] = field(default_factory=list)
    sent_at: float = 0.0  # when ``send`` last wrote, or ``type``'s text showed (monotonic)

    def pump(self, seconds: float = 0.2) -> None:
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            try:
                data = self.child.read_nonblocking(65536, timeout=0.02)
            except pexpect.TIMEOUT:
                continue
            except pexpect.EOF:
                return
            self.raw.append(data)
            self.screen.feed(data)

    def wait(self, predicate: Callable[[], bool], timeout: float = 10.0, what: str = "") -> None:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if predicate():
                return
            self.pump(0.05)
        raise AssertionError(f"timed out waiting for {what or predicate}:\n{self.screen.text()}")

    def wait_text(self, text: str, timeout: float = 10.0) -> None:
        self.wait(lambda: text in self.screen.text(), timeout, repr(text))

    def send(self, data: str, settle: float = 0.2) -> None:
        self.child.send(data)
        self.sent_at = time.monotonic()
        self.pump(settle)

    def human_pause(self) -> None:
        """A person's pause since the last key sent (``HUMAN_PAUSE``): only what is left of it,
        as waiting for the screen after that key may already have taken longer."""
        left = HUMAN_PAUSE - (time.monotonic() - self.sent_at)
        if left > 0:
            time.sleep(left)

    def draft_shows(self, text: str) -> bool:
        """Whether the input area (the rows under the status bar) shows ``text``."""
        lines = self.screen.lines()
        status = max((i for i, line in enumerate(lines) if "context" in line), default=0)
        return text in "\n".join(lines[status + 1:])

    def idle(self) -> bool:
        """Whether the status bar says no task runs. A task's answer is on screen before the
        task has saved it and its end: a Ctrl+C meant to leave that lands in between
        interrupts the task (as documented), so a test waits for this before leaving."""
        status = [line for line in self.screen.lines() if "context" in line]
        return bool(status) and status[-1].lstrip().removeprefix("PLAN").lstrip().startswith("idle")  # PLAN: plan mode

    def wait_answered(self, text: str, timeout: float = 10.0) -> None:
        """``text`` on screen and the task over (see ``idle``)."""
        self.wait(lambda: text in self.screen.text() and self.idle(), timeout, f"{text!r} and idle")

    def type(self, text: str) -> None:
        """Write ``text`` at once (a burst: the app takes it as one paste) and wait until its
        last line shows in the draft."""
        self.child.send(text)
        last = text.replace("\r", "\n").rstrip("\n").rsplit("\n", 1)[-1][-20:]
        self.wait(lambda: self.draft_shows(last), what=f"draft showing {last!r}")
        self.sent_at = time.monotonic()  # a pause after a paste counts from when it showed

    def send_line(self, text: str) -> None:
        """Type ``text`` and press Enter as a person does: after seeing it in the draft and a
        beat later (an Enter within ``ENTER_GUARD`` of a paste belongs to the paste — that
        pause is part of the input rules, not a wait for the app)."""
        self.type(text)
        time.sleep(HUMAN_PAUSE)
        self.send("\r")

    def keys(self, *keys: str) -> None:
        """Keys one by one with a person's pause between them."""
        for key in keys:
            self.human_pause()
            self.send(key, 0.05)

    def finish(self, timeout: float = 30.0) -> str:
        """Read until the shell wrapper exits; returns everything printed after the app left.
        It returns as soon as the wrapper is gone: the deadline only bounds a hang (a loaded
        2-core CI machine can take more than 10 s to save a large session and exit)."""
        end = time.monotonic() + timeout
        while self.child.isalive() and time.monotonic() < end:
            self.pump(0.1)
        self.pump(0.1)
        return "".join(self.raw)

    def minicode_pid(self) -> int:
        children = Path(f"/proc/{self.child.pid}/task/{self.child.pid}/children").read_text().split()
        return int(children[0])


def workspace_for(server: FakeOpenAI, home: Path) -> tuple[Path, dict[str, str]]:
    """``home/ws`` with a config for ``server``, and the environment a pty test runs minicode in."""
    ws = home / "ws"
    (ws / "config").mkdir(parents=True, exist_ok=True)
    (ws / "config" / "config.toml").write_text(
        f'[model]\nbase_url = "{server.base_url}"\nname = "fake-model"\napi_key = ""\n'
    )
    env = {"HOME": str(home), "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
           "TERM": "xterm-256color", "LANG": "C.UTF-8"}
    return ws, env


@pytest.fixture
def term_factory(tmp_path: Path) -> Iterator[Callable[..., Term]]:
    spawned: list[Term] = []
    with FakeOpenAI() as server:
        def start(*args: str, env_extra: dict[str, str] | None = None) -> Term:
            ws, env = workspace_for(server, tmp_path)
            env.update(env_extra or {})
            command = " ".join([EXE, *args]) + "; echo EXIT=$?; stty -a"
            child = pexpect.spawn("bash", ["-c", command], cwd=str(ws), env=env,
                                  dimensions=(ROWS, COLUMNS), encoding="utf-8", timeout=10)
            # pexpect sleeps 50 ms before every write by default (for programs that turn echo
            # off after their prompt); here every gap a test means is explicit (HUMAN_PAUSE,
            # READ_PAUSE, a settle) and every key waits for the first frame
            child.delaybeforesend = None
            term = Term(child, Screen(COLUMNS, ROWS), server, ws)
            spawned.append(term)
            term.wait(lambda: term.screen.alternate and "context" in term.screen.text(), what="first frame")
            return term

        yield start
        for term in spawned:
            if term.child.isalive():
                term.child.terminate(force=True)
