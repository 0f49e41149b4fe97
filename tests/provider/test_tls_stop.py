"""A stop while TLS is being set up ends the connection at once: httpcore wraps (and detaches)
the socket it connected, so the exchange reaches the handshake through a copy of that socket
(finding B7 of round 5)."""

from __future__ import annotations

import asyncio
import socket
import threading

import pytest

from minicode.provider.openai import OpenAIProvider

from .test_exchange import consume, no_reader_threads_left


class _SilentTLSServer:
    """Accepts a connection, reads the TLS ClientHello and never answers it; notices when the
    client closes or shuts the connection down (``left``)."""

    def __init__(self) -> None:
        self.hello = threading.Event()
        self.left = threading.Event()
        self._listener = socket.create_server(("127.0.0.1", 0))
        threading.Thread(target=self._serve, daemon=True).start()

    @property
    def base_url(self) -> str:
        return f"https://127.0.0.1:{self._listener.getsockname()[1]}/v1"

    def _serve(self) -> None:
        conn, _ = self._listener.accept()
        with conn:
            conn.settimeout(30)
            if conn.recv(4096):
                self.hello.set()
            while conn.recv(4096):
                pass
            self.left.set()


async def test_a_stop_during_the_tls_handshake_ends_the_connection_at_once() -> None:
    """httpcore's TLS wraps (and detaches) the socket the exchange claimed at connect: the stop
    reaches the handshake through a copy of it, not after the connect timeout (15 s)."""
    server = _SilentTLSServer()
    provider = OpenAIProvider(base_url=server.base_url, api_key="", model="m", max_retries=0)
    task = asyncio.create_task(consume(provider))
    assert await asyncio.to_thread(server.hello.wait, 10)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert await asyncio.to_thread(server.left.wait, 10)
    assert await no_reader_threads_left()
    provider._http.close()
