"""The ``router`` fixture: respx-scripted provider tests, run over both transports.

``httpx``: the provider sends through an ``httpx.Client`` that respx intercepts. ``socket``:
the same script answered on the wire by a loopback ``RespxBridge``, the provider sending over
minicode's own client (``provider/socket_transport.py``) — the behaviour must be the same.
``router_httpx``: tests that script httpx's own exceptions (their types are what they check).
"""

from __future__ import annotations

from typing import Iterator

import pytest
import respx

from .bridge import RespxBridge
from .helpers import Transports


@pytest.fixture(params=["httpx", "socket"])
def router(request: pytest.FixtureRequest) -> Iterator[respx.MockRouter]:
    with respx.mock(assert_all_called=False) as r:
        if request.param == "httpx":
            yield r
            return
        bridge = RespxBridge()
        Transports.socket = bridge.transport
        try:
            yield r
        finally:
            Transports.socket = None
            bridge.close()


@pytest.fixture
def router_httpx() -> Iterator[respx.MockRouter]:
    with respx.mock(assert_all_called=False) as r:
        yield r
