"""A model that makes native tool calls sees no difference: the requests minicode sends are
the same bytes with text-call recovery as without it (the real adapter, the scripted server)."""

from __future__ import annotations

import json
import re

import pytest

from minicode.agent import loop
from minicode.agent.approval import AutoApprover
from minicode.config import ModelConfig
from minicode.provider.factory import create_provider
from tests.agent.conftest import SECRET, make_config
from tests.support.fake_openai import FakeOpenAI, Reply

# A final answer that quotes a call of a declared tool in an explanation: the hook reads it
# (it has no native call and holds braces) and must leave it as it is.
EXPLAINED = 'The read tool is called like this, for example:\n```json\n{"name": "read", "arguments": {"path": "a.txt"}}\n```'


def _script(server: FakeOpenAI) -> None:
    server.script(Reply.tools(("ls", {}), ("read", {"path": "a.txt"})), Reply.text(EXPLAINED), Reply.text("{}"))


async def _bodies(open_session, workspace, server: FakeOpenAI) -> list[bytes]:
    model = ModelConfig(base_url=server.base_url, name="fake-model", api_key=SECRET, api_key_env="TEST_KEY")
    provider = create_provider(model, env={"TEST_KEY": SECRET})
    try:
        session = await open_session(provider=provider, config=make_config())
        await session.turn("what is in a.txt?", approver=AutoApprover(), emit=lambda event: None)
        await session.turn("and as JSON?", approver=AutoApprover(), emit=lambda event: None)
    finally:
        await provider.aclose()
    return [r.raw for r in server.requests]


def _numbered(bodies: list[bytes]) -> list[bytes]:
    """The bodies with the fake server's call ids (a counter shared by every test) numbered
    from 1 in order of appearance: everything else stays byte for byte."""
    seen: dict[bytes, bytes] = {}
    return [re.sub(rb"call_\d+", lambda m: seen.setdefault(m.group(), b"id%d" % (len(seen) + 1)), body)
            for body in bodies]


async def test_native_requests_are_the_same_bytes_with_and_without_recovery(open_session, workspace, monkeypatch):
    (workspace / "a.txt").write_text("alpha\n")
    with FakeOpenAI() as server:
        _script(server)
        recovering = await _bodies(open_session, workspace, server)
    with FakeOpenAI() as server, pytest.MonkeyPatch.context() as patch:
        patch.setattr(loop, "_calls_in_text", lambda message, specs, index, **_: message)  # recovery off
        _script(server)
        plain = await _bodies(open_session, workspace, server)
    assert len(recovering) == 3 and _numbered(recovering) == _numbered(plain)
    last = json.loads(recovering[-1])
    assert last["messages"][-2] == {"role": "assistant", "content": EXPLAINED}  # kept as text
    assert all(b"from_text" not in body and b"text_call" not in body for body in recovering)

