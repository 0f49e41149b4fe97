"""The ``router`` fixture: respx-scripted provider tests (respx answers in place of httpx's
transport, so the provider's httpx client, its headers and its reader thread are the real ones)."""

from __future__ import annotations

from typing import Iterator

import pytest
import respx


@pytest.fixture
def router() -> Iterator[respx.MockRouter]:
    with respx.mock(assert_all_called=False) as r:
        yield r
