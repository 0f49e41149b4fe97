"""Fixtures for end-to-end runs of the real `minicode` executable against FakeOpenAI."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

import pytest

from minicode.trust.project_config import confirm_written
from tests.support.fake_openai import FakeOpenAI

API_KEY = "sk-e2e-SECRET-4242-key"
KEY_VAR = "FAKE_PROVIDER_KEY"


def minicode_executable() -> str:
    found = shutil.which("minicode", path=str(Path(sys.executable).parent))
    assert found, "minicode is not installed in the venv (pip install -e '.[test]')"
    return found


@dataclass
class Run:
    code: int
    stdout: str
    stderr: str

    @property
    def session_id(self) -> str:
        for line in self.stderr.splitlines():
            if line.startswith("minicode: session "):
                return line.split()[-1]
            if line.startswith("minicode: resumed session "):
                return line.split()[3]
        raise AssertionError(f"no session id in stderr:\n{self.stderr}")


@dataclass
class Env:
    workspace: Path
    server: FakeOpenAI
    home: Path

    def environ(self) -> dict[str, str]:
        return {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(self.home), KEY_VAR: API_KEY,
                "LANG": "C.UTF-8"}

    def argv(self, *args: str) -> list[str]:
        return [minicode_executable(), *args]

    def run(self, *args: str, stdin: str | None = "", timeout: float = 30) -> Run:
        # A new session detaches from any controlling terminal, so /dev/tty is unavailable
        # and approvals follow the pipe rules, as in CI.
        proc = subprocess.run(
            self.argv(*args), cwd=self.workspace, env=self.environ(), input=stdin, capture_output=True,
            text=True, timeout=timeout, start_new_session=True,
        )
        return Run(proc.returncode, proc.stdout, proc.stderr)

    def popen(self, *args: str) -> subprocess.Popen[str]:
        return subprocess.Popen(
            self.argv(*args), cwd=self.workspace, env=self.environ(), stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
        )

    def session_file(self, session_id: str) -> Path:
        return self.workspace / ".minicode" / "sessions" / f"{session_id}.jsonl"

    def run_listing_imports(self, *args: str, stdin: str | None = "", timeout: float = 60) -> tuple[Run, set[str]]:
        """A run of ``python -X importtime -m minicode ARGS`` (the executable's entry point on the
        same interpreter) and every module it imported, from the interpreter's own report on
        stderr (its import-time lines are removed from the run's stderr)."""
        proc = subprocess.run(
            [sys.executable, "-X", "importtime", "-m", "minicode", *args], cwd=self.workspace,
            env=self.environ(), input=stdin, stdin=None if stdin is not None else subprocess.DEVNULL,
            capture_output=True, text=True, timeout=timeout, start_new_session=True,
        )
        report = [line for line in proc.stderr.splitlines() if line.startswith("import time:")]
        modules = {line.split("|")[-1].strip() for line in report if line.count("|") == 2}
        stderr = "".join(line + "\n" for line in proc.stderr.splitlines() if not line.startswith("import time:"))
        return Run(proc.returncode, proc.stdout, stderr), modules


@pytest.fixture
def e2e(tmp_path: Path) -> Iterator[Env]:
    workspace = (tmp_path / "project").resolve()
    (workspace / "config").mkdir(parents=True)
    home = tmp_path / "home"
    home.mkdir()
    with FakeOpenAI() as server:
        (workspace / "config" / "config.toml").write_text(
            f'[model]\nbase_url = "{server.base_url}"\nname = "fake-model"\napi_key_env = "{KEY_VAR}"\n'
        )
        # the user's own project file: its server and key variable confirmed, as --init does
        confirm_written(workspace / "config" / "config.toml", workspace, {"HOME": str(home)})
        yield Env(workspace, server, home)
