"""Sessions over a scripted provider for the session tests (undo, rewind, model switching)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, AsyncIterator, Awaitable, Callable

import pytest

from minicode.session.session import Session
from tests.agent.conftest import SECRET, make_config
from tests.agent.scripted import ScriptedProvider


@pytest.fixture
def provider() -> ScriptedProvider:
    return ScriptedProvider()


@pytest.fixture
async def open_session(workspace: Path, provider: ScriptedProvider) -> AsyncIterator[Callable[..., Awaitable[Session]]]:
    opened: list[Session] = []

    async def _open(**kw: Any) -> Session:
        kw.setdefault("config", make_config())
        if "make_provider" not in kw:
            kw.setdefault("provider", provider)
        env = kw.pop("env", {"PATH": "/usr/bin:/bin", "TEST_KEY": SECRET, "HOME": str(workspace)})
        session = await Session.open(workspace=workspace, env=env, **kw)
        opened.append(session)
        return session

    yield _open
    for s in opened:
        s._store.close()
