"""The driver ends the command guard server once the run is over (its session closed), so the
server's own ending overlaps minicode's exit; a later command starts a new one."""

from __future__ import annotations

import io
import os
from pathlib import Path

import pytest

from minicode.cli.args import parse_args
from minicode.cli.frontends.plain.driver import drive
from minicode.cli.frontends.plain.frontend import PlainFrontend, Printer
from minicode.config import Config, ModelConfig
from minicode.tools import guardlife
from minicode.tools.spawn import spawn_command, terminate_group
from tests.support.fake_openai import FakeOpenAI, Reply




def _config(base_url: str) -> Config:
    return Config(model=ModelConfig(base_url=base_url, name="m", api_key="k"), path=Path("/nonexistent/config.toml"))


async def _run(tmp_path: Path, *replies: Reply) -> tuple[int, str]:
    front = PlainFrontend(Printer(io.StringIO(), io.StringIO(), progress=False), yes=True)
    with FakeOpenAI() as server:
        server.script(*replies)
        code = await drive(parse_args(["--yes", "run it"]), _config(server.base_url), tmp_path, "oneshot",
                           None, {"HOME": str(tmp_path), "PATH": os.environ.get("PATH", "/usr/bin:/bin")}, front)
    return code, front.printer.err.getvalue()


async def test_the_guard_server_that_ran_the_commands_ends_with_the_run(tmp_path: Path, fresh_guard: None) -> None:
    code, err = await _run(tmp_path, Reply.tool("bash", command="echo guarded"), Reply.text("done"))
    assert code == 0, err
    server = guardlife._current
    assert server is not None  # the run's commands went through it
    server.wait(10.0)  # ends on its own now: the driver told it to (a hang guard, not a timing)
    assert server._process.returncode is not None and not server.alive
    guardlife._stop_at_exit()  # the exit hook then has nothing left but to confirm it is reaped
    proc = await spawn_command(["bash", "-c", "echo again"], cwd=tmp_path, env=dict(os.environ))
    assert await proc.stdout.read() == b"again\n"  # a later command gets a new server
    await proc.wait()
    await terminate_group(proc)
    assert guardlife._current is not None and guardlife._current is not server


async def test_a_run_that_started_no_server_ends_without_one(tmp_path: Path, fresh_guard: None,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "a.txt").write_text("a\n")
    code, err = await _run(tmp_path, Reply.tool("read", path="a.txt"), Reply.text("done"))
    assert code == 0, err
    assert guardlife._current is None
