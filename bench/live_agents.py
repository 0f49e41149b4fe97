"""How the live bench (bench/live.py) starts each agent: command, environment, configuration.

minicode: one-shot with ``--yes``, a config file outside the workspace naming the endpoint and
the model with no key (allowed for a loopback server). pi: print mode, a provider of api
``openai-completions`` in the ``models.json`` of an agent directory of its own
(``PI_CODING_AGENT_DIR``), the local-server ``compat`` its docs (docs/models.md) give, no
network at start-up, each task's session in a directory of its own. Both get a HOME of their
own and the bench venv's ``python`` (which has pytest) first on PATH, so both agents' commands
and the checks run the same interpreter.
"""

from __future__ import annotations

import json
import os
import sys
import shutil
from dataclasses import dataclass
from pathlib import Path

__all__ = ["MINICODE", "PI_PROVIDER", "Setup", "child_env", "find_pi", "minicode_setup", "pi_setup"]

VENV_BIN = Path(sys.executable).parent
"""The venv the bench (or the test) runs in: its minicode and python (not resolved: a venv's
python is a link to the base interpreter's)."""
MINICODE = VENV_BIN / "minicode"
PI_PROVIDER = "live"


@dataclass(frozen=True, slots=True)
class Setup:
    """How to start one agent: its command before the task, its environment."""

    name: str
    argv: tuple[str, ...]
    env: dict[str, str]
    sessions: Path | None = None
    """pi: a directory under which each task's session directory is made."""

    def command(self, task: str, workspace: Path, slot: str) -> list[str]:
        if self.name == "minicode":
            return [*self.argv, "-C", str(workspace), task]
        assert self.sessions is not None
        return [*self.argv, "--session-dir", str(self.sessions / slot), "-p", task]


def child_env(home: Path, extra: dict[str, str] | None = None) -> dict[str, str]:
    """A plain environment: its own HOME, the bench venv's ``python`` (with pytest) first on PATH."""
    path = f"{VENV_BIN}{os.pathsep}{os.environ.get('PATH', '/usr/bin:/bin')}"
    # The bench venv's pytest carries minicode's own test plugins; pytest-asyncio's warning about
    # its unset loop scope would open every test run of a task's project, which has none.
    return {"HOME": str(home), "PATH": path, "LANG": "C.UTF-8", "PYTHONDONTWRITEBYTECODE": "1",
            "PYTEST_ADDOPTS": "-p no:asyncio", **(extra or {})}


def minicode_setup(root: Path, base_url: str, model: str, context_window: int | None,
                   exe: Path = MINICODE) -> Setup:
    if not exe.is_file():
        raise SystemExit(f"{exe} not found; run the bench with the python of a venv minicode is installed in "
                         "(python3 -m venv .venv && .venv/bin/pip install -e .)")
    home = root / "minicode-home"
    home.mkdir(parents=True)
    config = home / "config.toml"
    window = f"context_window = {context_window}\n" if context_window else ""
    config.write_text(f'[model]\nbase_url = "{base_url}"\nname = "{model}"\napi_key = ""\n{window}')
    return Setup("minicode", (str(exe), "--config", str(config), "--yes"), child_env(home))


def find_pi(option: str | None) -> str:
    candidate = option or os.environ.get("PI_BIN") or shutil.which("pi")
    if candidate and Path(candidate).is_file() and os.access(candidate, os.X_OK):
        return candidate
    raise SystemExit("pi not found: npm install --prefix DIR @mariozechner/pi-coding-agent@0.73.1, then "
                     "--pi DIR/node_modules/.bin/pi (or PI_BIN=...), or --agents minicode")


def pi_setup(root: Path, base_url: str, model: str, context_window: int | None, pi: str) -> Setup:
    """pi's documented local-server provider (docs/models.md of its package): models.json in
    the agent directory, the system prompt as a system message, no reasoning_effort."""
    home = root / "pi-home"
    agent_dir = home / ".pi" / "agent"
    agent_dir.mkdir(parents=True)
    entry: dict[str, object] = {"id": model}
    if context_window:
        entry["contextWindow"] = context_window
    models = {"providers": {PI_PROVIDER: {
        "baseUrl": base_url, "api": "openai-completions", "apiKey": "none",
        "compat": {"supportsDeveloperRole": False, "supportsReasoningEffort": False},
        "models": [entry],
    }}}
    (agent_dir / "models.json").write_text(json.dumps(models, indent=2))
    env = child_env(home, {"PI_CODING_AGENT_DIR": str(agent_dir), "PI_OFFLINE": "1", "PI_SKIP_VERSION_CHECK": "1",
                           "PI_TELEMETRY": "0"})
    sessions = root / "pi-sessions"
    return Setup("pi", (pi, "--provider", PI_PROVIDER, "--model", model), env, sessions)
