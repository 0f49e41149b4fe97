"""The doctor's two model requests, measured: a tiny streamed answer and a streamed tool call.

Both go through the real provider (its SSE decoding, chunk accumulator, server quirks, wire
profile and its learning), so what works here works in a task. Each returns what was seen —
time to first token, pieces, ``[DONE]`` (a stream without it raises), usage, the assembled
tool call — or raises ``APIError``/``ProtocolError``/``TimeoutError`` for the caller to judge.
"""

from __future__ import annotations

import asyncio
import time
from contextlib import aclosing
from dataclasses import dataclass, field
from typing import Callable

from minicode import jsonsafe
from minicode.errors import ProtocolError
from minicode.provider.base import Provider
from minicode.provider.types import (
    ChatRequest,
    ChatResponse,
    Message,
    ReasoningDelta,
    RetryNotice,
    StreamEnd,
    TextDelta,
    ToolCallDelta,
    ToolSpec,
    UsageUpdate,
)

__all__ = ["ANSWER_PROMPT", "PROBE_TOOL", "Streamed", "probe_answer", "probe_tool_call"]

ANSWER_PROMPT = "Count from one to ten in words, separated by spaces. Reply with nothing else."
TOOL_PROMPT = "What is the weather in Paris right now? Call the get_weather tool (unit: celsius) to find out."
SYSTEM = "You are answering an automated connectivity check. Do exactly what the user asks."
PROBE_MAX_TOKENS = 1024
"""Room for the answer and for a thinking model's reasoning before it; a few hundred are used."""
PROBE_TOOL = ToolSpec(
    name="get_weather",
    description="Get the current weather for a city.",
    parameters={
        "type": "object",
        "properties": {
            "city": {"type": "string", "description": "The city name"},
            "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
        },
        "required": ["city"],
        "additionalProperties": False,
    },
)


@dataclass(slots=True)
class Streamed:
    """What one streamed request showed. Times are seconds from sending the request."""

    response: ChatResponse
    streamed: bool
    """False: the server answered ``stream: true`` with one JSON body."""
    first_token: float | None
    """When the first text or reasoning arrived (None: none did)."""
    finished: float
    text_pieces: int = 0
    reasoning_pieces: int = 0
    call_pieces: dict[int, int] = field(default_factory=dict)
    """Per tool-call index: how many deltas carried it (1 = the whole call in one chunk)."""
    retries: list[str] = field(default_factory=list)
    """Why the provider retried, if it did ("HTTP 503 service unavailable")."""

    def tokens_per_second(self) -> tuple[float, bool] | None:
        """(rate, estimated): output tokens per second after the first token; estimated from
        the text length (4 characters a token) when the server reported no usage."""
        if self.first_token is None or self.finished <= self.first_token:
            return None
        usage = self.response.usage
        tokens: float | None = usage.completion_tokens if usage is not None else None
        estimated = tokens is None
        if tokens is None:
            message = self.response.message
            tokens = (len(message.content or "") + len(message.reasoning or "")) / 4
        # The first token's own time is in first_token: count the tokens after it.
        return max(tokens - 1, 0) / (self.finished - self.first_token), estimated


async def probe_answer(provider: Provider, *, timeout: float, clock: Callable[[], float] = time.perf_counter) -> Streamed:
    """A tiny streamed answer (no tools)."""
    messages = (Message.system(SYSTEM), Message.user(ANSWER_PROMPT))
    return await _stream(provider, messages, (), timeout, clock)


async def probe_tool_call(
    provider: Provider, *, timeout: float, clock: Callable[[], float] = time.perf_counter
) -> Streamed:
    """A request the model should answer by calling ``PROBE_TOOL``."""
    messages = (Message.system(SYSTEM), Message.user(TOOL_PROMPT))
    return await _stream(provider, messages, (PROBE_TOOL,), timeout, clock)


async def _stream(
    provider: Provider,
    messages: tuple[Message, ...],
    tools: tuple[ToolSpec, ...],
    timeout: float,
    clock: Callable[[], float],
) -> Streamed:
    retries: list[str] = []

    def on_retry(notice: RetryNotice) -> None:
        retries.append(notice.reason)

    request = ChatRequest(messages, tools, max_tokens=PROBE_MAX_TOKENS, on_retry=on_retry)
    try:
        async with asyncio.timeout(timeout):
            return await _read(provider, request, retries, clock)
    except TimeoutError:
        raise TimeoutError(f"no complete answer within {timeout:g} s") from None


async def _read(provider: Provider, request: ChatRequest, retries: list[str], clock: Callable[[], float]) -> Streamed:
    started = clock()
    first: float | None = None
    text = reasoning = 0
    calls: dict[int, int] = {}
    async with aclosing(provider.stream(request)) as events:
        async for event in events:
            match event:
                case TextDelta() | ReasoningDelta():
                    first = clock() - started if first is None else first
                    if isinstance(event, TextDelta):
                        text += 1
                    else:
                        reasoning += 1
                case ToolCallDelta(index=index):
                    first = clock() - started if first is None else first
                    calls[index] = calls.get(index, 0) + 1
                case UsageUpdate():
                    pass
                case StreamEnd(response=response, streamed=streamed):
                    return Streamed(response, streamed, first, clock() - started, text, reasoning, calls, retries)
    raise ProtocolError("the stream ended without a complete response")


def call_problem(response: ChatResponse) -> str | None:
    """Why the tool-call answer is not a usable call of ``PROBE_TOOL``, or None when it is."""
    calls = response.message.tool_calls
    if not calls:
        said = " ".join((response.message.content or "").split())[:80]
        return "the model answered in text instead of calling the tool" + (f" ({said!r})" if said else "")
    call = calls[0]
    if call.name != PROBE_TOOL.name:
        return f"the model called {call.name!r}, a tool it was not offered"
    try:
        arguments = jsonsafe.loads(call.arguments)
    except ValueError:
        return f"the assembled arguments are not valid JSON: {call.arguments[:80]!r}"
    if not isinstance(arguments, dict) or not isinstance(arguments.get("city"), str):
        return f"the arguments lack the required string 'city': {call.arguments[:80]}"
    return None
