"""The context window in effect (agent/window.py) and how a session gets it: the config, the
server's answer remembered in the wire-profile cache, or asked when the first compaction
decision needs it; the output limit sent follows it."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from pathlib import Path

import pytest

from minicode.agent.approval import AutoApprover
from minicode.agent.events import Notice
from minicode.agent.window import ContextWindow
from minicode.config import DEFAULT_CONTEXT_WINDOW
from minicode.provider.wire import WireProfileCache, default_cache_path, host_key
from tests.agent.conftest import Events, make_config
from tests.agent.scripted import text
from tests.support.fake_openai import FakeOpenAI


def _unset(base_url: str = "http://127.0.0.1:9/v1"):
    config = make_config()
    return replace(config, model=replace(config.model, context_window=None, base_url=base_url))


def _remember(home: Path, base_url: str, tokens: int | None, source: str) -> None:
    WireProfileCache(default_cache_path(home)).put_window(host_key(base_url), "scripted-model", tokens, source)


# --- ContextWindow -----------------------------------------------------------------------------


async def test_settle_applies_the_answer_once():
    asked = []

    async def ask():
        asked.append(1)
        return 32768, "llama.cpp /props"

    window = ContextWindow(DEFAULT_CONTEXT_WINDOW, "default (unknown)", ask)
    assert window.pending
    await window.settle()
    await window.settle()
    assert (window.tokens, window.source, window.pending, asked) == (32768, "llama.cpp /props", False, [1])


@pytest.mark.parametrize("answer", [None, RuntimeError("a bug in the asker")])
async def test_no_answer_or_a_failing_asker_keeps_the_default(answer):
    async def ask():
        if isinstance(answer, BaseException):
            raise answer
        return answer

    window = ContextWindow(DEFAULT_CONTEXT_WINDOW, "default (unknown)", ask)
    await window.settle()
    assert (window.tokens, window.source, window.pending) == (DEFAULT_CONTEXT_WINDOW, "default (unknown)", False)


async def test_a_background_question_applies_when_it_comes_and_survives_a_cancelled_waiter():
    gate = asyncio.Event()

    async def ask():
        await gate.wait()
        return 8192, "ollama num_ctx"

    window = ContextWindow(DEFAULT_CONTEXT_WINDOW, "default (unknown)", ask)
    told = []
    window.start(lambda: told.append(window.source))
    waiter = asyncio.create_task(window.settle())
    await asyncio.sleep(0)
    waiter.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiter
    gate.set()
    for _ in range(5):
        await asyncio.sleep(0)
    assert (window.tokens, window.source, told) == (8192, "ollama num_ctx", ["ollama num_ctx"])


async def test_close_stops_a_question_still_out():
    async def ask():
        await asyncio.Event().wait()
        return 1, "never"

    window = ContextWindow(DEFAULT_CONTEXT_WINDOW, "default (unknown)", ask)
    window.start()
    window.close()
    await asyncio.sleep(0)
    assert window.tokens == DEFAULT_CONTEXT_WINDOW


# --- a session ---------------------------------------------------------------------------------


async def test_the_configured_window_wins_and_asks_nothing(open_session, provider):
    session = await open_session()
    assert session.context_source == "config" and not session._context.window.pending


async def test_a_remembered_window_is_used_with_its_source_and_the_output_limit_fits(
    open_session, provider, workspace
):
    _remember(workspace, "http://127.0.0.1:9/v1", 4096, "llama.cpp /props")
    provider.script(text("ok"))
    session = await open_session(config=_unset())
    assert session.context_source == "llama.cpp /props" and session.context_usage()[1] == 4096
    await session.turn("x", approver=AutoApprover(), emit=Events().append)
    assert provider.requests[0].max_tokens == 1024  # a quarter of a small window, not 8192


async def test_a_remembered_not_reported_is_the_default_without_asking(open_session, workspace):
    _remember(workspace, "http://127.0.0.1:9/v1", None, "default (unknown)")
    session = await open_session(config=_unset())
    assert session.context_source == "default (unknown)" and not session._context.window.pending
    assert session.context_usage()[1] == DEFAULT_CONTEXT_WINDOW


async def test_a_small_request_does_not_wait_for_the_server(open_session, provider, workspace):
    with FakeOpenAI() as server:
        server.routes["/props"] = {"default_generation_settings": {"n_ctx": 32768}}
        provider.script(text("ok"))
        session = await open_session(config=_unset(server.base_url))
        await session.turn("short task", approver=AutoApprover(), emit=Events().append)
        assert server.asked == [] and session._context.window.pending
        assert provider.requests[0].max_tokens == 8192


async def test_a_large_request_asks_the_server_first_and_remembers(open_session, provider, workspace):
    with FakeOpenAI() as server:
        server.routes["/props"] = {"default_generation_settings": {"n_ctx": 32768}}
        provider.script(text("ok"))
        session = await open_session(config=_unset(server.base_url))
        events = Events()
        await session.turn("word " * 20_000, approver=AutoApprover(), emit=events.append)
        assert {r.path for r in server.asked} == {"/props", "/api/show", "/api/v0/models"}
        assert [n.text for n in events.of(Notice)] == ["context window: 32,768 tokens (llama.cpp /props)"]
        assert session.context_source == "llama.cpp /props" and session.context_usage()[1] == 32768
        cached = WireProfileCache(default_cache_path(workspace)).get_window(host_key(server.base_url), "scripted-model")
        assert cached == (32768, "llama.cpp /props", "")


async def test_a_server_that_says_nothing_leaves_the_default(open_session, provider, workspace):
    with FakeOpenAI() as server:  # every question answered 404
        provider.script(text("ok"))
        session = await open_session(config=_unset(server.base_url))
        events = Events()
        await session.turn("word " * 20_000, approver=AutoApprover(), emit=events.append)
        assert events.of(Notice) == []  # nothing learned: nothing to say
        assert session.context_source == "default (unknown)" and session.context_usage()[1] == DEFAULT_CONTEXT_WINDOW
        assert not session._context.window.pending


async def test_the_full_screen_asks_at_once(open_session, workspace):
    with FakeOpenAI() as server:
        server.routes["/props"] = {"default_generation_settings": {"n_ctx": 16384}}
        session = await open_session(config=_unset(server.base_url))
        session.learn_context_window()
        await session._context.window.settle()
        assert session.context_source == "llama.cpp /props" and session.context_usage()[1] == 16384
