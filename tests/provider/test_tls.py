"""The lazily loaded trust store: set up like httpx's default, loaded only for TLS, and a real
handshake verifies against exactly the bundle the environment names (fails closed otherwise)."""

from __future__ import annotations

import socket
import ssl
import threading
from pathlib import Path
from typing import Iterator

import certifi
import pytest

from minicode.errors import APIError
from minicode.provider.openai import OpenAIProvider
from minicode.provider.tls import LazyTrustContext

from .helpers import REQUEST, chunk, read_http_request, sse

TLS = Path(__file__).resolve().parents[1] / "support" / "tls"


def test_configured_like_httpx_default_but_nothing_loaded_yet() -> None:
    lazy = LazyTrustContext({})
    default = ssl.create_default_context(cafile=certifi.where())
    for name in ("protocol", "verify_mode", "check_hostname", "options", "verify_flags",
                 "minimum_version", "maximum_version"):
        assert getattr(lazy, name) == getattr(default, name), name
    assert lazy.cert_store_stats()["x509_ca"] == 0 and not lazy.loaded
    lazy.warm()
    assert lazy.cert_store_stats() == default.cert_store_stats() and lazy.loaded


def test_the_first_handshake_loads_the_bundle() -> None:
    lazy = LazyTrustContext({})
    a, b = socket.socketpair()
    with a, b:
        wrapped = lazy.wrap_socket(a, server_hostname="example.com", do_handshake_on_connect=False)
        wrapped.close()
    assert lazy.loaded and lazy.cert_store_stats()["x509_ca"] > 0


def test_the_environment_picks_the_bundle(tmp_path: Path) -> None:
    by_file = LazyTrustContext({"SSL_CERT_FILE": str(TLS / "ca.pem"), "SSL_CERT_DIR": "/nonexistent"})
    by_file.warm()
    assert by_file.cert_store_stats()["x509_ca"] == 1  # only the file, as httpx does
    broken = LazyTrustContext({"SSL_CERT_FILE": str(tmp_path / "missing.pem")})
    with pytest.raises(OSError):
        broken.warm()
    broken.warm_in_background()  # the failure is kept for the handshake, not raised in a thread


@pytest.fixture
def tls_server() -> Iterator[str]:
    """A one-shot HTTPS SSE server on 127.0.0.1 with the test CA's certificate."""
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(TLS / "server.pem", TLS / "server.key")
    listener = socket.create_server(("127.0.0.1", 0))
    body = sse(chunk({"content": "secure"}), chunk({}, finish="stop"))
    answer = (b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n"
              b"Content-Length: %d\r\n\r\n" % len(body) + body)

    def serve() -> None:
        while True:
            try:
                raw, _ = listener.accept()
            except OSError:
                return
            try:
                with context.wrap_socket(raw, server_side=True) as conn:
                    if read_http_request(conn):
                        conn.sendall(answer)
            except (OSError, ssl.SSLError):  # a client that refused our certificate
                raw.close()

    threading.Thread(target=serve, daemon=True).start()
    yield f"https://127.0.0.1:{listener.getsockname()[1]}/v1"
    listener.close()


@pytest.fixture(params=["httpx", "socket"])
def env(request: pytest.FixtureRequest) -> dict[str, str] | None:
    """No environment (httpx), or an empty one: minicode's own client for a plain endpoint."""
    return None if request.param == "httpx" else {}


async def _answer(base_url: str, tls: LazyTrustContext, env: dict[str, str] | None = None) -> str:
    provider = OpenAIProvider(base_url=base_url, api_key="", model="m", tls=tls, max_retries=0, env=env)
    assert type(provider._transport).__name__ == ("HttpxTransport" if env is None else "SocketTransport")
    try:
        events = [e async for e in provider.stream(REQUEST)]
        return events[-1].response.message.content  # type: ignore[union-attr]
    finally:
        await provider.aclose()


async def test_https_verifies_against_the_bundle_from_the_environment(tls_server: str, env: dict | None) -> None:
    assert await _answer(tls_server, LazyTrustContext({"SSL_CERT_FILE": str(TLS / "ca.pem")}), env) == "secure"


async def test_https_with_the_default_bundle_refuses_an_unknown_ca(tls_server: str, env: dict | None) -> None:
    with pytest.raises(APIError, match="certificate of 127.0.0.1 is not trusted .* SSL_CERT_FILE"):
        await _answer(tls_server, LazyTrustContext({}), env)


async def test_plain_http_never_loads_the_bundle(env: dict | None) -> None:
    from tests.support.fake_openai import FakeOpenAI, Reply

    with FakeOpenAI() as server:
        server.script(Reply.text("plain"))
        tls = LazyTrustContext({})
        assert await _answer(server.base_url, tls, env) == "plain"
        assert not tls.loaded


def test_the_factory_makes_the_bundle_lazy_only_when_given_the_environment() -> None:
    from minicode.config import ModelConfig
    from minicode.provider.factory import create_provider

    lazy = create_provider(ModelConfig("http://127.0.0.1:9/v1", "m", ""), env={"MINICODE_HTTP": "httpx"})
    eager = create_provider(ModelConfig("http://127.0.0.1:9/v1", "m", ""))
    pools = [p._transport.client._transport._pool for p in (lazy, eager)]  # type: ignore[attr-defined]
    assert isinstance(pools[0]._ssl_context, LazyTrustContext)
    assert not isinstance(pools[1]._ssl_context, LazyTrustContext)
    own = create_provider(ModelConfig("https://127.0.0.1:9/v1", "m", ""), env={})  # minicode's own client
    assert isinstance(own._transport._tls, LazyTrustContext)  # type: ignore[attr-defined]


def test_an_https_endpoint_starts_loading_at_once_in_the_background() -> None:
    import time

    tls = LazyTrustContext({})
    provider = OpenAIProvider(base_url="https://api.example.com/v1", api_key="", model="m", tls=tls)
    deadline = time.monotonic() + 30
    while not tls.loaded and time.monotonic() < deadline:  # a condition, not a duration
        time.sleep(0.01)
    assert tls.loaded
    provider._transport.close()
