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
4. The first full-screen frame of a fresh session (target ≤ 0.15 s): the real executable in
   a 120x40 pseudo-terminal this script reads itself, every chunk stamped as it arrives
   (``pty_frame.py``: no terminal emulator or polling client competes for the cores while
   the child starts), to the chunk that completes the status bar and prompt (the early
   frame, ``cli/tui/early.py``) and to the application's own frame; then where the time goes
   before the first frame, as in part 3 (``-X importtime`` on a pipe, cut at the frame).
5. With `--instructions` (needs valgrind): the same starts counted in instructions
   (callgrind), which a busy machine does not change — bare python, --version, --help,
   process start to the first request in one-shot and pipe mode (the process is stopped when
   the request arrives), and to the first full-screen frame (stopped when it is on the
   screen), beside the floor's imports (asyncio, httpx, httpcore, json, tomllib).

`--baseline OTHER/.venv/bin/minicode` runs another build (a worktree of main) in the same
interleaved rounds of parts 2 and 4 and the same counts of part 5, and prints both.

Compiles the package first (`compileall`): with PYTHONDONTWRITEBYTECODE set, as on the dev
container, an edited module would otherwise be compiled again on every start.

    .venv/bin/python bench/startup.py [--rounds 15] [--instructions] [--only version,first,breakdown,frame]
                                      [--baseline EXE]
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
from pty_frame import APP_MARK, COLUMNS, ROWS, first_frame, read_until, run_once, spawn  # noqa: E402

PYTHON = str(MINICODE.parent / "python")
VERSION_TARGET = 1.5
FIRST_REQUEST_TARGET = 0.1
FRAME_TARGET = 0.15
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


def first_requests(rounds: int, tmp: Path, exes: dict[str, Path]) -> None:
    with FakeOpenAI() as server:
        server.default = Reply.text("ok")
        floor = (f"import asyncio, httpx\nhttpx.Client(verify=False).post('{server.base_url}/chat/completions',"
                 " json={'stream': False})\n")
        runs = {}
        for label, exe in exes.items():
            agent = minicode_agent(tmp / f"first{len(runs)}", server, exe=exe)
            normal = dict(agent.env, MINICODE_EARLY_REQUEST="0")
            runs |= {
                f"one-shot{label}": lambda a=agent: _arrival(server, [*a.argv("say hi")], a, None),
                f"pipe{label}": lambda a=agent: _arrival(server, [*a.argv_prefix], a, b"say hi\n"),
                f"one-shot, no early request{label}":
                    lambda a=agent, e=normal: _arrival(server, [*a.argv("say hi")], a, None, e),
                f"pipe, no early request{label}":
                    lambda a=agent, e=normal: _arrival(server, [*a.argv_prefix], a, b"say hi\n", e),
            }
        runs["floor (python+asyncio+httpx POST)"] = lambda a=agent: _arrival(server, [PYTHON, "-c", floor], a, None)
        for run in runs.values():
            run()  # warm
        times: dict[str, list[float]] = defaultdict(list)
        for _ in range(rounds):
            for name, run in runs.items():
                times[name].append(run())
    print(f"\n2. process start to the first request: medians of {rounds} interleaved runs")
    for name, samples in times.items():
        print(f"   {name:46} {1000 * statistics.median(samples):6.0f} ms (min {1000 * min(samples):5.0f})")
    floor_med = statistics.median(times["floor (python+asyncio+httpx POST)"])
    for label in exes:
        for mode in ("one-shot", "pipe"):
            med = statistics.median(times[mode + label])
            normal_med = statistics.median(times[f"{mode}, no early request{label}"])
            print(f"   {mode}{label}: {med / floor_med:4.2f}x the floor, {med / normal_med:4.2f}x without the early"
                  f" request; target ≤ {1000 * FIRST_REQUEST_TARGET:.0f} ms")


