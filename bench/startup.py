"""Start-up: `--version`/`--help`, the first request in one-shot and pipe mode, and where the time goes.

1. `minicode --version` and `--help` against a bare `python -c pass` (same interpreter,
   interleaved rounds, medians and their ratio; target ≤ 1.5x). Twice: through the console
   script pip wrote (its wrapper imports `re` before minicode runs) and through a wrapper
   without that import (what uv writes), so the installer's share is visible.
2. Process start to the first request arriving at the scripted server, one-shot
   (`minicode TASK`) and pipe (`echo TASK | minicode`); target ≤ 0.1 s. Beside it the floor
   of any httpx-based Python agent: `python` + `import asyncio, httpx` + one POST.
3. Where the time goes before that first request: the one-shot run again under
   `-X importtime`, its import lines timestamped as they arrive and cut at the first
   request, grouped (interpreter, stdlib, asyncio, httpx and its dependencies, each minicode
   package) — plus the work that is not importing.

Compiles the package first (`compileall`): with PYTHONDONTWRITEBYTECODE set, as on the dev
container, an edited module would otherwise be compiled again on every start.

    .venv/bin/python bench/startup.py [--rounds 15]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from harness import MINICODE, ROOT, FakeOpenAI, Reply, minicode_agent  # noqa: E402

PYTHON = str(MINICODE.parent / "python")
VERSION_TARGET = 1.5
FIRST_REQUEST_TARGET = 0.1
HTTPX_FAMILY = {"httpx", "httpcore", "h11", "anyio", "sniffio", "certifi", "idna"}
NO_RE_WRAPPER = ("import sys\nfrom minicode.cli import main\n"
                 "if __name__ == '__main__':\n    sys.exit(main())\n")


def wall(argv: list[str], **kw: object) -> float:
    start = time.perf_counter()
    subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True, **kw)  # type: ignore[call-overload]
    return time.perf_counter() - start


def version_and_help(rounds: int, tmp: Path) -> None:
    wrapper = tmp / "minicode-no-re"
    wrapper.write_text(NO_RE_WRAPPER)
    cases = {
        "python -c pass": [PYTHON, "-c", "pass"],
        "minicode --version": [str(MINICODE), "--version"],
        "minicode --help": [str(MINICODE), "--help"],
        "no-re wrapper --version": [PYTHON, str(wrapper), "--version"],
        "no-re wrapper --help": [PYTHON, str(wrapper), "--help"],
    }
    env = dict(os.environ, COLUMNS="80")
    for argv in cases.values():
        wall(argv, env=env)  # warm the page cache
    times: dict[str, list[float]] = defaultdict(list)
    for _ in range(rounds):
        for name, argv in cases.items():
            times[name].append(wall(argv, env=env))
    base = statistics.median(times["python -c pass"])
    print(f"\n1. --version / --help: medians of {rounds} interleaved runs")
    for name, samples in times.items():
        med = statistics.median(samples)
        ratio = "" if name.startswith("python") else f"   {med / base:4.2f}x bare python"
        print(f"   {name:26} {1000 * med:7.1f} ms (min {1000 * min(samples):6.1f}){ratio}")
    print(f"   target ≤ {VERSION_TARGET}x; pip's console script imports `re` before minicode runs"
          " (the no-re wrapper is what uv writes)")


def first_requests(rounds: int, tmp: Path) -> None:
    with FakeOpenAI() as server:
        server.default = Reply.text("ok")
        agent = minicode_agent(tmp, server)
        floor = (f"import asyncio, httpx\nhttpx.Client(verify=False).post('{server.base_url}/chat/completions',"
                 " json={'stream': False})\n")
        runs = {
            "one-shot": lambda: _arrival(server, [*agent.argv("say hi")], agent, None),
            "pipe": lambda: _arrival(server, [*agent.argv_prefix], agent, b"say hi\n"),
            "floor (python+asyncio+httpx POST)": lambda: _arrival(server, [PYTHON, "-c", floor], agent, None),
        }
        for run in runs.values():
            run()  # warm
        times: dict[str, list[float]] = defaultdict(list)
        for _ in range(rounds):
            for name, run in runs.items():
                times[name].append(run())
    print(f"\n2. process start to the first request: medians of {rounds} interleaved runs")
    for name, samples in times.items():
        print(f"   {name:34} {1000 * statistics.median(samples):6.0f} ms (min {1000 * min(samples):5.0f})")
    floor_med = statistics.median(times["floor (python+asyncio+httpx POST)"])
    for mode in ("one-shot", "pipe"):
        med = statistics.median(times[mode])
        print(f"   {mode}: {med / floor_med:4.2f}x the floor; target ≤ {1000 * FIRST_REQUEST_TARGET:.0f} ms")


def _arrival(server: FakeOpenAI, argv: list[str], agent: object, stdin: bytes | None) -> float:
    before = len(server.requests)
    start = time.monotonic()
    proc = subprocess.Popen(argv, cwd=agent.cwd, env=agent.env, stdout=subprocess.DEVNULL,  # type: ignore[attr-defined]
                            stderr=subprocess.DEVNULL, stdin=subprocess.PIPE)
    assert proc.stdin is not None
    if stdin:
        proc.stdin.write(stdin)
    proc.stdin.close()
    if not server.wait_for_requests(before + 1, 60):
        raise SystemExit(f"no request from {argv[0]}")
    arrived = server.requests[before].arrived - start
    proc.wait(60)
    return arrived


def breakdown(tmp: Path) -> None:
    """One-shot under -X importtime; import lines timestamped as they arrive, cut at the request."""
    with FakeOpenAI() as server:
        server.default = Reply.text("ok")
        agent = minicode_agent(tmp, server)
        bare = statistics.median(wall([PYTHON, "-c", "pass"]) for _ in range(7))
        lines: list[tuple[float, str]] = []
        start = time.monotonic()
        proc = subprocess.Popen([PYTHON, "-X", "importtime", str(MINICODE), "say hi"], cwd=agent.cwd, env=agent.env,
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True)

        def read() -> None:
            assert proc.stderr is not None
            for line in proc.stderr:
                lines.append((time.monotonic(), line))

        reader = threading.Thread(target=read)
        reader.start()
        if not server.wait_for_requests(1, 60):
            raise SystemExit("no request")
        request_at = server.requests[0].arrived
        proc.wait(60)
        reader.join()
    groups: dict[str, float] = defaultdict(float)
    timed = [line for stamp, line in lines if stamp <= request_at]
    for group, seconds in _attribute(timed):
        groups[group] += seconds
    total = request_at - start
    imports = sum(groups.values())
    print(f"\n3. where the time goes before the first request (one run under -X importtime,"
          f" which slows it: {1000 * total:.0f} ms)")
    print(f"   {'interpreter start (bare python)':34} {1000 * bare:6.0f} ms")
    for name, seconds in sorted(groups.items(), key=lambda kv: -kv[1]):
        if seconds >= 0.001:
            print(f"   {'import ' + name:34} {1000 * seconds:6.0f} ms")
    print(f"   {'everything else (work, waiting)':34} {1000 * max(0.0, total - bare - imports):6.0f} ms")


def _attribute(lines: list[str]) -> list[tuple[str, float]]:
    """(group, self seconds) per import: the group of the nearest importer (or the module
    itself) that is minicode's, asyncio or httpx's family; ssl imported for httpx counts as
    httpx's. -X importtime prints children before their parent, indented by depth."""
    rows = []
    for line in lines:
        if not line.startswith("import time:") or "self [us]" in line:
            continue
        self_us, _, raw = line[len("import time:"):].split("|")
        name = raw.rstrip("\n")[1:]
        depth = (len(name) - len(name.lstrip())) // 2
        rows.append((depth, name.strip(), int(self_us) / 1e6))
    out = []
    chain: list[str] = []
    for depth, name, seconds in reversed(rows):  # now every parent comes before its children
        del chain[depth:]
        chain.append(name)
        out.append((next((g for g in map(_group, reversed(chain)) if g), "standard library"), seconds))
    return out


def _group(module: str) -> str | None:
    top = module.split(".")[0]
    if top == "minicode":
        return ".".join(module.split(".")[:2])
    if top in HTTPX_FAMILY:
        return "httpx (and what it imports)"
    if top == "asyncio":
        return "asyncio"
    return None


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=15)
    args = p.parse_args()
    subprocess.run([PYTHON, "-m", "compileall", "-q", str(ROOT / "src" / "minicode")], check=True)
    print(f"load average at start: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    with tempfile.TemporaryDirectory() as tmp:
        version_and_help(args.rounds, Path(tmp))
        first_requests(args.rounds, Path(tmp))
        breakdown(Path(tmp) / "breakdown")
    print(f"\nload average at end:   {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
