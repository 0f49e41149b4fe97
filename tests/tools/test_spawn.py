"""Commands die with minicode: the guard kills the whole group when minicode's end of its
socket closes; a cancellation that arrives while the process is being created still kills it.
Runs against the guard server (the normal path) and, where marked, the per-command fallback."""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path

import pytest

from minicode.tools import guardclient, guardlife
from minicode.tools.spawn import RunningCommand, spawn_command, spawn_piped, terminate_group


def group_members(pgid: int) -> list[int]:
    """Live (not zombie) processes of process group ``pgid``."""
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            fields = Path(f"/proc/{name}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == pgid and fields[0] != "Z":
            found.append(int(name))
    return found


def parent_of(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])


async def until(condition, limit: float = 10.0) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + limit  # a hang guard, not a timing assertion
    while not condition():
        assert time.monotonic() < deadline, "condition never became true"
        await asyncio.sleep(0.02)


@pytest.fixture
def own_guards(monkeypatch: pytest.MonkeyPatch) -> None:
    """No server: every command under its own ``cmdguard`` (the fallback)."""
    monkeypatch.setattr(guardlife, "current", lambda: None)


async def run(argv: list[str], cwd: Path, env: dict[str, str] | None = None) -> tuple[bytes, int | None, RunningCommand]:
    proc = await spawn_command(argv, cwd=cwd, env=dict(os.environ) if env is None else env)
    output = await proc.stdout.read()
    code = await proc.wait()
    await terminate_group(proc)
    return output, code, proc


async def test_the_server_is_started_once_and_reused(tmp_path: Path, fresh_guard: None) -> None:
    first = await spawn_command(["bash", "-c", "echo $PPID"], cwd=tmp_path, env=dict(os.environ))
    server = guardlife.current()
    assert server is not None and server.alive
    assert int(await first.stdout.read()) == server.pid  # forked by the server, not by minicode
    await first.wait()
    await terminate_group(first)
    for _ in range(3):
        output, code, _ = await run(["bash", "-c", "echo $PPID"], tmp_path)
        assert (int(output), code) == (server.pid, 0)
    assert guardlife.current() is server


async def test_each_command_leads_its_own_session(tmp_path: Path, fresh_guard: None) -> None:
    output, code, proc = await run(["bash", "-c", "ps -o pid=,pgid=,sid= -p $$"], tmp_path)
    assert code == 0
    assert output.split() == [str(proc.pid).encode()] * 3


async def test_closing_minicodes_end_kills_the_command_and_its_grandchildren(tmp_path: Path, fresh_guard: None) -> None:
    proc = await spawn_command(["bash", "-c", "sleep 100 & sleep 100 & echo started; wait"], cwd=tmp_path, env=dict(os.environ))
    assert await proc.stdout.readline() == b"started\n"
    assert len(group_members(proc.pid)) >= 3  # bash, two sleeps
    server = guardlife.current()
    assert server is not None
    server.stop()  # what minicode's death does to the server's socket
    await until(lambda: group_members(proc.pid) == [])
    assert await proc.wait() is None and proc.lost  # nobody can tell its status any more
    await terminate_group(proc)


async def test_a_dead_server_is_replaced_at_the_next_command(tmp_path: Path, fresh_guard: None) -> None:
    proc = await spawn_command(["bash", "-c", "sleep 100 & echo started; wait"], cwd=tmp_path, env=dict(os.environ))
    assert await proc.stdout.readline() == b"started\n"
    server = guardlife.current()
    assert server is not None
    os.kill(server.pid, 9)
    assert await proc.wait() is None  # minicode learns it at once: the socket ended
    assert proc.lost == "minicode's command guard stopped unexpectedly"
    await terminate_group(proc)  # what bash does next: the command and its grandchild go
    assert group_members(proc.pid) == []
    output, code, _ = await run(["bash", "-c", "echo again"], tmp_path)
    assert (output, code) == (b"again\n", 0)
    replacement = guardlife.current()
    assert replacement is not None and replacement is not server and replacement.alive


