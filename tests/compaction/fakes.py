"""A scripted Provider for compaction tests: no network, every request recorded."""

from __future__ import annotations

import asyncio
import inspect
import re
from typing import Any, AsyncGenerator, Callable, Sequence, Union

from minicode.provider.types import ChatRequest, ChatResponse, Message, StreamEnd, StreamEvent, Usage

Step = Union[ChatResponse, BaseException, Callable[[ChatRequest], Any]]


def reply(text: str | None, *, finish: str | None = "stop", usage: Usage | None = None) -> ChatResponse:
    return ChatResponse(Message(role="assistant", content=text), finish, usage)


class ScriptedProvider:
    """Implements ``provider.base.Provider``; each call consumes the next scripted step.

    A step is a ChatResponse (returned), an exception (raised) or a callable receiving the
    request (its result — awaited if it is awaitable — returned). Running out of steps
    fails the test loudly.
    """

    def __init__(self, steps: Sequence[Step] = (), *, model: str = "fake-model") -> None:
        self.model = model
        self.steps = list(steps)
        self.requests: list[ChatRequest] = []
        self.closed = False

    async def chat(self, request: ChatRequest) -> ChatResponse:
        self.requests.append(request)
        await asyncio.sleep(0)  # a real await point, so cancellation can land here
        if not self.steps:
            raise AssertionError(f"unexpected request #{len(self.requests)}")
        step = self.steps.pop(0)
        if isinstance(step, BaseException):
            raise step
        if isinstance(step, ChatResponse):
            return step
        result = step(request)
        if inspect.isawaitable(result):
            result = await result
        assert isinstance(result, ChatResponse)
        return result

    async def stream(self, request: ChatRequest) -> AsyncGenerator[StreamEvent, None]:
        yield StreamEnd(await self.chat(request))

    async def aclose(self) -> None:
        self.closed = True

    def prompt(self, n: int) -> str:
        """The user prompt text of request ``n``."""
        return self.requests[n].messages[-1].content or ""


_CONSTRAINT = re.compile(r"CONSTRAINT: [^\n<]*")


def echo_summariser(request: ChatRequest) -> ChatResponse:
    """A fake summariser that keeps every ``CONSTRAINT: ...`` line it sees, once.

    It reads the whole prompt, so constraints from the existing summary survive too —
    like a good model following the update prompt.
    """
    seen: list[str] = []
    for found in _CONSTRAINT.findall(request.messages[-1].content or ""):
        if found not in seen:
            seen.append(found)
    body = "\n".join(["## Goal", "keep going", "## Constraints and preferences", *seen])
    return reply(body, usage=Usage(100, 20, 120))
