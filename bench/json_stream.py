"""Output bytes per answer byte of --output json and stream-json for a 2,000-token answer.

Run: .venv/bin/python bench/json_stream.py [--rates 50,200,instant]

The real `minicode` in one-shot mode against the fake server on 127.0.0.1, which streams a
Markdown answer of 2,000 chunks of 4 characters (about 2,000 tokens, ~8 KB) at each rate
(chunks per second; "instant": no delay). For each output format it prints stdout's size,
its ratio to the answer's size, the number of events and of delta events. Target
(docs/events.md): stream-json ≤ 3× the answer; json ≈ 2× (the answer is in the `assistant`
event and in the `result`); text is the baseline (the answer and one newline).

The "interleaved" rows: a server that alternates reasoning and text chunks, one 4-character
chunk of each in turn (2 × 1,000 chunks, the same ~8 KB in all), measured against the
reasoning plus the answer. Coalescing per kind keeps it near the plain case (finding J8:
a coalescer that restarted at every change of kind wrote one event per chunk, ~29×).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.support.fake_openai import FakeOpenAI, Reply  # noqa: E402

TOKENS = 2000
CHUNK = 4  # characters per streamed chunk, about one token
MINICODE = str(Path(sys.executable).parent / "minicode")


def answer_text(tokens: int = TOKENS) -> str:
    """A Markdown answer of exactly ``tokens`` × CHUNK characters: headings, prose, a list, code."""
    rng = random.Random(13)
    words = ("the function returns a value when the test file imports the module and the session "
             "stream writes each event to stdout as one line").split()
    parts: list[str] = []
    while sum(map(len, parts)) < tokens * CHUNK:
        roll = rng.random()
        if roll < 0.03:
            parts.append(f"\n\n## Step {len(parts)}\n\n")
        elif roll < 0.06:
            parts.append("\n```python\ndef f(x):\n    return x * 2\n```\n")
        elif roll < 0.12:
            parts.append(f"\n- item {rng.choice(words)}")
        else:
            parts.append(" " + rng.choice(words))
    return "".join(parts)[: tokens * CHUNK]


def run(mode: str, rate: float | None, answer: str, *, interleaved: bool = False) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp, FakeOpenAI() as server:
        workspace = Path(tmp) / "project"
        (workspace / "config").mkdir(parents=True)
        (workspace / "config" / "config.toml").write_text(
            f'[model]\nbase_url = "{server.base_url}"\nname = "fake-model"\napi_key = ""\n'
        )
        delay = 1 / rate if rate else 0.0
        usage = {"prompt_tokens": 900, "completion_tokens": TOKENS, "total_tokens": 900 + TOKENS}
        if interleaved:  # the first half as reasoning, the second as the answer, chunk by chunk in turn
            reasoning, answer = answer[: len(answer) // 2], answer[len(answer) // 2 :]
            server.script(Reply.text(answer, reasoning=reasoning, interleave=True, chunk_size=CHUNK,
                                     chunk_delay=delay / 2, usage=usage))  # fmt: skip
            measured = len((reasoning + answer).encode())
        else:
            server.script(Reply.text(answer, chunk_size=CHUNK, chunk_delay=delay, usage=usage))
            measured = len(answer.encode())
        argv = [MINICODE, "write the guide"] + ([] if mode == "text" else ["--output", mode])
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": tmp, "LANG": "C.UTF-8"}
        proc = subprocess.run(argv, cwd=workspace, env=env, capture_output=True, stdin=subprocess.DEVNULL, timeout=600)
        if proc.returncode != 0:
            raise SystemExit(f"{mode}: exit {proc.returncode}\n{proc.stderr.decode()}")
        stdout = proc.stdout
        events = [json.loads(line) for line in stdout.splitlines()] if mode != "text" else []
        if events and events[-1].get("answer") != answer:
            raise SystemExit(f"{mode}: the result's answer differs from what was streamed")
        return {
            "bytes": len(stdout),
            "ratio": len(stdout) / measured,
            "events": len(events),
            "deltas": sum(e["type"] == "delta" for e in events),
        }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rates", default="50,200,instant", help="chunks per second, comma-separated; 'instant' = no delay")
    args = parser.parse_args()
    answer = answer_text()
    print(f"answer: {TOKENS:,} chunks of {CHUNK} characters, {len(answer.encode()):,} bytes")
    text = run("text", None, answer)  # does not depend on the rate
    print(f"{'any rate':>15}  {'text':<12} {text['bytes']:>8,} bytes  {text['ratio']:5.2f}× the answer")
    for raw in args.rates.split(","):
        rate = None if raw.strip() == "instant" else float(raw)
        label = "instant" if rate is None else f"{rate:g} tokens/s"
        for mode in ("json", "stream-json"):
            r = run(mode, rate, answer)
            extra = f"  {r['events']:>4} events, {r['deltas']:>4} deltas"
            print(f"{label:>15}  {mode:<12} {r['bytes']:>8,} bytes  {r['ratio']:5.2f}× the answer{extra}")
        for mode in ("json", "stream-json"):
            r = run(mode, rate, answer, interleaved=True)
            extra = f"  {r['events']:>4} events, {r['deltas']:>4} deltas"
            shown = f"{mode} interleaved"
            print(f"{label:>15}  {shown:<24} {r['bytes']:>8,} bytes  {r['ratio']:5.2f}× reasoning + answer{extra}")


if __name__ == "__main__":
    main()