def frames(rounds: int, tmp: Path, exes: dict[str, Path]) -> None:
    """The first full-screen frame of a fresh session in a pty read here (``pty_frame.py``)."""
    with FakeOpenAI() as server:
        agents = {label: minicode_agent(tmp / f"frame{i}", server, exe=exe)
                  for i, (label, exe) in enumerate(exes.items())}
        got: dict[str, list[tuple[float, float | None]]] = defaultdict(list)
        for round_ in range(rounds + 1):
            for label, agent in agents.items():
                env = dict(agent.env, TERM="xterm-256color")
                run = run_once(list(agent.argv_prefix), agent.cwd, env)
                if round_:  # the first round warms the OS caches
                    got[label].append((run.status_at, run.app_at))
                time.sleep(0.2)  # the killed child's exit is not part of the next start
    print(f"\n4. the first full-screen frame, fresh session, pty {COLUMNS}x{ROWS}: medians of {rounds} interleaved runs")
    for label, samples in got.items():
        first = [s for s, _ in samples]
        app = [a for _, a in samples if a is not None]
        print(f"   first frame{label:12} {1000 * statistics.median(first):6.0f} ms (min {1000 * min(first):5.0f})"
              f"   target ≤ {1000 * FRAME_TARGET:.0f} ms · the application's frame "
              f"{1000 * statistics.median(app) if app else float('nan'):6.0f} ms")


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


def frame_breakdown(tmp: Path, exe: Path) -> None:
    """A fresh full screen under -X importtime (its lines on a pipe, stamped as they arrive),
    cut where the first frame's last chunk arrived on the pty."""
    with FakeOpenAI() as server:
        agent = minicode_agent(tmp, server, exe=exe)
        python = str(exe.parent / "python")
        bare = statistics.median(wall([python, "-c", "pass"]) for _ in range(7))
        env = dict(agent.env, TERM="xterm-256color")
        read_fd, write_fd = os.pipe()
        proc, master, started = spawn([python, "-X", "importtime", str(exe)], agent.cwd, env, stderr=write_fd)
        os.close(write_fd)
        lines: list[tuple[float, str]] = []

        def read() -> None:
            with os.fdopen(read_fd, encoding="utf-8", errors="replace") as err:
                for line in err:
                    lines.append((time.monotonic() - started, line))

        reader = threading.Thread(target=read)
        reader.start()
        try:
            chunks = read_until(master, started, APP_MARK)
        finally:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(30)
            os.close(master)
        reader.join()
    found = first_frame(chunks)
    if found is None:
        raise SystemExit("no first frame under -X importtime")
    frame_at = found[0]
    timed = [line for stamp, line in lines if stamp <= frame_at]
    own = next((i for i, line in enumerate(timed) if "minicode" in line), 0)
    timed = timed[own:]  # the interpreter's own imports (encodings, site) are in the bare start already
    groups: dict[str, float] = defaultdict(float)
    for group, seconds in _attribute(timed, parts=3):
        groups[group] += seconds
    imports = sum(groups.values())
    print(f"\n4b. where the time goes before the first full-screen frame (one run under -X importtime,"
          f" which slows it: {1000 * frame_at:.0f} ms)")
    print(f"   {'interpreter start (bare python)':34} {1000 * bare:6.0f} ms")
    for name, seconds in sorted(groups.items(), key=lambda kv: -kv[1]):
        if seconds >= 0.0005:
            print(f"   {'import ' + name:34} {1000 * seconds:6.1f} ms")
    print(f"   {'everything else (work, writing)':34} {1000 * max(0.0, frame_at - bare - imports):6.0f} ms")
    costly = sorted(_self_times(timed), key=lambda kv: -kv[1])[:12]
    print("   costliest modules (own time): " + ", ".join(f"{n} {1000 * t:.1f}" for n, t in costly))


def _self_times(lines: list[str]) -> list[tuple[str, float]]:
    out = []
    for line in lines:
        if line.startswith("import time:") and "self [us]" not in line:
            self_us, _, raw = line[len("import time:"):].split("|")
            out.append((raw.strip(), int(self_us) / 1e6))
    return out


def _attribute(lines: list[str], parts: int = 2) -> list[tuple[str, float]]:
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
        out.append((next((g for g in (_group(m, parts) for m in reversed(chain)) if g), "standard library"), seconds))
    return out


def _group(module: str, parts: int = 2) -> str | None:
    top = module.split(".")[0]
    if top == "minicode":
        return ".".join(module.split(".")[:parts])
    if top in HTTPX_FAMILY:
        return "httpx (and what it imports)"
    if top == "asyncio":
        return "asyncio"
    return None


