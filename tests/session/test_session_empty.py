"""A new session that got no message leaves no file behind (nothing to resume); others stay."""

from __future__ import annotations

from pathlib import Path

from minicode.session.session import Session
from minicode.session.store import session_path
from tests.agent.conftest import SECRET, ScriptedApprover, make_config
from tests.agent.scripted import ScriptedProvider, text

ENV = {"PATH": "/usr/bin:/bin", "TEST_KEY": SECRET}


async def _open(workspace: Path, provider: ScriptedProvider, **kw: object) -> Session:
    return await Session.open(config=make_config(), workspace=workspace, env={**ENV, "HOME": str(workspace)},
                              provider=provider, **kw)  # type: ignore[arg-type]


async def test_new_empty_session_is_removed_on_close(tmp_path: Path) -> None:
    session = await _open(tmp_path, ScriptedProvider())
    path = session_path(tmp_path.resolve(), session.id)
    assert path.exists() and session.is_new and session.is_empty
    assert await session.aclose() is False
    assert not path.exists()


async def test_session_with_a_message_is_kept_and_resumed_one_too(tmp_path: Path) -> None:
    provider = ScriptedProvider()
    provider.script(text("hello"))
    session = await _open(tmp_path, provider)
    await session.turn("hi", approver=ScriptedApprover(), emit=lambda e: None)
    assert not session.is_empty
    assert await session.aclose() is True
    path = session_path(tmp_path.resolve(), session.id)
    assert path.exists()
    resumed = await _open(tmp_path, ScriptedProvider(), resume=session.id)
    assert not resumed.is_new and len(resumed.messages) == 2
    assert await resumed.aclose() is True
    assert path.exists()
