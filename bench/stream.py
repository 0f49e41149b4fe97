"""Streaming cost: CPU per streamed event, minicode vs pi, in the same run (issue 16 item 1).

Both agents run one-shot against the scripted server twice per round: a short answer (the
fixed cost of a run) and a long one (2,000 events of one token at 200 tokens/s). The extra
CPU of the long run divided by its events is the streaming cost per event. Rounds interleave
the agents so machine noise hits both alike; medians are printed with the ratio.

Then, in-process (minicode only, no agent or UI): the provider alone reading the same stream
over httpx2 on its reader thread, with the event loop's wake-ups counted (the loop takes the
thread's events at most every 50 ms), twice: as the scripted server sends it (the body ends
when the connection closes) and with each event in its own HTTP chunk, as OpenAI's API and most
servers send it (httpx2 yields such a body a chunk at a time).

    .venv/bin/python bench/stream.py [--rounds 3] [--tokens 2000] [--rate 200] [--pi PATH | --no-pi]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from harness import (  # noqa: E402
    ROOT, FakeOpenAI, Reply, Run, add_pi_option, find_pi, median, minicode_agent, pi_agent, run_child,
)

TARGET_RATIO = 0.25


def long_reply(tokens: int, rate: float) -> Reply:
    # Words that differ (w1 w2 …): "word " repeated 2,000 times is a runaway, which minicode
    # cuts after 2,000 characters (agent/runaway.py) — the run then read a fifth of the stream.
    words = "".join(f"w{i:05d} " for i in range(tokens))  # one 7-character word an event
    return Reply.text(words, chunk_size=7, chunk_delay=1 / rate)


def measure_agents(args: argparse.Namespace, pi: str | None) -> None:
    with FakeOpenAI() as server, tempfile.TemporaryDirectory() as tmp:
        agents = [minicode_agent(Path(tmp), server)]
        if pi:
            agents.append(pi_agent(Path(tmp), server, pi))
        runs: dict[tuple[str, str], list[Run]] = {}
        for round_no in range(args.rounds):
            order = agents if round_no % 2 == 0 else agents[::-1]
            for agent in order:
                for kind, reply in (("short", Reply.text("ok")), ("long", long_reply(args.tokens, args.rate))):
                    server.script(reply)
                    run = run_child(agent, "say hello", server)
                    if run.returncode != 0:
                        raise SystemExit(f"{agent.name} exited {run.returncode} ({kind} answer)")
                    runs.setdefault((agent.name, kind), []).append(run)
            print(f"  round {round_no + 1}/{args.rounds} done", flush=True)
    print(f"\none-shot, {args.tokens:,} events at {args.rate:g}/s; medians of {args.rounds} interleaved rounds")
    per_event: dict[str, float] = {}
    for agent in agents:
        short = median([r.cpu for r in runs[(agent.name, "short")]])
        long = median([r.cpu for r in runs[(agent.name, "long")]])
        wall = median([r.wall for r in runs[(agent.name, "long")]])
        per_event[agent.name] = (long - short) / args.tokens
        print(f"{agent.name:9} CPU short answer {short:5.2f} s · long answer {long:5.2f} s (wall {wall:5.1f} s)"
              f" · extra {long - short:5.2f} s = {1000 * per_event[agent.name]:.3f} ms/event")
    if "pi" in per_event:
        ratio = per_event["minicode"] / per_event["pi"]
        verdict = "OK" if ratio <= TARGET_RATIO else "OVER TARGET"
        print(f"ratio minicode/pi per event: {ratio:.2f}   (target ≤ {TARGET_RATIO}: {verdict})")


def provider_only(args: argparse.Namespace) -> None:
    """The provider in this process, the server in another: CPU per event and loop wake-ups."""
    for framing, script in (("close-delimited", _SERVER), ("chunked", _CHUNKED_SERVER)):
        server = subprocess.Popen([sys.executable, "-c", script, str(args.tokens), str(args.rate)],
                                  stdout=subprocess.PIPE, text=True, cwd=ROOT)
        try:
            assert server.stdout is not None
            base_url = server.stdout.readline().strip()
            cpu, wakes, events, wall = asyncio.run(_read_stream(base_url))
            print(f"\nprovider alone (in-process, httpx2 on the reader thread, {framing} body): {events:,} events "
                  f"in {wall:.1f} s · {1000 * cpu / events:.3f} ms CPU/event · {wakes} event-loop wake-ups "
                  f"({wakes / wall:.0f}/s; one per network chunk would be {events / wall:.0f}/s)")
        finally:
            server.kill()
            server.wait()


_SERVER = """
import sys, time
sys.path.insert(0, '.')
from tests.support.fake_openai import FakeOpenAI, Reply
with FakeOpenAI() as s:
    s.default = Reply.text('word ' * int(sys.argv[1]), chunk_size=5, chunk_delay=1 / float(sys.argv[2]))
    print(s.base_url, flush=True)
    time.sleep(3600)
"""


_CHUNKED_SERVER = """
import json, socket, sys, threading, time
sys.path.insert(0, '.')
from tests.provider.helpers import read_raw_request
tokens, rate = int(sys.argv[1]), float(sys.argv[2])

def chunk(data):
    return b'%x\\r\\n' % len(data) + data + b'\\r\\n'

def serve(conn):
    with conn:
        while read_raw_request(conn) is not None:
            conn.sendall(b'HTTP/1.1 200 OK\\r\\nContent-Type: text/event-stream\\r\\nTransfer-Encoding: chunked\\r\\n\\r\\n')
            for _ in range(tokens):
                delta = {'choices': [{'index': 0, 'delta': {'content': 'word '}, 'finish_reason': None}]}
                conn.sendall(chunk(b'data: ' + json.dumps(delta).encode() + b'\\n\\n'))
                time.sleep(1 / rate)
            conn.sendall(chunk(b'data: [DONE]\\n\\n') + b'0\\r\\n\\r\\n')

listener = socket.create_server(('127.0.0.1', 0))
print(f'http://127.0.0.1:{listener.getsockname()[1]}/v1', flush=True)
while True:
    conn, _ = listener.accept()
    threading.Thread(target=serve, args=(conn,), daemon=True).start()
"""


async def _read_stream(base_url: str) -> tuple[float, int, int, float]:
    from minicode.provider.openai import OpenAIProvider
    from minicode.provider.types import ChatRequest, Message

    loop = asyncio.get_running_loop()
    selector = loop._selector  # type: ignore[attr-defined]
    real_select = selector.select
    wakes = [0]

    def counting_select(timeout: float | None = None) -> list:
        ready = real_select(timeout)
        wakes[0] += bool(ready)
        return ready

    provider = OpenAIProvider(base_url=base_url, api_key="", model="m", env={})
    request = ChatRequest(messages=(Message.user("hi"),))
    async for _ in provider.stream(request):  # warm up: imports, first connection
        pass
    selector.select = counting_select
    cpu0, wall0, events = time.process_time(), time.monotonic(), 0
    async for _ in provider.stream(request):
        events += 1
    cpu, wall = time.process_time() - cpu0, time.monotonic() - wall0
    selector.select = real_select
    await provider.aclose()
    return cpu, wakes[0], events, wall


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--tokens", type=int, default=2000)
    p.add_argument("--rate", type=float, default=200.0, help="tokens (events) per second")
    p.add_argument("--provider-only", action="store_true", help="only the in-process provider figure")
    add_pi_option(p)
    args = p.parse_args()
    print(f"load average at start: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    if not args.provider_only:
        measure_agents(args, find_pi(args.pi, args.no_pi))
    provider_only(args)
    print(f"load average at end:   {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
