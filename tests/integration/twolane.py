"""A scripted provider for session-level compaction tests: main requests (streamed) and
summary requests (``chat``) come from two separate scripts."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

from minicode.provider.messages import validate_messages
from minicode.provider.types import ChatRequest, ChatResponse
from tests.agent.scripted import ScriptedProvider

HANG = "hang"


@dataclass
class TwoLaneProvider(ScriptedProvider):
    """Main requests come from ``steps`` (as in tests.agent.scripted); summary requests
    (non-streaming ``chat``) from ``summaries``: a ChatResponse, an exception to raise,
    ``HANG`` (wait until cancelled) or a callable of the request returning a ChatResponse."""

    summaries: list[Any] = field(default_factory=list)

    async def chat(self, request: ChatRequest) -> ChatResponse:
        self.chat_requests.append(request)
        validate_messages(request.messages)
        assert self.summaries, f"unexpected summary request #{len(self.chat_requests)}"
        step = self.summaries.pop(0)
        if step == HANG:
            await asyncio.Event().wait()
        if isinstance(step, BaseException):
            raise step
        if callable(step):
            step = step(request)
        assert isinstance(step, ChatResponse)
        return step
