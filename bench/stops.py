"""How fast minicode stops (issue 11): figures, no assertions.

1. ``--timeout 2`` during a catastrophic regex (``grep ^(a+)+$`` over 30 files of
   ``"a"*40 + "!"``, about a minute of backtracking if nothing stopped it): how long after the
   2 s deadline the process has exited, and the task time minicode itself reports.
2. SIGTERM while that grep runs: from the signal to the exit.
3. Start-up signals: SIGTERM at delays after the process starts; how many runs minicode's own
   handlers answered (exit 130, one line) and how many died in the interpreter's own start-up,
   before any of minicode's code ran (``minicode.entry``; see docs/usage.md). With the time a
   bare ``python -c pass`` takes on this machine now, for scale.

    .venv/bin/python bench/stops.py [--rounds N]
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.support.fake_openai import FakeOpenAI, Reply  # noqa: E402

MINICODE = ROOT / ".venv" / "bin" / "minicode"
PYTHON = ROOT / ".venv" / "bin" / "python"
KEY = "FAKE_KEY"


def _workspace(server: FakeOpenAI, evil_files: int = 0) -> tuple[Path, dict[str, str]]:
    base = Path(tempfile.mkdtemp(prefix="minicode-stops-"))
    ws = base / "ws"
    (ws / "config").mkdir(parents=True)
    (ws / "config" / "config.toml").write_text(
        f'[model]\nbase_url = "{server.base_url}"\nname = "fake-model"\napi_key_env = "{KEY}"\n')
    from minicode.trust.project_config import confirm_written

    confirm_written(ws / "config" / "config.toml", ws, {"HOME": str(base)})  # the user's file, as --init confirms it
    for i in range(evil_files):
        (ws / f"evil{i:02}.txt").write_text("a" * 40 + "!\n")
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(base), KEY: "sk-bench", "LANG": "C.UTF-8"}
    return ws, env


def _timeout_overrun(rounds: int) -> None:
    overruns, reported = [], []
    for _ in range(rounds):
        with FakeOpenAI() as server:
            ws, env = _workspace(server, evil_files=30)
            server.script(Reply.tool("grep", pattern=r"^(a+)+$"), Reply.text("never"))
            started = time.monotonic()
            done = subprocess.run([str(MINICODE), "--output", "json", "--yes", "--timeout", "2", "search"],
                                  cwd=ws, env=env, capture_output=True, text=True, timeout=120)
            elapsed = time.monotonic() - started
            result = json.loads(done.stdout.splitlines()[-1])
            reported.append(result["stats"]["wall_seconds"] - 2.0)
            overruns.append(elapsed)
    print(f"--timeout 2 during a catastrophic grep ({rounds} runs): task ended "
          f"{statistics.median(reported) * 1000:.0f} ms after the deadline by minicode's own clock "
          f"(max {max(reported) * 1000:.0f} ms); process start to exit {statistics.median(overruns):.2f} s median "
          f"(max {max(overruns):.2f} s, start-up included)")


def _sigterm_latency(rounds: int) -> None:
    latencies = []
    for _ in range(rounds):
        with FakeOpenAI() as server:
            ws, env = _workspace(server, evil_files=30)
            server.script(Reply.tool("grep", pattern=r"^(a+)+$"), Reply.text("never"))
            proc = subprocess.Popen([str(MINICODE), "--yes", "search"], cwd=ws, env=env, text=True,
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            assert proc.stderr is not None
            for line in proc.stderr:  # the progress line of the call is not shown off a terminal:
                if line.startswith("minicode: session "):  # wait for the session, then the worker
                    break
            time.sleep(1.0)
            sent = time.monotonic()
            proc.send_signal(signal.SIGTERM)
            proc.wait(timeout=60)
            latencies.append(time.monotonic() - sent)
    print(f"SIGTERM during a catastrophic grep ({rounds} runs): exit {statistics.median(latencies) * 1000:.0f} ms "
          f"after the signal (median; max {max(latencies) * 1000:.0f} ms)")


def _startup_window(rounds: int) -> None:
    bare = []
    for _ in range(rounds):
        started = time.monotonic()
        subprocess.run([str(PYTHON), "-c", "pass"], check=True)
        bare.append(time.monotonic() - started)
    print(f"python -c pass: {statistics.median(bare) * 1000:.0f} ms median now (the machine's load shows here)")
    with FakeOpenAI() as server:
        ws, env = _workspace(server)
        server.default = Reply.text("slow " * 50, chunk_size=4, chunk_delay=0.01)
        for delay_ms in (0, 10, 20, 30, 40, 60, 80, 100, 150):
            outcomes = {"130": 0, "interpreter": 0, "other": 0}
            for _ in range(rounds):
                proc = subprocess.Popen([str(MINICODE), "--yes", "explain"], cwd=ws, env=env,
                                        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                        stderr=subprocess.PIPE, text=True, start_new_session=True)
                time.sleep(delay_ms / 1000)
                proc.send_signal(signal.SIGTERM)
                _, err = proc.communicate(timeout=30)
                if proc.returncode == 130 and err.count("minicode: interrupted") == 1 and "Traceback" not in err:
                    outcomes["130"] += 1
                elif proc.returncode == -signal.SIGTERM and err == "":
                    outcomes["interpreter"] += 1
                else:
                    outcomes["other"] += 1
            print(f"SIGTERM {delay_ms:3d} ms after start: {outcomes['130']}/{rounds} exit 130 by minicode, "
                  f"{outcomes['interpreter']}/{rounds} during the interpreter's own start"
                  + (f", {outcomes['other']} other" if outcomes["other"] else ""))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    print(f"load average: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    _timeout_overrun(args.rounds)
    _sigterm_latency(args.rounds)
    _startup_window(args.rounds)


if __name__ == "__main__":
    main()
