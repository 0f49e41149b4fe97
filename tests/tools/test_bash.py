"""bash: exit codes, capture limits, process-group cleanup, stdin, environment."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from minicode.tools.base import ToolContext
from minicode.tools.bash import BashTool
from minicode.tools.child_env import child_environment

from .rss import current_rss_bytes

bash = BashTool()


def _alive(pid: int) -> bool:
    """Whether ``pid`` is a live (non-zombie) process."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        with open(f"/proc/{pid}/stat") as f:
            state = f.read().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state not in ("Z", "X")


async def _wait_gone(pid: int, seconds: float = 3.0) -> bool:
    for _ in range(int(seconds / 0.05)):
        if not _alive(pid):
            return True
        await asyncio.sleep(0.05)
    return not _alive(pid)


async def test_runs_in_workspace_and_reports_exit_code(ws: Path, ctx: ToolContext) -> None:
    result = await bash.run({"command": "pwd; echo err >&2; exit 0"}, ctx)
    assert not result.is_error and result.exit_code == 0
    lines = result.text.splitlines()
    assert lines[0] == os.path.realpath(ws)
    assert lines[1] == "err"  # stderr merged into the same stream
    assert lines[-1] == "[exit code 0]"


async def test_nonzero_exit_is_error_result(ctx: ToolContext) -> None:
    result = await bash.run({"command": "echo oops; exit 3"}, ctx)
    assert result.is_error and result.exit_code == 3
    assert result.text == "oops\n[exit code 3]" and result.summary == "exit 3"


async def test_killed_by_signal_is_named(ctx: ToolContext) -> None:
    result = await bash.run({"command": "kill -TERM $$"}, ctx)
    assert result.is_error and result.exit_code == -15
    assert "[killed by SIGTERM]" in result.text


async def test_no_output(ctx: ToolContext) -> None:
    assert (await bash.run({"command": "true"}, ctx)).text == "(no output)\n[exit code 0]"


async def test_stdin_is_devnull_so_readers_do_not_hang(ctx: ToolContext) -> None:
    result = await bash.run({"command": "cat; read x; echo got:$?", "timeout": 10}, ctx)
    assert result.text.splitlines()[0] == "got:1"
    assert "timed out" not in result.text


async def test_quiet_environment_and_no_api_key(ctx: ToolContext) -> None:
    environ = {"PATH": ctx.env["PATH"], "OPENAI_API_KEY": "sk-secret-1", "COPY": "sk-secret-1", "KEEP": "yes"}
    ctx.env = child_environment(environ, ["OPENAI_API_KEY"], ["sk-secret-1"])
    result = await bash.run({"command": "env"}, ctx)
    assert "OPENAI_API_KEY" not in result.text and "sk-secret-1" not in result.text
    for line in ("PAGER=cat", "GIT_PAGER=cat", "GIT_TERMINAL_PROMPT=0", "KEEP=yes"):
        assert line in result.text.splitlines()


def test_child_environment_filters_names_and_values() -> None:
    env = {"A_KEY": "s3cret-value", "OTHER": "s3cret-value", "EMPTY": "", "PATH": "/bin"}
    assert child_environment(env, ["A_KEY"], ["s3cret-value", ""]) == {"EMPTY": "", "PATH": "/bin"}
    assert child_environment(env, [], []) == env


def test_child_environment_drops_a_value_containing_a_secret() -> None:
    env = {"AUTH": "Bearer sk-secret-12345", "URL": "https://x/?key=sk-secret-12345&a=1", "PATH": "/bin"}
    assert child_environment(env, [], ["sk-secret-12345"]) == {"PATH": "/bin"}


def test_child_environment_ignores_too_short_secrets() -> None:
    # a 3-char "key" is a placeholder: matching it would drop PATH-like values by chance
    env = {"PATH": "/usr/bin:/bin", "X": "abc"}
    assert child_environment(env, [], ["bin"]) == env


async def test_huge_output_is_capped_at_constant_memory(ctx: ToolContext) -> None:
    before = current_rss_bytes()
    result = await bash.run({"command": "yes | head -c 1000000000", "timeout": 300}, ctx)
    growth = current_rss_bytes() - before
    assert result.exit_code == 0
    assert len(result.text.encode()) <= 64 * 1024
    assert "bytes of output omitted" in result.text
    elided = int(result.text.split("[... ")[1].split(" bytes")[0])
    assert elided == 1_000_000_000 - 60 * 1024
    assert growth < 32 * 1024 * 1024, growth


