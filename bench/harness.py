"""Shared pieces of the benchmarks that run minicode and pi side by side.

Both agents are pointed at the same scripted OpenAI-compatible server
(``tests/support/fake_openai.py``) on 127.0.0.1: minicode through a workspace
``config/config.toml``, pi through a ``models.json`` provider of api ``openai-completions``
in an isolated agent directory (``PI_CODING_AGENT_DIR``, its own ``HOME``, no network).
Each child is timed with ``os.wait4``, so its CPU (user + system) is its own.

pi is optional: ``--pi PATH``, else ``$PI_BIN``, else ``pi`` on ``PATH``; when none is found
the pi figures are skipped with a message saying so.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.support.fake_openai import FakeOpenAI, Reply  # noqa: E402

__all__ = ["FakeOpenAI", "Reply", "Agent", "Run", "add_pi_option", "find_pi", "median", "minicode_agent",
           "pi_agent", "run_child", "ROOT"]

MINICODE = ROOT / ".venv" / "bin" / "minicode"
MODEL = "fake-model"


@dataclass(frozen=True)
class Run:
    wall: float
    cpu: float
    returncode: int
    first_request: float | None = None  # seconds from spawn to the server seeing a request


@dataclass(frozen=True)
class Agent:
    """How to start one agent with a task against the fake server."""

    name: str
    argv_prefix: tuple[str, ...]
    env: dict[str, str]
    cwd: Path

    def argv(self, task: str) -> list[str]:
        return [*self.argv_prefix, task]


def add_pi_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--pi", metavar="PATH", default=None,
                        help="the pi executable to compare with (default: $PI_BIN, else pi on PATH)")
    parser.add_argument("--no-pi", action="store_true", help="measure minicode only")


def find_pi(option: str | None, no_pi: bool = False) -> str | None:
    """The pi executable, or None after saying why its column is skipped."""
    if no_pi:
        print("pi: skipped (--no-pi)")
        return None
    candidate = option or os.environ.get("PI_BIN") or shutil.which("pi")
    if candidate and Path(candidate).is_file() and os.access(candidate, os.X_OK):
        return candidate
    where = f" at {candidate}" if candidate else ""
    print(f"pi: not found{where} — the pi figures are skipped. Install it with "
          "`npm install @mariozechner/pi-coding-agent` and pass --pi PATH or set PI_BIN.")
    return None


def _base_env(home: Path) -> dict[str, str]:
    env = {"HOME": str(home), "PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LANG": "C.UTF-8",
           "TERM": os.environ.get("TERM", "xterm-256color")}
    return env


def minicode_agent(root: Path, server: FakeOpenAI, *, extra: Sequence[str] = (), exe: Path = MINICODE) -> Agent:
    """minicode one-shot in its own workspace (``root/minicode``) with a config for the server."""
    if not exe.is_file():
        raise SystemExit(f"{exe} not found; install first: python3 -m venv .venv && .venv/bin/pip install -e .")
    ws = root / "minicode"
    (ws / "config").mkdir(parents=True, exist_ok=True)
    (ws / "config" / "config.toml").write_text(
        f'[model]\nbase_url = "{server.base_url}"\nname = "{MODEL}"\napi_key = ""\n')
    home = root / "minicode-home"
    home.mkdir(exist_ok=True)
    return Agent("minicode", (str(exe), *extra), _base_env(home), ws)


def pi_agent(root: Path, server: FakeOpenAI, pi: str, *, extra: Sequence[str] = ()) -> Agent:
    """pi in print mode in its own workspace (``root/pi``), configured through models.json."""
    ws = root / "pi"
    ws.mkdir(parents=True, exist_ok=True)
    home = root / "pi-home"
    agent_dir = home / ".pi" / "agent"
    agent_dir.mkdir(parents=True, exist_ok=True)
    models = {"providers": {"fake": {
        "baseUrl": server.base_url, "api": "openai-completions", "apiKey": "unused",
        "compat": {"supportsDeveloperRole": False, "supportsReasoningEffort": False},
        "models": [{"id": MODEL, "contextWindow": 262144, "maxTokens": 8192}],
    }}}
    (agent_dir / "models.json").write_text(json.dumps(models, indent=2))
    env = _base_env(home) | {"PI_CODING_AGENT_DIR": str(agent_dir), "PI_OFFLINE": "1",
                             "PI_SKIP_VERSION_CHECK": "1", "PI_TELEMETRY": "0"}
    argv = (pi, "--provider", "fake", "--model", MODEL, "--no-session", *extra, "-p")
    return Agent("pi", argv, env, ws)


def run_child(agent: Agent, task: str, server: FakeOpenAI | None = None, timeout: float = 120) -> Run:
    """Run the agent once; wall and CPU from wait4, and when to the server's first request."""
    before = len(server.requests) if server is not None else 0
    start = time.monotonic()
    proc = subprocess.Popen(agent.argv(task), cwd=agent.cwd, env=agent.env, stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = start + timeout
    while True:
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            break
        if time.monotonic() > deadline:
            proc.kill()
            raise SystemExit(f"{agent.name} did not finish within {timeout:.0f} s")
        time.sleep(0.002)
    wall = time.monotonic() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    first = None
    if server is not None and len(server.requests) > before:
        first = server.requests[before].arrived - start
    return Run(wall, usage.ru_utime + usage.ru_stime, proc.returncode, first)


def median(values: Sequence[float]) -> float:
    return statistics.median(values)
