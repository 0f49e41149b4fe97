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

from tests.pty.screen import Screen
from tests.support.fake_openai import FakeOpenAI

EXE = str(Path(sys.executable).parent / "minicode")
COLUMNS, ROWS = 100, 30


@dataclass
class Term:
    child: pexpect.spawn
    screen: Screen
    server: FakeOpenAI
    workspace: Path
    raw: list[str] = field(default_factory=list)

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
        self.pump(settle)

    def finish(self, timeout: float = 10.0) -> str:
        """Read until the shell wrapper exits; returns everything printed after the app left."""
        end = time.monotonic() + timeout
        while self.child.isalive() and time.monotonic() < end:
            self.pump(0.1)
        self.pump(0.1)
        return "".join(self.raw)

    def minicode_pid(self) -> int:
        children = Path(f"/proc/{self.child.pid}/task/{self.child.pid}/children").read_text().split()
        return int(children[0])


@pytest.fixture
def term_factory(tmp_path: Path) -> Iterator[Callable[..., Term]]:
    spawned: list[Term] = []
    with FakeOpenAI() as server:
        def start(*args: str) -> Term:
            ws = tmp_path / "ws"
            (ws / "config").mkdir(parents=True, exist_ok=True)
            (ws / "config" / "config.toml").write_text(
                f'[model]\nbase_url = "{server.base_url}"\nname = "fake-model"\napi_key = ""\n'
            )
            env = {"HOME": str(tmp_path), "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
                   "TERM": "xterm-256color", "LANG": "C.UTF-8"}
            command = " ".join([EXE, *args]) + "; echo EXIT=$?; stty -a"
            child = pexpect.spawn("bash", ["-c", command], cwd=str(ws), env=env,
                                  dimensions=(ROWS, COLUMNS), encoding="utf-8", timeout=10)
            term = Term(child, Screen(COLUMNS, ROWS), server, ws)
            spawned.append(term)
            term.wait(lambda: term.screen.alternate and "context" in term.screen.text(), what="first frame")
            return term

        yield start
        for term in spawned:
            if term.child.isalive():
                term.child.terminate(force=True)
