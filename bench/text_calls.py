"""Tool calls written as text (agent/text_calls.py): what recognising them costs, and, against a
live model, how many of its first answers are calls minicode recovers.

    .venv/bin/python bench/text_calls.py                      # cost over the corpora and hostile text
    .venv/bin/python bench/text_calls.py --live http://127.0.0.1:8080/v1 [--model qwen2.5-coder-1.5b]
    .venv/bin/python bench/text_calls.py --live URL --tasks [--src OTHER/src --label main]

The live part sends minicode's own first request (system prompt and the seven tools) for a few
small tasks, one at a time, and says per task whether the answer was a native call, a call
written as text that minicode recovers, or text. ``--tasks`` instead runs four of them through
the real executable (``--yes``, a fresh workspace each, checked afterwards), with the sources
of ``--src`` (another checkout's ``src`` to compare). It needs a running server
(../shared/live/serve.sh).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import tempfile
import statistics
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "src"), str(ROOT)]

from minicode.agent.prompt import system_prompt  # noqa: E402
from minicode.agent.text_calls import recover_calls  # noqa: E402
from minicode.provider.messages import tool_spec_to_openai  # noqa: E402
from minicode.tools.registry import default_registry  # noqa: E402
from tests.agent.test_text_calls import CALLS, PROSE  # noqa: E402

TOOLS = default_registry().specs()
TASKS = (
    "Create hello.py that prints Hello, world!",
    "Run count.py and tell me the number it prints.",
    "Fix the bug in calc.py: add(2, 3) returns -1.",
    "Which files are in this project?",
    "Read config.json and change the port to 9000.",
    "Rename the function old_name to new_name in util.py and main.py.",
    "What does greet.py do?",
    "Add a test for add() in test_calc.py and run it.",
)


def _timed(text: str, rounds: int = 200) -> float:
    """Microseconds per call, the best of three batches."""
    best = float("inf")
    for _ in range(3):
        started = time.perf_counter()
        for _ in range(rounds):
            recover_calls(text, TOOLS)
        best = min(best, (time.perf_counter() - started) / rounds)
    return best * 1e6


def cost() -> None:
    for name, cases in (("calls", CALLS), ("prose", PROSE)):
        times = [_timed(case.text) for case in cases]
        print(f"{name:5} corpus  {len(cases):3} replies · median {statistics.median(times):6.1f} µs"
              f" · max {max(times):7.1f} µs per reply")
    native = "Done: `hello.py` prints Hello, world! " * 40 + '\n```json\n{"port": 8080}\n```'
    hostile = {
        "a 2 KB final answer quoting JSON": native,
        "a 190 KB write call": json.dumps({"name": "write", "arguments": {"path": "a", "content": "x" * 190_000}}),
        "15,000 lines opening '{'": "{ not json\n" * 15_000,
        "100,000 nested '['": '{"name": "read", "arguments": ' + "[" * 100_000,
        "100,000 '<tool_call>'": "<tool_call>" * 100_000,
    }
    for label, text in hostile.items():
        print(f"{label:34} {_timed(text, rounds=5) / 1000:8.2f} ms  -> {'call' if recover_calls(text, TOOLS) else 'text'}")


def live(base_url: str, model: str) -> None:
    specs = list(TOOLS)
    system = system_prompt(Path("/tmp/ws"), specs)
    tally = {"native": 0, "recovered": 0, "text": 0, "error": 0}
    for task in TASKS:
        body = {"model": model, "max_tokens": 400, "tools": [tool_spec_to_openai(s) for s in specs],
                "messages": [{"role": "system", "content": system}, {"role": "user", "content": task}]}
        request = urllib.request.Request(base_url.rstrip("/") + "/chat/completions", json.dumps(body).encode(),
                                         {"Content-Type": "application/json"})
        started = time.perf_counter()
        try:
            with urllib.request.urlopen(request, timeout=600) as answer:
                message = json.load(answer)["choices"][0]["message"]
        except (OSError, ValueError, KeyError) as e:
            tally["error"] += 1
            print(f"error      {task}: {e}")
            continue
        seconds = time.perf_counter() - started
        content = message.get("content") or ""
        found = None if message.get("tool_calls") else recover_calls(content, specs)
        kind = "native" if message.get("tool_calls") else "recovered" if found else "text"
        tally[kind] += 1
        shown = ", ".join(f"{c.name}({c.arguments[:60]})" for c in found.calls) if found else " ".join(content.split())[:90]
        print(f"{kind:10} {seconds:5.1f} s  {task}\n           {shown}")
    print(" · ".join(f"{k} {v}" for k, v in tally.items()), f"of {len(TASKS)} first answers")


CHECKED = (
    ("hello", "Create hello.py that prints Hello, world!", {},
     lambda ws, out: subprocess.run(["python3", "hello.py"], cwd=ws, capture_output=True, text=True).stdout.strip()
     == "Hello, world!"),
    ("count", "Run count.py and tell me the number it prints.", {"count.py": "print(6 * 7 + 17)\n"},
     lambda ws, out: "59" in out),
    ("calc", "Fix the bug in calc.py: add(2, 3) returns -1.", {"calc.py": "def add(a, b):\n    return a - b\n"},
     lambda ws, out: subprocess.run(["python3", "-c", "from calc import add; assert add(2, 3) == 5"], cwd=ws,
                                    capture_output=True).returncode == 0),
    ("port", "Change the port in config.json to 9000.", {"config.json": '{"host": "127.0.0.1", "port": 8080}\n'},
     lambda ws, out: json.loads((Path(ws) / "config.json").read_text()).get("port") == 9000),
)


def tasks(base_url: str, model: str, src: str, label: str) -> None:
    config = f'[model]\nbase_url = "{base_url}"\nname = "{model}"\napi_key = ""\ncontext_window = 32768\n'
    solved = 0
    for name, task, files, check in CHECKED:
        ws = Path(tempfile.mkdtemp(prefix=f"text-calls-{label}-{name}-"))
        (ws / "config").mkdir()
        (ws / "config" / "config.toml").write_text(config)
        for file, content in files.items():
            (ws / file).write_text(content)
        home = tempfile.mkdtemp(prefix="text-calls-home-")  # outside the workspace: minicode refuses a home inside
        env = {"PATH": os.environ["PATH"], "HOME": home, "PYTHONPATH": src, "LANG": "C.UTF-8"}
        started = time.monotonic()
        run = subprocess.run([sys.executable, "-m", "minicode", "--yes", task], cwd=ws, env=env,
                             capture_output=True, text=True, timeout=900)
        wall = time.monotonic() - started
        try:
            ok = bool(check(str(ws), run.stdout))
        except (OSError, ValueError):
            ok = False
        solved += ok
        stats = [line for line in run.stderr.splitlines() if "model call" in line]
        print(f"{label:10} {name:6} {'SOLVED' if ok else 'failed':7} {wall:6.1f} s  recovered "
              f"{run.stderr.count('recovered from text')}  {stats[-1] if stats else run.stderr.strip()[-120:]}")
    print(f"{label}: {solved} of {len(CHECKED)} solved")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--live", metavar="BASE_URL", help="also ask a running server (…/v1)")
    parser.add_argument("--model", default="qwen2.5-coder-1.5b")
    parser.add_argument("--tasks", action="store_true", help="with --live: run four checked tasks through minicode")
    parser.add_argument("--src", default=str(ROOT / "src"), help="the minicode sources --tasks runs")
    parser.add_argument("--label", default="this tree")
    args = parser.parse_args()
    if args.tasks and args.live:
        tasks(args.live, args.model, args.src, args.label)
        return
    cost()
    if args.live:
        live(args.live, args.model)


if __name__ == "__main__":
    main()
