"""Start-up: `--version`/`--help`, the first request in one-shot and pipe mode, and where the time goes.

1. `minicode --version` and `--help` against a bare `python -c pass` (same interpreter,
   interleaved rounds, medians and their ratio; target ≤ 1.5x), through the installed
   executable (`bin/minicode`, which imports nothing before minicode) and, for comparison,
   through the wrapper pip writes for a `[project.scripts]` console script (it imports `re`
   first: what minicode was installed with before).
2. Process start to the first request arriving at the scripted server, one-shot
   (`minicode TASK`) and pipe (`echo TASK | minicode`); target ≤ 0.1 s. The first request is
   sent early (`cli/early_start.py`, before asyncio, httpx and the agent load); the same
   runs with `MINICODE_EARLY_REQUEST=0` show the normal path. Beside them the floor of any
   httpx-based Python agent: `python` + `import asyncio, httpx` + one POST.
3. Where the time goes before that first request (the new critical path): the one-shot run
   again under `-X importtime`, its import lines timestamped as they arrive and cut at the
   first request, grouped (interpreter, stdlib, asyncio, httpx and its dependencies, each
   minicode package) — plus the work that is not importing, and the modules imported after
   the early request went out but before it arrived (the main thread goes on meanwhile).
4. With `--instructions` (needs valgrind): the same starts counted in instructions
   (callgrind), which a busy machine does not change — bare python, --version, --help, and
   process start to the first request in one-shot and pipe mode (the process is stopped when
   the request arrives), beside the floor's imports (asyncio, httpx, httpcore, json, tomllib).

Compiles the package first (`compileall`): with PYTHONDONTWRITEBYTECODE set, as on the dev
container, an edited module would otherwise be compiled again on every start.

    .venv/bin/python bench/startup.py [--rounds 15] [--instructions] [--only version,first,breakdown]
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import signal
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
PIP_WRAPPER = ("import re\nimport sys\nfrom minicode.entry import main\nif __name__ == '__main__':\n"
               "    sys.argv[0] = re.sub(r'(-script\\.pyw|\\.exe)?$', '', sys.argv[0])\n    sys.exit(main())\n")
FLOOR_IMPORTS = "import asyncio, httpx, httpcore, json, tomllib"


def wall(argv: list[str], **kw: object) -> float:
    start = time.perf_counter()
    subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True, **kw)  # type: ignore[call-overload]
    return time.perf_counter() - start


def version_and_help(rounds: int, tmp: Path) -> None:
    wrapper = tmp / "minicode-pip-wrapper"
    wrapper.write_text(PIP_WRAPPER)
    cases = {
        "python -c pass": [PYTHON, "-c", "pass"],
        "minicode --version": [str(MINICODE), "--version"],
        "minicode --help": [str(MINICODE), "--help"],
        "pip's wrapper --version": [PYTHON, str(wrapper), "--version"],
        "pip's wrapper --help": [PYTHON, str(wrapper), "--help"],
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
    print(f"   target ≤ {VERSION_TARGET}x; pip's console-script wrapper (not installed any more) imports `re` first")


def first_requests(rounds: int, tmp: Path) -> None:
    with FakeOpenAI() as server:
        server.default = Reply.text("ok")
        agent = minicode_agent(tmp, server)
        floor = (f"import asyncio, httpx\nhttpx.Client(verify=False).post('{server.base_url}/chat/completions',"
                 " json={'stream': False})\n")
        normal = dict(agent.env, MINICODE_EARLY_REQUEST="0")
        runs = {
            "one-shot": lambda: _arrival(server, [*agent.argv("say hi")], agent, None),
            "pipe": lambda: _arrival(server, [*agent.argv_prefix], agent, b"say hi\n"),
            "one-shot, no early request": lambda: _arrival(server, [*agent.argv("say hi")], agent, None, normal),
            "pipe, no early request": lambda: _arrival(server, [*agent.argv_prefix], agent, b"say hi\n", normal),
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
        normal_med = statistics.median(times[f"{mode}, no early request"])
        print(f"   {mode}: {med / floor_med:4.2f}x the floor, {med / normal_med:4.2f}x without the early request;"
              f" target ≤ {1000 * FIRST_REQUEST_TARGET:.0f} ms")


def _arrival(server: FakeOpenAI, argv: list[str], agent: object, stdin: bytes | None,
             env: dict[str, str] | None = None) -> float:
    before = len(server.requests)
    start = time.monotonic()
    proc = subprocess.Popen(argv, cwd=agent.cwd, env=env or agent.env, stdout=subprocess.DEVNULL,  # type: ignore[attr-defined]
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
    sent_at = next((i for i, line in enumerate(timed) if line.rstrip().endswith(" minicode.provider.early")), None)
    after_send = [] if sent_at is None else [line.rsplit("|", 1)[-1].strip() for line in timed[sent_at + 1:]
                                             if line.startswith("import time:")]
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
    if sent_at is None:
        print("   (no early request: the first request went out on the normal path)")
    else:
        print(f"   the early request was sent after {sent_at + 1} import lines; {len(after_send)} more modules were"
              f" imported by the main thread before it arrived (up to {after_send[-1] if after_send else '-'})")


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


def instructions(tmp: Path) -> None:
    """Callgrind instruction counts: deterministic where wall time on a shared machine is not."""
    if shutil.which("valgrind") is None:
        print("\n4. instructions: valgrind not found, skipped")
        return
    vg = ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null"]
    env = dict(os.environ, COLUMNS="80")
    counts = {
        "python -c pass": _count([*vg, PYTHON, "-c", "pass"], env),
        "floor imports": _count([*vg, PYTHON, "-c", FLOOR_IMPORTS], env),
        "minicode --version": _count([*vg, PYTHON, str(MINICODE), "--version"], env),
        "minicode --help": _count([*vg, PYTHON, str(MINICODE), "--help"], env),
    }
    with FakeOpenAI() as server:
        server.default = Reply.text("ok")
        agent = minicode_agent(tmp, server)
        runs = (("one-shot", ["say hi"], None, ""), ("pipe", [], "say hi\n", ""),
                ("one-shot, no early request", ["say hi"], None, "0"), ("pipe, no early request", [], "say hi\n", "0"))
        for mode, task, stdin, early in runs:
            before = len(server.requests)
            run_env = dict(agent.env, MINICODE_EARLY_REQUEST=early) if early else agent.env
            proc = subprocess.Popen([*vg, PYTHON, str(MINICODE), *task], cwd=agent.cwd, env=run_env, text=True,
                                    stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            assert proc.stdin is not None
            if stdin:
                proc.stdin.write(stdin)
            proc.stdin.close()
            proc.stdin = None
            if not server.wait_for_requests(before + 1, 600):
                raise SystemExit(f"no request from {mode} under valgrind")
            proc.send_signal(signal.SIGTERM)  # minicode exits at once (exit 130); callgrind counts up to here
            counts[f"{mode} to first request"] = _instructions(proc.communicate(timeout=600)[1])
    base = counts["python -c pass"]
    print("\n4. instructions (callgrind; a busy machine does not change them)")
    for name, count in counts.items():
        print(f"   {name:34} {count / 1e6:8.1f} M   {count / base:5.2f}x bare python")


def _count(argv: list[str], env: dict[str, str]) -> int:
    return _instructions(subprocess.run(argv, capture_output=True, text=True, env=env, check=True).stderr)


def _instructions(callgrind_stderr: str) -> int:
    found = re.search(r"Collected : (\d+)", callgrind_stderr)
    if found is None:
        raise SystemExit(f"no callgrind total in: {callgrind_stderr[-500:]}")
    return int(found.group(1))


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=15)
    p.add_argument("--instructions", action="store_true", help="also count instructions with valgrind (slow)")
    p.add_argument("--only", default="version,first,breakdown",
                   help="comma-separated parts to run: version, first, breakdown (default: all three)")
    args = p.parse_args()
    parts = set(args.only.split(","))
    subprocess.run([PYTHON, "-m", "compileall", "-q", str(ROOT / "src" / "minicode")], check=True)
    print(f"load average at start: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    with tempfile.TemporaryDirectory() as tmp:
        if "version" in parts:
            version_and_help(args.rounds, Path(tmp))
        if "first" in parts:
            first_requests(args.rounds, Path(tmp))
        if "breakdown" in parts:
            breakdown(Path(tmp) / "breakdown")
        if args.instructions:
            instructions(Path(tmp) / "instructions")
    print(f"\nload average at end:   {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