async def test_a_server_that_cannot_start_falls_back_to_a_guard_per_command(
    tmp_path: Path, fresh_guard: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    broken = tmp_path / "broken.py"
    broken.write_text("raise SystemExit(3)\n")
    monkeypatch.setattr(guardclient, "_SCRIPT", broken)
    for _ in range(3):
        output, code, proc = await run(["bash", "-c", "echo fine; exit 4"], tmp_path)
        assert (output, code) == (b"fine\n", 4)
    assert guardlife._failed_starts == guardlife._MAX_FAILED_STARTS
    assert guardlife.current() is None  # it stopped trying


@pytest.mark.parametrize("guard", ["server", "own"])
async def test_the_guard_reports_the_commands_exit_and_signal(tmp_path: Path, fresh_guard: None, guard: str,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    if guard == "own":
        monkeypatch.setattr(guardlife, "current", lambda: None)
    for command, expected in (("exit 3", 3), ("kill -TERM $$", -15), ("kill -KILL $$", -9), ("true", 0)):
        _, code, proc = await run(["bash", "-c", command], tmp_path)
        assert code == expected == proc.returncode, command


async def test_a_command_that_cannot_start_is_an_oserror(tmp_path: Path, fresh_guard: None) -> None:
    script = tmp_path / "script.sh"
    script.write_text("#!/bin/sh\necho hi\n")  # not executable
    for argv, cwd, env, error in (
        (["no-such-program-xyz"], tmp_path, {"PATH": "/usr/bin:/bin"}, FileNotFoundError),
        (["true"], tmp_path / "gone", {"PATH": "/usr/bin:/bin"}, FileNotFoundError),
        (["true"], tmp_path, {"PATH": str(tmp_path)}, FileNotFoundError),  # the command's PATH, not minicode's
        (["script.sh"], tmp_path, {"PATH": str(tmp_path)}, PermissionError),
        (["./script.sh"], tmp_path, {}, PermissionError),
    ):
        with pytest.raises(error):
            await spawn_command(argv, cwd=cwd, env=env)
    output, code, _ = await run(["bash", "-c", "echo still serving"], tmp_path)  # the server lives on
    assert (output, code) == (b"still serving\n", 0)


async def test_under_its_own_guard_a_command_that_cannot_start_says_so(tmp_path: Path, own_guards: None) -> None:
    output, code, _ = await run(["no-such-program-xyz"], tmp_path, {"PATH": "/usr/bin:/bin"})
    assert code == 127
    assert b"cannot start no-such-program-xyz" in output


async def test_the_program_is_found_in_the_commands_path(tmp_path: Path, fresh_guard: None) -> None:
    (tmp_path / "bin").mkdir()
    tool = tmp_path / "bin" / "my-tool"
    tool.write_text("#!/bin/sh\necho mine; pwd\n")
    tool.chmod(0o755)
    output, code, _ = await run(["my-tool"], tmp_path, {"PATH": f"/nowhere:{tmp_path / 'bin'}:/usr/bin:/bin"})
    assert (output, code) == (f"mine\n{tmp_path}\n".encode(), 0)


_NO_SETSID_SERVER = """
import os, socket
control = socket.socket(fileno=os.dup(0))
control.send(b"ready")
while data := control.recv(1 << 20):
    fields = data.split(b"\\0")
    if fields[0] == b"run":
        control.send(b"failed\\0" + fields[1] + b"\\0%d" % 38)
"""


async def test_a_server_that_cannot_start_sessions_hands_over_to_guards_per_command(
    tmp_path: Path, fresh_guard: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = tmp_path / "fake_server.py"
    fake.write_text(_NO_SETSID_SERVER)
    monkeypatch.setattr(guardclient, "_SCRIPT", fake)
    output, code, proc = await run(["bash", "-c", "echo fine"], tmp_path)
    assert (output, code) == (b"fine\n", 0)
    assert guardlife.current() is None  # not asked again


async def test_what_no_exec_can_carry_is_a_value_error(tmp_path: Path, fresh_guard: None) -> None:
    for argv, env in ((["echo", "a\0b"], {}), (["true"], {"A": "x\0y"}), (["true"], {"A=B": "x"}), ([], {})):
        with pytest.raises(ValueError):
            await spawn_command(argv, cwd=tmp_path, env=env)


async def test_parallel_commands_get_their_own_output_and_status(tmp_path: Path, fresh_guard: None) -> None:
    commands = [f"sleep 0.{9 - i}; echo out{i}; exit {i}" for i in range(8)]
    results = await asyncio.gather(*(run(["bash", "-c", c], tmp_path) for c in commands))
    assert [(output, code) for output, code, _ in results] == [(f"out{i}\n".encode(), i) for i in range(8)]
    assert len({proc.pid for _, _, proc in results}) == 8


async def test_the_command_gets_default_signals_and_no_descriptor_of_minicode(tmp_path: Path, fresh_guard: None) -> None:
    leaked = os.open(os.devnull, os.O_RDONLY)
    os.set_inheritable(leaked, True)  # even an inheritable one stays out (close_fds)
    try:
        signals, code, _ = await run(["grep", "-E", "^Sig(Ign|Blk)", "/proc/self/status"], tmp_path)
        assert code == 0
        # the listing's own descriptor (3) is the only one past stdin, stdout and stderr
        fds, code, _ = await run(["ls", "/proc/self/fd"], tmp_path)
        assert code == 0
    finally:
        os.close(leaked)
    blocked, ignored = (int(mask, 16) for mask in signals.split()[1::2])
    assert blocked == 0
    assert ignored & 0x7FFFFFFF == 0  # the 31 standard signals; 32 and 33 are the C library's own
    assert sorted(fds.split()) == [b"0", b"1", b"2", b"3"]


async def test_stdin_is_dev_null(tmp_path: Path, fresh_guard: None) -> None:
    output, code, _ = await run(["bash", "-c", "readlink /proc/$$/fd/0; cat"], tmp_path)
    assert (output, code) == (b"/dev/null\n", 0)


async def test_environment_values_never_reach_the_servers_argv_or_environment(tmp_path: Path, fresh_guard: None,
                                                                            monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    monkeypatch.setenv("OPENAI_API_KEY", "sk-should-stay-in-minicode")
    output, code, _ = await run(["bash", "-c", "echo $TOKEN_FOR_THE_COMMAND"], tmp_path,
                                {"PATH": "/usr/bin:/bin", "TOKEN_FOR_THE_COMMAND": "value-only-for-the-command"})  # fmt: skip
    assert (output, code) == (b"value-only-for-the-command\n", 0)
    server = guardlife.current()
    assert server is not None
    seen = Path(f"/proc/{server.pid}/cmdline").read_bytes() + Path(f"/proc/{server.pid}/environ").read_bytes()
    assert b"value-only-for-the-command" not in seen and b"sk-should-stay-in-minicode" not in seen


def _running(token: bytes) -> list[int]:
    found = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                if token in Path(f"/proc/{name}/cmdline").read_bytes():
                    found.append(int(name))
            except OSError:
                continue
    return found


@pytest.mark.parametrize("guard", ["server", "own"])
async def test_cancelled_while_spawning_the_process_is_killed_at_once(tmp_path: Path, fresh_guard: None, guard: str,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    if guard == "own":
        monkeypatch.setattr(guardlife, "current", lambda: None)
    token = f"sleep 31.{os.getpid()}"
    for yields in (0, 1, 2, 3, 5, 8):
        task = asyncio.ensure_future(spawn_command(["bash", "-c", token], cwd=tmp_path, env=dict(os.environ)))
        for _ in range(yields):
            await asyncio.sleep(0)  # the spawn is under way
        task.cancel()
        try:
            proc = await task
        except asyncio.CancelledError:
            pass
        else:  # the spawn won the race: clean up as bash would
            await terminate_group(proc)
        await until(lambda: _running(token.encode()) == [])  # asyncio alone would wait 31 s


async def test_a_request_too_big_for_the_socket_runs_under_its_own_guard(tmp_path: Path, fresh_guard: None) -> None:
    env = {"PATH": "/usr/bin:/bin"} | {f"BIG{i}": "x" * 100_000 for i in range(6)}  # > a socket message
    output, code, proc = await run(["bash", "-c", "echo ${#BIG5}"], tmp_path, env)
    assert (output, code) == (b"100000\n", 0)
    assert not isinstance(proc, guardclient.GuardedCommand)
    output, code, proc = await run(["bash", "-c", "echo small"], tmp_path)  # the server still serves
    assert (output, code) == (b"small\n", 0) and isinstance(proc, guardclient.GuardedCommand)


async def test_under_its_own_guard_closing_minicodes_end_kills_the_group(tmp_path: Path, own_guards: None) -> None:
    proc = await spawn_command(["bash", "-c", "sleep 100 & sleep 100 & echo started; wait"], cwd=tmp_path, env=dict(os.environ))
    assert await proc.stdout.readline() == b"started\n"
    assert len(group_members(proc.pid)) >= 4  # the guard, bash, two sleeps
    proc.release()  # closes the guard's pipe, as minicode's death does
    await until(lambda: group_members(proc.pid) == [])
    await proc.wait()


async def test_a_server_that_stops_answering_is_replaced(tmp_path: Path, fresh_guard: None,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    import signal

    output, code, _ = await run(["bash", "-c", "echo up"], tmp_path)
    server = guardlife.current()
    assert server is not None and (output, code) == (b"up\n", 0)
    monkeypatch.setattr(guardclient, "_ANSWER_S", 0.5)
    os.kill(server.pid, signal.SIGSTOP)  # wedged: alive, but it reads nothing
    with pytest.raises(OSError, match="did not answer in 0.5 s"):
        await spawn_command(["bash", "-c", "echo never"], cwd=tmp_path, env=dict(os.environ))
    await until(lambda: not server.alive)  # killed, and minicode knows
    output, code, _ = await run(["bash", "-c", "echo a new one"], tmp_path)
    assert (output, code) == (b"a new one\n", 0)
    assert guardlife.current() is not server


async def test_a_cancellation_as_the_server_answers_is_not_lost() -> None:
    """The stop signal's cancellation lands in the same moment as the server's "started":
    the spawn still raises CancelledError (Python 3.11's wait_for returned the pid instead and
    dropped the cancellation, so a SIGTERM could leave a task running to max turns)."""
    started: asyncio.Future[int] = asyncio.get_running_loop().create_future()
    waiting = asyncio.ensure_future(guardclient.GuardServer._started(object.__new__(guardclient.GuardServer), started))
    await asyncio.sleep(0)  # it waits for the answer
    started.set_result(4242)
    waiting.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiting


async def test_a_cancellation_as_the_command_is_reaped_is_not_lost() -> None:
    """The same for the last wait of ``terminate_group``: its cancellation propagates."""

    class Finishing:
        pid = 2**22 + 12345  # no such group: nothing to signal
        released = False

        def __init__(self) -> None:
            self.status: asyncio.Future[int] = asyncio.get_running_loop().create_future()

        async def wait(self) -> int:
            return await self.status

        def release(self) -> None:
            self.released = True

    command = Finishing()
    stopping = asyncio.ensure_future(terminate_group(command))  # type: ignore[arg-type]
    await asyncio.sleep(0)  # it waits for the status
    command.status.set_result(0)
    stopping.cancel()
    with pytest.raises(asyncio.CancelledError):
        await stopping
    assert command.released


async def test_a_spawn_stopped_after_the_command_started_returns_once_it_is_gone(tmp_path: Path,
                                                                                   fresh_guard: None) -> None:
    """The stop lands after the server started the command but before minicode took its
    "started": the command is killed (abandoned) and the cancelled spawn returns only once its
    group is gone — a stopped task leaves nothing running behind it, also under load, when the
    answer is processed late (test_checks' cancelled check found a process still there)."""
    seconds = f"32.{os.getpid()}"  # in the argv of bash and of both sleeps
    command = ["bash", "-c", f"sleep {seconds} & sleep {seconds}"]
    task = asyncio.ensure_future(spawn_command(command, cwd=tmp_path, env=dict(os.environ)))
    await asyncio.sleep(0)  # the request goes out
    deadline = time.monotonic() + 30  # a hang guard; the loop is held so "started" waits in its queue
    while len(_running(seconds.encode())) < 2 and time.monotonic() < deadline:
        time.sleep(0.005)
    assert len(_running(seconds.encode())) >= 2
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert _running(seconds.encode()) == []  # at once: no wait here


async def test_a_spawn_stopped_while_the_server_refuses_it_ends_at_once(tmp_path: Path, fresh_guard: None) -> None:
    """Nothing started (no such program): a stopped spawn does not wait for a group."""
    task = asyncio.ensure_future(spawn_command(["no-such-program-xyz"], cwd=tmp_path, env=dict(os.environ)))
    await asyncio.sleep(0)
    time.sleep(0.05)  # the server's "failed" is (likely) queued; either order must end promptly
    task.cancel()
    async with asyncio.timeout(10):  # a hang guard, not a timing assert
        with pytest.raises((asyncio.CancelledError, FileNotFoundError)):
            await task


@pytest.mark.parametrize("guard", ["server", "own"])
async def test_a_piped_command_has_its_own_stdin_stdout_and_stderr(tmp_path: Path, fresh_guard: None, guard: str,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    if guard == "own":
        monkeypatch.setattr(guardlife, "current", lambda: None)
    piped = await spawn_piped(["bash", "-c", "tr a-z A-Z; echo oops >&2; ls /proc/self/fd >&2; exit 3"], cwd=tmp_path,
                              env=dict(os.environ))
    piped.stdin.write(b"hello")
    await piped.stdin.drain()
    piped.stdin.close()
    out, err = await asyncio.gather(piped.command.stdout.read(), piped.stderr.read())
    assert await piped.command.wait() == 3
    await terminate_group(piped.command)
    assert out == b"HELLO"
    lines = err.split()
    assert lines[0] == b"oops" and sorted(lines[1:]) == [b"0", b"1", b"2", b"3"]  # nothing else of minicode's


async def test_a_piped_command_dies_with_minicodes_end(tmp_path: Path, fresh_guard: None) -> None:
    piped = await spawn_piped(["bash", "-c", "sleep 100 & echo started; wait"], cwd=tmp_path, env=dict(os.environ))
    assert await piped.command.stdout.readline() == b"started\n"
    server = guardlife.current()
    assert server is not None
    server.stop()
    await until(lambda: group_members(piped.command.pid) == [])
    await terminate_group(piped.command)
