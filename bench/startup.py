"""Start-up as a user meets it (issue 24 item 5): three figures, printed, never asserted.

1. ``minicode --version``: process start to exit (target ≤ 60 ms), beside a bare
   ``python -c pass`` on the same interpreter.
2. One-shot mode (``minicode TASK``): process start to the first request arriving at the
   scripted server (``tests/support/fake_openai.py``; target ≤ 0.25 s).
3. The full screen of a fresh session: process start to its first frame — the status bar and
   the prompt on the screen — in a 120x40 pseudo-terminal read here (``pty_frame.py``; target
   ≤ 0.4 s).
4. For what the exit costs (no target): the same one-shot run, process start to exit.

Medians of ``--rounds`` interleaved runs after one warm-up run each. ``--exe`` picks the
build (default: this checkout's ``.venv/bin/minicode``); give it twice (a worktree of main and
this one) to compare them in the same rounds. Where the time goes: ``python -X importtime``
on the same command lines, or pyinstrument.

    .venv/bin/python bench/startup.py [--rounds 15] [--exe PATH ...] [--only version,first,frame,exit]
"""

from __future__ import annotations

import argparse
import compileall
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from harness import MINICODE, FakeOpenAI, Reply, minicode_agent  # noqa: E402
from pty_frame import run_once  # noqa: E402

TARGETS = {"version": 0.060, "first": 0.25, "frame": 0.4, "exit": None}


def _wall(argv: list[str], env: dict[str, str], cwd: Path | None = None) -> float:
    start = time.monotonic()
    subprocess.run(argv, env=env, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL, check=True)
    return time.monotonic() - start


def _first_request(server: FakeOpenAI, argv: list[str], cwd: Path, env: dict[str, str]) -> float:
    before = len(server.requests)
    start = time.monotonic()
    proc = subprocess.Popen(argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    if not server.wait_for_requests(before + 1, 60):
        proc.kill()
        raise SystemExit(f"no request from {argv[0]}")
    arrived = server.requests[before].arrived - start
    proc.wait(60)
    return arrived


Case = Callable[[], float | tuple[float, float]]


def _cases(exes: list[Path], only: set[str], tmp: Path, server: FakeOpenAI) -> dict[str, Case]:
    cases: dict[str, Case] = {}
    if "version" in only:
        python = str(exes[0].parent / "python")
        cases["version: bare python -c pass"] = lambda: _wall([python, "-c", "pass"], dict(os.environ))
    for i, exe in enumerate(exes):
        label = f" [{exe}]" if len(exes) > 1 else ""
        agent = minicode_agent(tmp / f"exe{i}", server, exe=exe)
        if "version" in only:
            cases[f"version{label}"] = lambda a=agent: _wall([*a.argv_prefix, "--version"], a.env)
        if "first" in only:
            cases[f"first{label}"] = lambda a=agent: _first_request(server, a.argv("say hi"), a.cwd, a.env)
        if "exit" in only:
            cases[f"exit{label}"] = lambda a=agent: _wall(a.argv("say hi"), a.env, a.cwd)
        if "frame" in only:
            cases[f"frame{label}"] = lambda a=agent: _frame(a.argv_prefix, a.cwd, a.env)
    return cases


def _frame(argv: tuple[str, ...], cwd: Path, env: dict[str, str]) -> float | tuple[float, float]:
    """The first frame; with an earlier build that drew an early frame of its own, also when
    the application's frame (its status bar's context share) replaced it."""
    run = run_once(list(argv), cwd, dict(env, TERM="xterm-256color"))
    if run.app_at is None or run.app_at - run.status_at < 0.001:
        return run.status_at
    return run.status_at, run.app_at


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--exe", type=Path, action="append", help="a minicode executable (repeatable)")
    parser.add_argument("--only", default="version,first,frame,exit")
    args = parser.parse_args()
    exes = [exe.absolute() for exe in args.exe or [MINICODE]]
    only = set(args.only.split(","))
    for exe in exes:  # an edited module is otherwise compiled again on every start
        src = Path(subprocess.run([str(exe.parent / "python"), "-c", "import minicode; print(minicode.__file__)"],
                                  capture_output=True, text=True, check=True).stdout.strip()).parent
        compileall.compile_dir(src, quiet=1)
    times: dict[str, list[float]] = defaultdict(list)
    with tempfile.TemporaryDirectory() as tmp, FakeOpenAI() as server:
        server.default = Reply.text("ok")
        cases = _cases(exes, only, Path(tmp), server)
        for case in cases.values():
            case()  # warm the OS caches
        for _ in range(args.rounds):
            for name, case in cases.items():
                got = case()
                if isinstance(got, tuple):  # an early frame, then the application's own
                    times[name + " (early frame)"].append(got[0])
                    times[name + " (application's frame)"].append(got[1])
                else:
                    times[name].append(got)
    print(f"start-up: medians of {args.rounds} interleaved runs (min in brackets)")
    for name, samples in times.items():
        kind = name.split(":")[0].split(" ")[0]
        goal = TARGETS.get(kind)
        target = "" if ":" in name or goal is None else f"   target ≤ {1000 * goal:.0f} ms"
        print(f"  {name:60} {1000 * statistics.median(samples):7.1f} ms ({1000 * min(samples):6.1f}){target}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
