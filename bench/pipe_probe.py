"""Pipe-mode memory in-process: what each task adds to Python's heap (tracemalloc), and where.

A real ``Session`` (session file, context, compaction, the loop) runs N tasks against an
in-process provider that answers the ~2,000-token Markdown answer of render.py at once and,
like the benches' fake server, reports 100 prompt tokens for every request (so only
minicode's own estimate can trigger compaction; summary requests get the same answer). The
request body is encoded as the real provider does (``provider.body``). Snapshots at two
points (default: tasks 200 and 400) are diffed: the growth per task and the lines that grew.

    .venv/bin/python bench/pipe_probe.py [--tasks 400] [--at 200] [--top 12] [--window 262144]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import sys
import tempfile
import tracemalloc
from pathlib import Path
from typing import AsyncGenerator

sys.path.insert(0, str(Path(__file__).resolve().parent))

from render import answer_markdown  # noqa: E402

from minicode.agent.approval import AutoApprover  # noqa: E402
from minicode.config import Config, ModelConfig  # noqa: E402
from minicode.provider.body import encode_body  # noqa: E402
from minicode.provider.messages import to_openai  # noqa: E402
from minicode.provider.types import ChatRequest, ChatResponse, Message, StreamEnd, StreamEvent, TextDelta, Usage  # noqa: E402
from minicode.session.session import Session  # noqa: E402

USAGE = Usage(prompt_tokens=100, completion_tokens=2000, total_tokens=2100)


class Answers:
    """A Provider answering every request with the same text; counts requests and body bytes."""

    model = "probe-model"

    def __init__(self, text: str) -> None:
        self.text = text
        self.requests = 0
        self.summaries = 0
        self.body_bytes = 0

    def _encode(self, request: ChatRequest) -> None:
        self.body_bytes = encode_body({"model": self.model, "messages": [to_openai(m) for m in request.messages]}).length

    async def chat(self, request: ChatRequest) -> ChatResponse:
        self.summaries += 1
        self._encode(request)
        return ChatResponse(Message(role="assistant", content=f"summary {self.summaries}: " + self.text[:4000]),
                            "stop", USAGE)

    async def stream(self, request: ChatRequest) -> AsyncGenerator[StreamEvent, None]:
        self.requests += 1
        self._encode(request)
        text = f"{self.text}\n\nanswer {self.requests}"  # a new string each time, like a real answer
        yield TextDelta(text)
        yield StreamEnd(ChatResponse(Message(role="assistant", content=text), "stop", USAGE))

    async def aclose(self) -> None:
        pass


async def probe(tasks: int, at: int, top: int, window: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        ws = Path(tmp) / "ws"
        ws.mkdir()
        model = ModelConfig(base_url="http://127.0.0.1:9/v1", name="probe-model", api_key="k", context_window=window)
        provider = Answers(answer_markdown())
        session = await Session.open(config=Config(model=model, path=Path(tmp) / "none.toml"), workspace=ws,
                                     env={"HOME": tmp, "PATH": "/usr/bin:/bin"}, provider=provider)
        compactions = 0

        def count(event: object) -> None:
            nonlocal compactions
            compactions += type(event).__name__ == "CompactionDone"

        tracemalloc.start(8)
        first = second = None
        sizes: list[tuple[int, int]] = []
        for n in range(1, tasks + 1):
            await session.turn(f"task {n}: say something", approver=AutoApprover(), emit=count)
            if n % max(1, tasks // 10) == 0 or n in (at, tasks):
                gc.collect()
                sizes.append((n, tracemalloc.get_traced_memory()[0]))
                log = session.messages
                parsed = log.parsed_count() if hasattr(log, "parsed_count") else len(log)
                print(f"  task {n:5}: traced {sizes[-1][1] / 1e6:6.2f} MB · {len(log):5} messages, {parsed:4} in memory"
                      f" · {compactions} compactions · last body {provider.body_bytes / 1e6:5.2f} MB", flush=True)
            if n == at:
                first = tracemalloc.take_snapshot()
        second = tracemalloc.take_snapshot()
        tracemalloc.stop()
        await session.aclose()
    a = next(s for n, s in sizes if n == at)
    b = sizes[-1][1]
    print(f"growth tasks {at}..{tasks}: {(b - a) / 1024 / max(1, tasks - at):+.2f} KB a task")
    if first is not None:
        print(f"largest growth by line (tasks {at}..{tasks}):")
        for stat in second.compare_to(first, "lineno")[:top]:
            print(f"  {stat.size_diff / 1024:+9.1f} KB {stat.count_diff:+7} blocks  {stat.traceback[0]}")


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--tasks", type=int, default=400)
    p.add_argument("--at", type=int, default=200, help="the first snapshot (the second is at --tasks)")
    p.add_argument("--top", type=int, default=12)
    p.add_argument("--window", type=int, default=256 * 1024, help="context window (tokens)")
    args = p.parse_args()
    asyncio.run(probe(args.tasks, min(args.at, args.tasks), args.top, args.window))
    return 0


if __name__ == "__main__":
    sys.exit(main())
