"""Where a one-shot run's import time goes after its first request is on its way (issue 16 item 6).

Runs the 10-tool `read` task of `tools_task.py` (or `mixed`) with ``-X importtime``
(``PYTHONPROFILEIMPORTTIME=1``) against the scripted server, and splits the imports at the
adapter (the import of ``minicode.provider.openai``, with httpx2, done as the provider that sends
the first request is built): before it is the start-up (item 2), after it is what the run loads
while the server answers and the first answer is read — the gap between the first request and
the second. Prints, as medians of the runs: the sum of the top-level imports on each side, and the costliest top-level modules
after the send (cumulative time, children included), which is where to cut. ``-X importtime``
itself slows imports down; compare the figures of two trees in the same run (``--baseline``).
``--instructions`` (needs valgrind) counts the instructions of the whole run instead (callgrind:
a busy machine does not change them; threads are serialised, so runs vary by ~2-4 %).

    .venv/bin/python bench/imports.py [--runs 5] [--task read|mixed] [--top 25] [--baseline EXE]
    .venv/bin/python bench/imports.py --instructions [--runs 2] [--baseline EXE]
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from harness import MINICODE, Agent, FakeOpenAI, minicode_agent  # noqa: E402
from tools_task import prepare, script  # noqa: E402

SEND_MARKER = "minicode.provider.openai"


def parse(stderr: str) -> tuple[float, dict[str, float], list[str]]:
    """(ms of top-level imports before the send, {top-level module after it: cumulative ms},
    every module imported after it)."""
    before = 0.0
    after: dict[str, float] = {}
    modules: list[str] = []
    sent = False
    for line in stderr.splitlines():
        if not line.startswith("import time:") or "|" not in line:
            continue
        _, cumulative, name = line.split("|", 2)
        if not cumulative.strip().isdigit():
            continue  # the header
        depth = (len(name) - len(name.lstrip(" "))) // 2
        module = name.strip()
        ms = int(cumulative) / 1000
        if sent:
            modules.append(module)
        if depth > 0:
            continue
        if module == SEND_MARKER:
            sent = True
            before += ms
        elif sent:
            after[module] = after.get(module, 0.0) + ms
        else:
            before += ms
    return before, after, modules


def one_run(agent: Agent, server: FakeOpenAI, task: str) -> tuple[float, dict[str, float], list[str]]:
    server.script(*script(task))
    env = dict(agent.env, PYTHONPROFILEIMPORTTIME="1")
    done = subprocess.run(agent.argv("go through the notes"), cwd=agent.cwd, env=env, stdin=subprocess.DEVNULL,
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, timeout=120)
    if done.returncode != 0:
        raise SystemExit(f"{agent.name}: exit {done.returncode}\n{done.stderr[-2000:]}")
    return parse(done.stderr)


def instructions(agent: Agent, server: FakeOpenAI, task: str) -> float:
    """Millions of instructions of one run under callgrind."""
    server.script(*script(task))
    exe = Path(agent.argv_prefix[0])
    argv = ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", str(exe.parent / "python"),
            *agent.argv("go through the notes")]
    done = subprocess.run(argv, cwd=agent.cwd, env=agent.env, stdin=subprocess.DEVNULL, capture_output=True,
                          text=True, timeout=900)
    found = re.search(r"Collected : (\d+)", done.stderr)
    if done.returncode != 0 or found is None:
        raise SystemExit(f"{agent.name}: exit {done.returncode} under callgrind\n{done.stderr[-2000:]}")
    return int(found.group(1)) / 1e6


def report(name: str, runs: list[tuple[float, dict[str, float], list[str]]], top: int) -> None:
    before = statistics.median(r[0] for r in runs)
    after = statistics.median(sum(r[1].values()) for r in runs)
    count = statistics.median(len(r[2]) for r in runs)
    print(f"{name}: imports before the send {before:.0f} ms · after it {after:.0f} ms "
          f"({count:.0f} modules after it), medians of {len(runs)} runs")
    per: dict[str, list[float]] = defaultdict(list)
    for r in runs:
        for module, ms in r[1].items():
            per[module].append(ms)
    ranked = sorted(per.items(), key=lambda item: -statistics.median(item[1]))
    for module, values in ranked[:top]:
        print(f"  {statistics.median(values):7.1f} ms  {module}")


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--task", choices=("read", "mixed"), default="read")
    p.add_argument("--top", type=int, default=25)
    p.add_argument("--baseline", type=Path, help="another minicode executable to run in the same rounds")
    p.add_argument("--modules", action="store_true", help="list every module imported after the send (last run)")
    p.add_argument("--instructions", action="store_true", help="instructions of the whole run (callgrind)")
    args = p.parse_args()
    if args.instructions and shutil.which("valgrind") is None:
        raise SystemExit("valgrind not found: --instructions needs it")
    print(f"load average at start: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    with FakeOpenAI() as server, tempfile.TemporaryDirectory() as tmp:
        agents = {"minicode": minicode_agent(Path(tmp), server, extra=("--yes",), exe=MINICODE)}
        if args.baseline:
            agents["baseline"] = minicode_agent(Path(tmp) / "baseline", server, extra=("--yes",), exe=args.baseline)
        for agent in agents.values():
            prepare(agent)
        if args.instructions:
            counts: dict[str, list[float]] = {name: [] for name in agents}
            for _ in range(args.runs):
                for name, agent in agents.items():
                    counts[name].append(instructions(agent, server, args.task))
            for name, values in counts.items():
                shown = " · ".join(f"{v:,.1f} M" for v in values)
                print(f"{name}: instructions of a whole {args.task} run (callgrind) {shown} · median {statistics.median(values):,.1f} M")
            return 0
        results: dict[str, list[tuple[float, dict[str, float], list[str]]]] = {name: [] for name in agents}
        for _ in range(args.runs):
            for name, agent in agents.items():
                results[name].append(one_run(agent, server, args.task))
    for name, runs in results.items():
        report(name, runs, args.top)
        if args.modules:
            print("  after the send: " + " ".join(runs[-1][2]))
    print(f"load average at end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