async def test_timeout_kills_process_group_including_background_grandchild(ws: Path, ctx: ToolContext) -> None:
    command = "sleep 100 & echo $! > bg.pid; echo started; sleep 100"
    result = await bash.run({"command": command, "timeout": 1}, ctx)
    assert result.is_error and result.exit_code is None and result.summary == "timed out"
    assert "started" in result.text and "[timed out after 1 s; the process group was killed]" in result.text
    assert await _wait_gone(int((ws / "bg.pid").read_text()))


async def test_background_grandchild_holding_pipe_does_not_hang(ws: Path, ctx: ToolContext) -> None:
    result = await bash.run({"command": "sleep 100 & echo $! > bg.pid; echo done", "timeout": 30}, ctx)
    assert result.exit_code == 0 and result.text.startswith("done")
    assert await _wait_gone(int((ws / "bg.pid").read_text()))


async def test_cancellation_kills_process_group(ws: Path, ctx: ToolContext) -> None:
    task = asyncio.create_task(bash.run({"command": "sleep 100 & echo $! > bg.pid; sleep 100"}, ctx))
    pid_file = ws / "bg.pid"
    for _ in range(100):
        if pid_file.exists() and pid_file.read_text().strip():
            break
        await asyncio.sleep(0.05)
    pid = int(pid_file.read_text())
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert await _wait_gone(pid)


async def test_missing_workspace_is_a_tool_error(tmp_path: Path) -> None:
    from minicode.errors import ToolError

    ctx = ToolContext(workspace=tmp_path / "gone", env={"PATH": "/usr/bin:/bin"})
    with pytest.raises(ToolError, match="cannot start bash"):
        await bash.run({"command": "true"}, ctx)


def test_preview_shows_command() -> None:
    preview = bash.preview({"command": "pytest -q"})
    assert preview.detail == "pytest -q"


async def test_a_second_cancel_during_termination_still_stops_the_reader(ctx: ToolContext) -> None:
    before = asyncio.all_tasks()
    task = asyncio.create_task(bash.run({"command": "trap '' TERM; echo started; sleep 30", "timeout": 60}, ctx))
    await asyncio.sleep(0.5)
    task.cancel()
    await asyncio.sleep(0.2)  # now waiting for the group, which ignores SIGTERM
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    leftovers = [t for t in asyncio.all_tasks() - before if t is not asyncio.current_task()]
    assert all(t.done() for t in leftovers), leftovers
    await asyncio.sleep(0.3)  # the SIGKILLed child is reaped by asyncio's child watcher


async def test_a_guard_that_dies_mid_command_ends_the_call_with_a_clear_result(ws: Path, ctx: ToolContext) -> None:
    from minicode.tools import guardlife

    task = asyncio.create_task(bash.run({"command": "sleep 100 & echo $! > bg.pid; echo started; sleep 100"}, ctx))
    pid_file = ws / "bg.pid"
    for _ in range(200):
        if pid_file.exists() and pid_file.read_text().strip():
            break
        await asyncio.sleep(0.05)
    server = guardlife.current()
    assert server is not None
    os.kill(server.pid, 9)
    result = await task
    assert result.is_error and result.exit_code is None
    assert "started" in result.text
    assert result.text.endswith("[exit status unknown: minicode's command guard stopped unexpectedly; the process group was killed]")
    assert await _wait_gone(int(pid_file.read_text()))
    again = await bash.run({"command": "echo a new guard"}, ctx)  # the next command starts one
    assert again.text == "a new guard\n[exit code 0]"


async def test_with_the_assists_a_run_of_no_test_is_no_check(ctx: ToolContext) -> None:
    # a small model "verified" a fix with python -m unittest on pytest-style tests: Ran 0 tests, OK
    ctx.read_before_write = True
    result = await BashTool().run({"command": "printf 'Ran 0 tests in 0.000s\\n\\nOK\\n'"}, ctx)
    assert result.is_error and result.exit_code == 0 and result.summary == "exit 0, no test ran"
    assert "No test ran, so this checked nothing" in result.text
    ran = await BashTool().run({"command": "printf 'Ran 3 tests in 0.001s\\n\\nOK\\n'"}, ctx)
    assert not ran.is_error and ran.summary == "exit 0"
    ctx.read_before_write = False  # without the assists a command's exit status is its result
    plain = await BashTool().run({"command": "printf 'Ran 0 tests in 0.000s\\n'"}, ctx)
    assert not plain.is_error and "No test ran" not in plain.text
