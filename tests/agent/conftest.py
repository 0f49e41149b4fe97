"""Fixtures for loop tests: a temp workspace, a config, a session over a scripted provider."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Awaitable, Callable

import pytest

from minicode.agent.approval import Approval, ApprovalRequest, Decision
from minicode.agent.events import AgentEvent
from minicode.config import Config, ModelConfig
from minicode.session.session import Session
from tests.agent.scripted import ScriptedProvider

SECRET = "sk-test-secret-value-123"


def make_config(window: int = 256 * 1024) -> Config:
    model = ModelConfig(base_url="http://127.0.0.1:9/v1", name="scripted-model", api_key=SECRET,
                        api_key_env="TEST_KEY", context_window=window)
    return Config(model=model, path=Path("/nonexistent/config.toml"))


@dataclass
class ScriptedApprover:
    """Answers from a list; records the requests. An empty list hangs (a person who never answers)."""

    answers: list[Approval] = field(default_factory=list)
    requests: list[ApprovalRequest] = field(default_factory=list)

    async def approve(self, request: ApprovalRequest) -> Approval:
        self.requests.append(request)
        if not self.answers:
            await asyncio.Event().wait()
        return self.answers.pop(0)


def python_env(workspace: Path) -> dict[str, str]:
    """A tools' environment whose PATH starts with this interpreter's folder, so the ``python``
    the small-model assists name and run is one with pytest (the default PATH may have only
    ``python3``, or none)."""
    import os
    import sys

    return {"PATH": f"{os.path.dirname(sys.executable)}:/usr/bin:/bin", "TEST_KEY": SECRET, "HOME": str(workspace)}


def yes() -> Approval:
    return Approval(Decision.ALLOW_ONCE)


@pytest.fixture
def provider() -> ScriptedProvider:
    return ScriptedProvider()


@pytest.fixture
def open_session(workspace: Path, provider: ScriptedProvider) -> Callable[..., Awaitable[Session]]:
    opened: list[Session] = []

    async def _open(**kw: Any) -> Session:
        kw.setdefault("config", make_config())
        kw.setdefault("provider", provider)
        env = kw.pop("env", {"PATH": "/usr/bin:/bin", "TEST_KEY": SECRET, "HOME": str(workspace)})
        session = await Session.open(workspace=workspace, env=env, **kw)
        opened.append(session)
        return session

    yield _open
    for s in opened:
        s._store.close()


class Events(list[AgentEvent]):
    def of(self, kind: type) -> list[Any]:
        return [e for e in self if isinstance(e, kind)]
