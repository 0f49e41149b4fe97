"""The bytecode bundle's effect (``minicode/bytecode_bundle.py``): the 10-tool tasks of
``tools_task.py`` with the bundle in use and with ``MINICODE_BYTECODE_BUNDLE=0``, in the same
interleaved rounds (wall and CPU medians, their difference), and with ``--instructions`` the
main process's instructions under callgrind, which a busy machine does not change.

The first run writes the bundle (a warm-up round, not counted); a bundle that is already there
and current is kept.

    .venv/bin/python bench/bundle.py [--rounds 9] [--instructions]
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from harness import Agent, FakeOpenAI, minicode_agent  # noqa: E402
from tools_task import one_run, prepare, script  # noqa: E402

VARIANTS = ("bundle", "regular")


def _agents(tmp: Path, server: FakeOpenAI) -> dict[str, Agent]:
    agent = minicode_agent(tmp, server, extra=("--yes",))
    regular = dataclasses.replace(agent, env={**agent.env, "MINICODE_BYTECODE_BUNDLE": "0"})
    return {"bundle": agent, "regular": regular}


def _timed(agents: dict[str, Agent], server: FakeOpenAI, rounds: int) -> None:
    results: dict[tuple[str, str], list[tuple[float, float]]] = {}
    for round_no in range(rounds):
        for name in VARIANTS if round_no % 2 == 0 else VARIANTS[::-1]:
            for task in ("read", "mixed"):
                run = one_run(agents[name], server, task)
                results.setdefault((name, task), []).append((run.wall, run.cpu))
    print(f"\n10 tool calls + final answer, start to exit; medians of {rounds} interleaved rounds")
    for task in ("read", "mixed"):
        wall = {n: statistics.median(r[0] for r in results[(n, task)]) for n in VARIANTS}
        cpu = {n: statistics.median(r[1] for r in results[(n, task)]) for n in VARIANTS}
        print(f"{task:6} wall · bundle {1000 * wall['bundle']:5.0f} ms · regular {1000 * wall['regular']:5.0f} ms"
              f" · {1000 * (wall['bundle'] - wall['regular']):+5.0f} ms"
              f"   cpu · bundle {1000 * cpu['bundle']:5.0f} ms · regular {1000 * cpu['regular']:5.0f} ms"
              f" · {1000 * (cpu['bundle'] - cpu['regular']):+5.0f} ms")


def _instructions(agents: dict[str, Agent], server: FakeOpenAI) -> None:
    if shutil.which("valgrind") is None:
        print("\ninstructions: valgrind not found, skipped")
        return
    print("\ninstructions of the minicode process (callgrind; threads included, child processes not)")
    for task in ("read", "mixed"):
        counts = {}
        for name in VARIANTS:
            agent = agents[name]
            server.script(*script(task))
            argv = ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", *agent.argv("go")]
            done = subprocess.run(argv, cwd=agent.cwd, env=agent.env, stdin=subprocess.DEVNULL,
                                  capture_output=True, text=True, timeout=600)
            found = re.search(r"Collected : (\d+)", done.stderr)
            if done.returncode != 0 or found is None:
                raise SystemExit(f"{name} {task} under valgrind: exit {done.returncode}\n{done.stderr[-2000:]}")
            counts[name] = int(found.group(1))
        change = counts["bundle"] / counts["regular"] - 1
        print(f"{task:6} bundle {counts['bundle'] / 1e6:6.1f} M · regular {counts['regular'] / 1e6:6.1f} M"
              f" · {100 * change:+.1f} %")


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=9)
    p.add_argument("--instructions", action="store_true", help="also count instructions with valgrind (slow)")
    args = p.parse_args()
    print(f"load average at start: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    with FakeOpenAI() as server, tempfile.TemporaryDirectory() as tmp:
        agents = _agents(Path(tmp), server)
        prepare(agents["bundle"])
        for name in VARIANTS:  # warm-up: the first writes the bundle if it is missing or stale
            one_run(agents[name], server, "mixed")
        one_run(agents["bundle"], server, "mixed")
        _timed(agents, server, args.rounds)
        if args.instructions:
            _instructions(agents, server)
    print(f"load average at end:   {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
