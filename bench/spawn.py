"""Per-command cost of starting a guarded command, in-process (issue 16 item 6, the bash part).

Each sample starts `bash -c "echo hi"` in-process, reads its output to the end, waits for its
status and cleans its group up (`terminate_group`) — what every `bash` call pays besides the
model. Three ways, interleaved in every round: through this process's guard server (today's
path), under a guard process of its own per command (`cmdguard.py`, the path before the
server, still the fallback), and unguarded (`asyncio.create_subprocess_exec`, the floor).
The server is started before the rounds; its one-time start-up (wall time to its first
answer, and its CPU) is measured on its own.

    .venv/bin/python bench/spawn.py [--rounds 30]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from minicode.tools import guardclient  # noqa: E402
from minicode.tools.spawn import _GuardProcess, _spawn_under_own_guard, spawn_command, terminate_group  # noqa: E402

ARGV = ["bash", "-c", "echo hi"]


async def through_server(cwd: Path, env: dict[str, str]) -> None:
    proc = await spawn_command(ARGV, cwd=cwd, env=env)
    assert await proc.stdout.read() == b"hi\n"
    await proc.wait()
    await terminate_group(proc)


async def own_guard(cwd: Path, env: dict[str, str]) -> None:
    proc = _GuardProcess(await _spawn_under_own_guard(ARGV, cwd=cwd, env=env))
    assert await proc.stdout.read() == b"hi\n"
    await proc.wait()
    await terminate_group(proc)


async def unguarded(cwd: Path, env: dict[str, str]) -> None:
    proc = await asyncio.create_subprocess_exec(*ARGV, cwd=cwd, env=env, stdin=asyncio.subprocess.DEVNULL,
                                                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
                                                start_new_session=True)  # fmt: skip
    assert proc.stdout is not None
    assert await proc.stdout.read() == b"hi\n"
    await proc.wait()


def server_start() -> tuple[float, float]:
    """The server's own start: wall time to its first answer (`ready`), and the CPU it used
    over its whole (short) life, from wait4 — what a prestart costs a run that never needs it."""
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    started = time.perf_counter()
    server = subprocess.Popen([sys.executable, "-I", "-S", str(guardclient._SCRIPT)], stdin=theirs.fileno(),
                              env={}, cwd="/", start_new_session=True)  # fmt: skip
    theirs.close()
    assert ours.recv(64) == b"ready"
    wall = time.perf_counter() - started
    ours.close()
    _, _, usage = os.wait4(server.pid, 0)
    return wall, usage.ru_utime + usage.ru_stime


async def main(rounds: int) -> None:
    cwd, env = Path.cwd(), dict(os.environ)
    ways = {"guard server": through_server, "guard per command": own_guard, "unguarded": unguarded}
    samples: dict[str, list[float]] = {name: [] for name in ways}
    starts = [server_start() for _ in range(9)]
    await through_server(cwd, env)  # the server of the rounds is up
    for _ in range(rounds):
        for name, way in ways.items():
            started = time.perf_counter()
            await way(cwd, env)
            samples[name].append(time.perf_counter() - started)
    print(f"load average {os.getloadavg()[0]:.2f}, {rounds} rounds, `{' '.join(ARGV)}` spawn+read+wait+cleanup")
    for name, values in samples.items():
        print(f"{name:18} median {statistics.median(values) * 1000:6.2f} ms  min {min(values) * 1000:6.2f} ms")
    server_ms = statistics.median(samples["guard server"]) * 1000
    own_ms = statistics.median(samples["guard per command"]) * 1000
    print(f"guard server / guard per command: {server_ms / own_ms:.2f}x")
    print(f"server start-up, once per process: to `ready` median {statistics.median(w for w, _ in starts) * 1000:.1f} ms,"
          f" CPU median {statistics.median(c for _, c in starts) * 1000:.1f} ms")


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=30)
    asyncio.run(main(p.parse_args().rounds))