def instructions(tmp: Path, exes: dict[str, Path]) -> None:
    """Callgrind instruction counts: deterministic where wall time on a shared machine is not."""
    if shutil.which("valgrind") is None:
        print("\n5. instructions: valgrind not found, skipped")
        return
    vg = ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null"]
    env = dict(os.environ, COLUMNS="80")
    counts = {
        "python -c pass": _count([*vg, PYTHON, "-c", "pass"], env),
        "floor imports": _count([*vg, PYTHON, "-c", FLOOR_IMPORTS], env),
    }
    with FakeOpenAI() as server:
        server.default = Reply.text("ok")
        for i, (label, exe) in enumerate(exes.items()):
            python = str(exe.parent / "python")
            counts[f"minicode --version{label}"] = _count([*vg, python, str(exe), "--version"], env)
            counts[f"minicode --help{label}"] = _count([*vg, python, str(exe), "--help"], env)
            agent = minicode_agent(tmp / f"count{i}", server, exe=exe)
            runs = (("one-shot", ["say hi"], None, ""), ("pipe", [], "say hi\n", ""),
                    ("one-shot, no early request", ["say hi"], None, "0"),
                    ("pipe, no early request", [], "say hi\n", "0"))
            for mode, task, stdin, early in runs:
                before = len(server.requests)
                run_env = dict(agent.env, MINICODE_EARLY_REQUEST=early) if early else agent.env
                proc = subprocess.Popen([*vg, python, str(exe), *task], cwd=agent.cwd, env=run_env, text=True,
                                        stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
                assert proc.stdin is not None
                if stdin:
                    proc.stdin.write(stdin)
                proc.stdin.close()
                proc.stdin = None
                if not server.wait_for_requests(before + 1, 600):
                    raise SystemExit(f"no request from {mode} under valgrind")
                proc.send_signal(signal.SIGTERM)  # minicode exits at once (exit 130); callgrind counts up to here
                counts[f"{mode} to first request{label}"] = _instructions(proc.communicate(timeout=600)[1])
            counts[f"full screen to first frame{label}"] = _frame_instructions(
                [*vg, python, str(exe)], agent.cwd, dict(agent.env, TERM="xterm-256color"))
    base = counts["python -c pass"]
    print("\n5. instructions (callgrind; a busy machine does not change them)")
    for name, count in counts.items():
        print(f"   {name:46} {count / 1e6:8.1f} M   {count / base:5.2f}x bare python")


def _frame_instructions(argv: list[str], cwd: Path, env: dict[str, str]) -> int:
    """Instructions from process start to the first full-screen frame on the pty (then SIGTERM)."""
    read_fd, write_fd = os.pipe()
    proc, master, started = spawn(argv, cwd, env, stderr=write_fd)
    os.close(write_fd)
    chunks: list[tuple[float, bytes]] = []
    try:
        while first_frame(chunks) is None:
            more = read_until(master, time.monotonic(), b"\x1b[?25h", timeout=600)
            if not more:
                raise SystemExit("no first frame under valgrind")
            chunks += more
        proc.send_signal(signal.SIGTERM)  # exit 130 at once; callgrind prints its total
        with os.fdopen(read_fd, encoding="utf-8", errors="replace") as err:
            report = err.read()
        proc.wait(600)
    finally:
        os.close(master)
    return _instructions(report)


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
    p.add_argument("--only", default="version,first,breakdown,frame",
                   help="comma-separated parts to run: version, first, breakdown, frame (default: all four)")
    p.add_argument("--baseline", metavar="EXE", type=Path,
                   help="another build's minicode (a worktree of main) in the same rounds of parts 2, 4 and 5")
    args = p.parse_args()
    parts = set(args.only.split(","))
    exes = {"": MINICODE}
    if args.baseline is not None:
        exes[" (baseline)"] = args.baseline.absolute()
        subprocess.run([str(args.baseline.parent / "python"), "-m", "compileall", "-q",
                        str(args.baseline.parents[2] / "src" / "minicode")], check=True)
    subprocess.run([PYTHON, "-m", "compileall", "-q", str(ROOT / "src" / "minicode")], check=True)
    print(f"load average at start: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    with tempfile.TemporaryDirectory() as tmp:
        if "version" in parts:
            version_and_help(args.rounds, Path(tmp))
        if "first" in parts:
            first_requests(args.rounds, Path(tmp), exes)
        if "breakdown" in parts:
            breakdown(Path(tmp) / "breakdown")
        if "frame" in parts:
            frames(args.rounds, Path(tmp), exes)
            frame_breakdown(Path(tmp) / "frame-breakdown", MINICODE)
        if args.instructions:
            instructions(Path(tmp) / "instructions", exes)
    print(f"\nload average at end:   {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
