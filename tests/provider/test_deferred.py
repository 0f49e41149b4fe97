"""``DeferredProvider``: built once, on first use or by ``warm`` (a thread), never after close;
and ``session.opening.deferred_provider`` refuses at once what the factory would refuse."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import threading
from typing import AsyncGenerator

import pytest

from minicode.config import ModelConfig
from minicode.errors import APIError, ConfigError
from minicode.provider.deferred import DeferredProvider
from minicode.provider.types import ChatRequest, ChatResponse, Message, StreamEnd, StreamEvent, TextDelta
from minicode.session.opening import deferred_provider


class Real:
    """A provider that counts what was asked of it."""

    def __init__(self) -> None:
        self.model = "m"
        self.closed = 0
        self.calls: list[str] = []

    async def chat(self, request: ChatRequest) -> ChatResponse:
        self.calls.append("chat")
        return ChatResponse(Message(role="assistant", content="hi"), "stop", None)

    async def stream(self, request: ChatRequest) -> AsyncGenerator[StreamEvent, None]:
        self.calls.append("stream")
        yield TextDelta("hi")
        yield StreamEnd(ChatResponse(Message(role="assistant", content="hi"), "stop", None))

    async def aclose(self) -> None:
        self.closed += 1


class Builds:
    def __init__(self, fail: Exception | None = None, gate: threading.Event | None = None) -> None:
        self.count = 0
        self.made: list[Real] = []
        self.fail = fail
        self.gate = gate

    def __call__(self) -> Real:
        self.count += 1
        if self.gate is not None:
            self.gate.wait(5)
        if self.fail is not None:
            raise self.fail
        self.made.append(Real())
        return self.made[-1]


def request() -> ChatRequest:
    return ChatRequest(messages=(Message.user("hello"),))


async def test_nothing_is_built_until_the_first_request_then_once() -> None:
    builds = Builds()
    provider = DeferredProvider("m", builds)
    assert provider.model == "m" and not provider.built and builds.count == 0
    assert (await provider.chat(request())).message.content == "hi"
    events = [e async for e in provider.stream(request())]
    assert isinstance(events[-1], StreamEnd)
    assert builds.count == 1 and builds.made[0].calls == ["chat", "stream"]
    await provider.aclose()
    assert builds.made[0].closed == 1


async def test_warm_builds_on_a_thread_and_a_request_meanwhile_waits_for_that_build() -> None:
    gate = threading.Event()
    builds = Builds(gate=gate)
    provider = DeferredProvider("m", builds)
    thread = threading.Thread(target=provider.warm)
    thread.start()
    while builds.count == 0:  # the thread is inside the build now
        await asyncio.sleep(0.001)
    gate.set()
    assert (await provider.chat(request())).message.content == "hi"
    thread.join(5)
    assert builds.count == 1 and provider.built


async def test_a_failed_build_is_not_remembered_and_raises_at_the_request() -> None:
    builds = Builds(fail=ConfigError("model.provider: broken"))
    provider = DeferredProvider("m", builds)
    provider.warm()  # quiet
    assert not provider.built
    with pytest.raises(ConfigError, match="broken"):
        await provider.chat(request())
    assert builds.count == 2
    builds.fail = None
    assert (await provider.chat(request())).message.content == "hi"


async def test_closing_an_unbuilt_provider_builds_nothing_and_later_use_is_refused() -> None:
    builds = Builds()
    provider = DeferredProvider("m", builds)
    await provider.aclose()
    provider.warm()
    assert builds.count == 0
    with pytest.raises(Exception, match="closed"):
        await provider.chat(request())


async def test_an_api_error_of_the_real_provider_passes_through() -> None:
    class Failing(Real):
        async def chat(self, request: ChatRequest) -> ChatResponse:
            raise APIError("401 unauthorized")

    provider = DeferredProvider("m", Failing)
    with pytest.raises(APIError, match="401"):
        await provider.chat(request())


def model(provider: str = "openai") -> ModelConfig:
    return ModelConfig(base_url="http://127.0.0.1:1/v1", name="m", api_key="k", provider=provider)


def test_deferred_provider_refuses_an_unknown_provider_at_once() -> None:
    with pytest.raises(ConfigError, match="model.provider"):
        deferred_provider(model("anthropic"), {})


async def test_deferred_provider_builds_the_configured_adapter_when_first_used() -> None:
    from minicode.provider.openai import OpenAIProvider

    provider = deferred_provider(model(), {"HOME": "/nonexistent"})
    assert provider.model == "m" and not provider.built
    assert isinstance(provider.provider(), OpenAIProvider)
    await provider.aclose()


def test_making_a_deferred_provider_imports_no_httpx2() -> None:
    code = ("import sys; from minicode.config import ModelConfig; from minicode.session.opening import deferred_provider;"
            "deferred_provider(ModelConfig(base_url='http://127.0.0.1:1/v1', name='m', api_key=''), {});"
            "print('httpx2' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
