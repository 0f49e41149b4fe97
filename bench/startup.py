"""Start-up benchmark: `minicode --version` vs a bare `python -c pass`, in the same run.

Prints the median wall time of each, their ratio, the peak RSS of one child process
(from os.wait4, so each run is measured on its own), and the third-party top-level
packages that `--version` imports (from `-X importtime`). Target: median < 80 ms.

    .venv/bin/python bench/startup.py [--runs N] [--exe PATH]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

TARGET_MS = 80.0
ROOT = Path(__file__).resolve().parents[1]


def run_once(argv: list[str]) -> tuple[float, int]:
    """Wall seconds and peak RSS (KiB) of one child, measured by wait4 for that child alone."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    elapsed = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)  # keeps Popen from waiting again
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} exited {proc.returncode}")
    return elapsed, usage.ru_maxrss


def measure(argv: list[str], runs: int) -> tuple[float, int]:
    run_once(argv)  # warm the page cache and .pyc files; not counted
    samples = [run_once(argv) for _ in range(runs)]
    return statistics.median(s[0] for s in samples), max(s[1] for s in samples)


_LOADED = (
    "import sys, atexit\n"
    "atexit.register(lambda: print('\\n'.join(sorted({m.split('.')[0] for m in sys.modules}))))\n"
)


def imported_packages(python: str, code: str) -> set[str]:
    """Top-level packages named by `-X importtime` that really loaded (failed probes such as
    copy's `org.python.core` also appear in importtime and are dropped)."""
    r = subprocess.run([python, "-X", "importtime", "-c", _LOADED + code],
                       capture_output=True, text=True, check=False)
    timed = {
        line.rsplit("|", 1)[-1].strip().split(".")[0]
        for line in r.stderr.splitlines()
        if line.startswith("import time:") and not line.endswith("imported package")
    }
    loaded = set(r.stdout.split())
    return timed & loaded


def third_party_imports(python: str, exe: str) -> list[str]:
    """Packages outside the standard library that `minicode --version` adds to bare python."""
    run_script = (
        "import runpy, sys\n"
        f"sys.argv = [{exe!r}, '--version']\n"
        "try:\n"
        f"    runpy.run_path({exe!r}, run_name='__main__')\n"
        "except SystemExit:\n"
        "    pass\n"
    )
    baseline = imported_packages(python, "pass")
    names = imported_packages(python, run_script) - baseline
    stdlib = set(sys.stdlib_module_names) | set(sys.builtin_module_names) | {"minicode"}
    return sorted(n for n in names if n not in stdlib and not n.startswith("_"))


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--runs", type=int, default=20)
    p.add_argument("--exe", default=str(ROOT / ".venv" / "bin" / "minicode"),
                   help="the console script to time (default: the project venv's)")
    a = p.parse_args()
    if a.runs < 10:
        p.error("--runs must be at least 10")
    exe = Path(a.exe)
    if not exe.is_file():
        p.error(f"{exe} not found; install first: python3 -m venv .venv && .venv/bin/pip install -e .")
    python = str(exe.parent / "python")  # the same interpreter the console script uses

    base_t, base_rss = measure([python, "-c", "pass"], a.runs)
    mc_t, mc_rss = measure([str(exe), "--version"], a.runs)
    extra = third_party_imports(python, str(exe))

    print(f"runs: {a.runs} each (after one warm-up)")
    print(f"python -c pass        median {base_t * 1000:7.1f} ms   peak RSS {base_rss / 1024:6.1f} MiB")
    print(f"minicode --version    median {mc_t * 1000:7.1f} ms   peak RSS {mc_rss / 1024:6.1f} MiB")
    print(f"ratio vs bare python  {mc_t / base_t:.2f}x")
    print(f"third-party imports   {', '.join(extra) if extra else '(none)'}")
    verdict = "OK" if mc_t * 1000 < TARGET_MS else "OVER TARGET"
    print(f"target < {TARGET_MS:.0f} ms      {verdict}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
