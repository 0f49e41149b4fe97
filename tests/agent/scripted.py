"""A scripted Provider for loop tests: replays responses, records requests, can fail or hang.

No HTTP. ``stream()`` yields the text in small pieces, then a ``StreamEnd``; a step may raise
after some pieces (a failed stream) or hang until cancelled. Every request's messages are
validated like the real provider does, so an invalid history fails the test.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field
from typing import Any, AsyncGenerator

from minicode.provider.messages import validate_messages
from minicode.provider.types import (
    ChatRequest,
    ChatResponse,
    Message,
    ReasoningDelta,
    RetryNotice,
    StreamEnd,
    StreamEvent,
    TextDelta,
    ToolCall,
    Usage,
)

USAGE = Usage(prompt_tokens=100, completion_tokens=10, total_tokens=110)


@dataclass
class Step:
    response: ChatResponse | None = None
    error: BaseException | None = None
    after_chunks: int = 0  # with error: how many text pieces are streamed first
    hang: bool = False
    retries: tuple[RetryNotice, ...] = ()  # reported through request.on_retry before the answer


def text(content: str, *, usage: Usage | None = USAGE, reasoning: str | None = None, finish: str = "stop") -> Step:
    return Step(ChatResponse(Message(role="assistant", content=content, reasoning=reasoning), finish, usage))


_ids = iter(range(1, 1_000_000))


def tools(*calls: tuple[str, dict[str, Any] | str], content: str | None = None, usage: Usage | None = USAGE) -> Step:
    made = tuple(
        ToolCall(f"call_{next(_ids)}", name, args if isinstance(args, str) else json.dumps(args))
        for name, args in calls
    )
    return Step(ChatResponse(Message(role="assistant", content=content, tool_calls=made), "tool_calls", usage))


def fail(error: BaseException, *, after_chunks: int = 0, partial: str = "partial answer ") -> Step:
    return Step(ChatResponse(Message(role="assistant", content=partial)), error=error, after_chunks=after_chunks)


def hang() -> Step:
    return Step(hang=True)


@dataclass
class ScriptedProvider:
    steps: list[Step] = field(default_factory=list)
    model: str = "scripted-model"
    default: Step | None = None
    requests: list[ChatRequest] = field(default_factory=list)
    chat_requests: list[ChatRequest] = field(default_factory=list)
    closed_streams: int = 0
    closed: bool = False

    def script(self, *steps: Step) -> None:
        self.steps.extend(steps)

    def _next(self, request: ChatRequest) -> Step:
        validate_messages(request.messages)
        if self.steps:
            return self.steps.pop(0)
        if self.default is not None:
            return self.default
        raise AssertionError(f"script exhausted at request {len(self.requests)}")

    async def chat(self, request: ChatRequest) -> ChatResponse:
        self.chat_requests.append(request)
        step = self._next(request)
        if step.hang:
            await asyncio.Event().wait()
        if step.error is not None:
            raise step.error
        assert step.response is not None
        return step.response

    def stream(self, request: ChatRequest) -> AsyncGenerator[StreamEvent, None]:
        self.requests.append(request)
        return self._stream(self._next(request), request)

    async def _stream(self, step: Step, request: ChatRequest) -> AsyncGenerator[StreamEvent, None]:
        try:
            for notice in step.retries:
                if request.on_retry is not None:
                    request.on_retry(notice)
            if step.hang:
                yield TextDelta("thinking about it")
                await asyncio.Event().wait()
            assert step.response is not None
            message = step.response.message
            if message.reasoning:
                yield ReasoningDelta(message.reasoning)
            pieces = _pieces(message.content or "")
            for i, piece in enumerate(pieces):
                if step.error is not None and i >= step.after_chunks:
                    break
                yield TextDelta(piece)
            if step.error is not None:
                raise step.error
            yield StreamEnd(step.response)
        finally:
            self.closed_streams += 1

    async def aclose(self) -> None:
        self.closed = True


def _pieces(text: str, size: int = 5) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]
