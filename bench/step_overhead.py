"""Harness overhead per tool step, and pipe-mode start-up time to the first request.

Run: .venv/bin/python bench/step_overhead.py

1. Per step: a provider that answers at once asks for `read` of a small file; the time per
   step (context build, budget check, request validation-free scripted call, tool run, two
   fsync'd appends) is measured with 10, 100 and 1,000 earlier messages in the session.
   Targets: < 5 ms per step at 10 messages; 1,000/10 ratio < 1.5.
2. Start-up: the real `minicode` in pipe mode against the fake server on 127.0.0.1; time
   from process start to the first request arriving. Target: < 250 ms (median of 5).
"""

from __future__ import annotations

import asyncio
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from minicode.agent.approval import AutoApprover  # noqa: E402
from minicode.config import Config, ModelConfig  # noqa: E402
from minicode.provider.types import ChatRequest, ChatResponse, Message, StreamEnd, ToolCall, Usage  # noqa: E402
from minicode.session.session import Session  # noqa: E402
from tests.support.fake_openai import FakeOpenAI, Reply  # noqa: E402

STEPS = 200


class InstantProvider:
    """Answers every request at once (with usage, like real servers): a `read` call, then text."""

    model = "instant"

    def __init__(self) -> None:
        self.n = 0
        self.stop_after = 0

    def _response(self) -> ChatResponse:
        self.n += 1
        usage = Usage(prompt_tokens=1000 + self.n, completion_tokens=10, total_tokens=1010 + self.n)
        if self.n > self.stop_after:
            return ChatResponse(Message(role="assistant", content="done"), "stop", usage)
        call = ToolCall(f"c{self.n}", "read", '{"path": "small.txt"}')
        return ChatResponse(Message(role="assistant", tool_calls=(call,)), "tool_calls", usage)

    async def chat(self, request: ChatRequest) -> ChatResponse:
        return self._response()

    async def _events(self):
        yield StreamEnd(self._response())

    def stream(self, request: ChatRequest):
        return self._events()

    async def aclose(self) -> None:
        pass


async def per_step_ms(earlier: int) -> float:
    with tempfile.TemporaryDirectory() as tmp:
        ws = Path(tmp).resolve()
        (ws / "small.txt").write_text("hello\n" * 20)
        config = Config(ModelConfig("http://127.0.0.1:9/v1", "instant", "k"), Path("x"))
        provider = InstantProvider()
        session = await Session.open(config=config, workspace=ws, env={}, provider=provider)
        for i in range(earlier // 2):  # earlier history: user/assistant pairs
            await session._history.append(Message.user(f"earlier question {i} " + "x" * 200))
            await session._history.append(Message(role="assistant", content=f"earlier answer {i} " + "y" * 200))
        assert len(session.messages) == earlier // 2 * 2, "the earlier history was not built"
        provider.stop_after = provider.n + STEPS
        start = time.perf_counter()
        finished = await session.turn("go", approver=AutoApprover(), emit=lambda e: None, max_turns=STEPS + 5)
        elapsed = time.perf_counter() - start
        assert finished.stats.tool_calls == STEPS, finished
        await session.aclose()
        return elapsed * 1000 / (STEPS + 1)


def startup_ms() -> float:
    exe = Path(sys.executable).parent / "minicode"
    with tempfile.TemporaryDirectory() as tmp, FakeOpenAI() as server:
        ws = Path(tmp).resolve() / "ws"  # not HOME itself: a home directory as workspace is asked about
        (ws / "config").mkdir(parents=True)
        (ws / "config" / "config.toml").write_text(
            f'[model]\nbase_url = "{server.base_url}"\nname = "m"\napi_key = ""\n'
        )
        server.default = Reply.text("ok")
        start = time.monotonic()
        proc = subprocess.Popen([str(exe)], cwd=ws, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL, env={"PATH": "/usr/bin:/bin", "HOME": tmp})
        assert proc.stdin is not None
        proc.stdin.write(b"hi\n")
        proc.stdin.close()
        assert server.wait_for_requests(1, 20)
        first = server.requests[0].arrived
        proc.wait(20)
        return (first - start) * 1000


def main() -> None:
    results = {n: min(asyncio.run(per_step_ms(n)) for _ in range(3)) for n in (10, 100, 1000)}
    for n, ms in results.items():
        print(f"per tool step with {n:>5} earlier messages: {ms:6.2f} ms")
    print(f"ratio 1,000 / 10: {results[1000] / results[10]:.2f}")
    runs = [startup_ms() for _ in range(5)]
    print(f"pipe mode, process start to first request: median {statistics.median(runs):.0f} ms "
          f"(min {min(runs):.0f}, max {max(runs):.0f})")


if __name__ == "__main__":
    main()
