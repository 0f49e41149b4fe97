"""The ``router`` fixture: provider tests scripted through ``mock_router`` (it answers in place of
httpx2's transports, so the provider's httpx2 client, its headers and its reader thread are the
real ones)."""

from __future__ import annotations

import pytest

from .mock_router import Router


@pytest.fixture
def router(monkeypatch: pytest.MonkeyPatch) -> Router:
    routes = Router()
    routes.install(monkeypatch)
    return routes
