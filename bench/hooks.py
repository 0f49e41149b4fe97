"""What a hook costs a call (issue 27 item 5), in-process.

Each sample runs one hook through ``hooks.run.run_hook`` — ``bash -c`` started by this process's
command guard server with three pipes (what makes it die with minicode on ``kill -9``), the JSON
payload on stdin, both streams read, the group cleaned up — for three hooks: one that says
nothing (``true``), one that reads its stdin and blocks with JSON, and one that exits 2 with a
reason; the silent one also under a guard of its own (``cmdguard.py --stdio``: the fallback
where no server runs, a Python start-up per hook). Interleaved with the floor: ``bash -c true``
started unguarded with ``asyncio.create_subprocess_exec``. A ``PreToolUse`` hook adds this to every matched call; a
``PostToolUse`` hook adds it again.

    .venv/bin/python bench/hooks.py [--rounds 30]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from minicode.hooks.run import run_hook  # noqa: E402
from minicode.hooks.spec import HookSpec  # noqa: E402
from minicode.tools import guardlife  # noqa: E402

PAYLOAD = {"hook_event_name": "PreToolUse", "session_id": "bench", "cwd": "/tmp", "tool_name": "bash",
           "tool_input": {"command": "pytest -q"}, "tool_use_id": "call_1"}
HOOKS = {
    "silent (true)": HookSpec("PreToolUse", "true"),
    "JSON block (cat; echo {...})": HookSpec("PreToolUse", "cat >/dev/null; echo '{\"decision\": \"block\", \"reason\": \"no\"}'"),
    "exit 2 + reason": HookSpec("PreToolUse", "echo no >&2; exit 2"),
}


async def floor(cwd: Path, env: dict[str, str]) -> None:
    proc = await asyncio.create_subprocess_exec("bash", "-c", "true", cwd=cwd, env=env, stdin=asyncio.subprocess.DEVNULL)
    await proc.wait()


async def main(rounds: int) -> None:
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": os.environ.get("HOME", "/tmp")}
    own = "silent, under its own guard (fallback)"
    samples: dict[str, list[float]] = {name: [] for name in [*HOOKS, own, "floor: bash -c true, unguarded"]}
    with tempfile.TemporaryDirectory() as tmp:
        cwd = Path(tmp)
        for _ in range(rounds):
            for name, spec in HOOKS.items():
                started = time.perf_counter()
                ran = await run_hook(spec, PAYLOAD, cwd=cwd, env=env)
                samples[name].append(time.perf_counter() - started)
                assert ran.outcome == ("ok" if name.startswith("silent") else "blocked"), ran
            current = guardlife.current
            guardlife.current = lambda: None  # what spawn_piped sees where no server runs
            try:
                started = time.perf_counter()
                await run_hook(HOOKS["silent (true)"], PAYLOAD, cwd=cwd, env=env)
                samples[own].append(time.perf_counter() - started)
            finally:
                guardlife.current = current
            started = time.perf_counter()
            await floor(cwd, env)
            samples["floor: bash -c true, unguarded"].append(time.perf_counter() - started)
    print(f"{'per hook run (ms)':40} {'median':>8} {'p90':>8}   ({rounds} rounds, interleaved)")
    for name, values in samples.items():
        values.sort()
        print(f"{name:40} {statistics.median(values) * 1000:8.1f} {values[int(len(values) * 0.9)] * 1000:8.1f}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=30)
    asyncio.run(main(parser.parse_args().rounds))
