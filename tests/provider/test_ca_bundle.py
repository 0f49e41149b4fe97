"""The CA bundle the provider trusts: httpx2's rule on the given environment, checked before any
request (a variable naming nothing readable is a configuration error, never a retried
connection failure), and a real handshake verifies against exactly that bundle."""

from __future__ import annotations

import os
import socket
import ssl
import threading
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import httpx2
import pytest

from minicode.config import ModelConfig
from minicode.errors import APIError, ConfigError
from minicode.provider import ca_bundle
from minicode.provider.factory import check_model, create_provider
from minicode.provider.openai import OpenAIProvider

from .helpers import REQUEST, chunk, read_http_request, sse

TLS = Path(__file__).resolve().parents[1] / "support" / "tls"


def test_the_file_wins_over_the_directory_and_the_systems_store_is_the_default(
        monkeypatch: pytest.MonkeyPatch) -> None:
    by_file = ca_bundle.context({"SSL_CERT_FILE": str(TLS / "ca.pem"), "SSL_CERT_DIR": "/nonexistent"})
    assert by_file.cert_store_stats()["x509_ca"] == 1  # only the file, as httpx2 does
    # the given environment decides, never the process's (httpx2 reads SSL_CERT_FILE itself)
    monkeypatch.setenv("SSL_CERT_FILE", str(TLS / "ca.pem"))
    default = ca_bundle.context({})
    system = httpx2.create_ssl_context(trust_env=False)  # the store the MCP client trusts without SSL_CERT_*
    assert default.cert_store_stats() == system.cert_store_stats() != by_file.cert_store_stats()
    assert default.verify_mode == ssl.CERT_REQUIRED and default.check_hostname


@pytest.mark.parametrize(("variable", "make", "said"), [
    ("SSL_CERT_FILE", lambda tmp: tmp / "missing.pem", "which does not exist"),
    ("SSL_CERT_FILE", lambda tmp: tmp, "which is not a file (SSL_CERT_DIR is for a directory)"),
    ("SSL_CERT_DIR", lambda tmp: tmp / "missing", "which does not exist"),
    ("SSL_CERT_DIR", lambda tmp: TLS / "ca.pem", "which is not a directory (SSL_CERT_FILE is for a file)"),
])
def test_a_variable_naming_nothing_usable_is_a_config_error(tmp_path: Path, variable: str, make: object,
                                                            said: str) -> None:
    path = make(tmp_path)  # type: ignore[operator]
    with pytest.raises(ConfigError) as info:
        ca_bundle.check({variable: str(path)})
    assert str(info.value).startswith(f"{variable} is set to {path}, {said}")
    assert "unset it" in str(info.value)


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads any file")
def test_an_unreadable_bundle_is_a_config_error(tmp_path: Path) -> None:
    bundle = tmp_path / "ca.pem"
    bundle.write_bytes((TLS / "ca.pem").read_bytes())
    bundle.chmod(0)
    with pytest.raises(ConfigError, match="a file minicode may not read"):
        ca_bundle.check({"SSL_CERT_FILE": str(bundle)})


def test_a_file_without_certificates_is_a_config_error_when_the_client_is_made(tmp_path: Path) -> None:
    bundle = tmp_path / "ca.pem"
    bundle.write_text("not a certificate\n")
    ca_bundle.check({"SSL_CERT_FILE": str(bundle)})  # readable: the cheap check passes
    with pytest.raises(ConfigError, match="which holds no CA certificate minicode can load"):
        create_provider(ModelConfig("https://api.example.com/v1", "m", "k"), env={"SSL_CERT_FILE": str(bundle)})


def test_the_check_runs_before_any_provider_is_built(tmp_path: Path) -> None:
    model = ModelConfig("https://api.example.com/v1", "m", "k")
    check_model(model, {"SSL_CERT_FILE": str(TLS / "ca.pem")})
    with pytest.raises(ConfigError, match="SSL_CERT_FILE"):
        check_model(model, {"SSL_CERT_FILE": str(tmp_path / "missing.pem")})
    with pytest.raises(ConfigError, match="SSL_CERT_FILE"):
        create_provider(model, env={"SSL_CERT_FILE": str(tmp_path / "missing.pem")})


@contextmanager
def tls_answering() -> Iterator[str]:
    """An HTTPS SSE server on 127.0.0.1 with the test CA's certificate (its base URL)."""
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
    try:
        yield f"https://127.0.0.1:{listener.getsockname()[1]}/v1"
    finally:
        listener.close()


@pytest.fixture
def tls_server() -> Iterator[str]:
    with tls_answering() as base_url:
        yield base_url


async def _answer(base_url: str, env: dict[str, str]) -> str:
    provider = OpenAIProvider(base_url=base_url, api_key="", model="m", max_retries=0, env=env)
    try:
        events = [e async for e in provider.stream(REQUEST)]
        return events[-1].response.message.content  # type: ignore[union-attr]
    finally:
        await provider.aclose()


async def test_https_verifies_against_the_bundle_from_the_environment(tls_server: str) -> None:
    assert await _answer(tls_server, {"SSL_CERT_FILE": str(TLS / "ca.pem")}) == "secure"


async def test_https_with_the_default_bundle_refuses_an_unknown_ca(tls_server: str) -> None:
    with pytest.raises(APIError, match="certificate of 127.0.0.1 is not trusted .* SSL_CERT_FILE") as info:
        await _answer(tls_server, {})
    assert info.value.lasting  # said at once, not retried


def test_an_http_endpoint_neither_checks_nor_loads_the_bundle(tmp_path: Path) -> None:
    """Nothing is verified on the way to an http:// server (redirects are not followed), so a
    stale SSL_CERT_FILE does not stop a local model, and no bundle is parsed at start."""
    env = {"SSL_CERT_FILE": str(tmp_path / "missing.pem")}
    model = ModelConfig("http://127.0.0.1:9/v1", "m", "")
    check_model(model, env)
    provider = create_provider(model, env=env)
    try:
        pool = provider._http.client._transport._pool  # type: ignore[attr-defined]
        assert pool._ssl_context.cert_store_stats()["x509_ca"] == 0  # trusts nothing: fails closed
        assert pool._ssl_context.verify_mode == ssl.CERT_REQUIRED
    finally:
        provider._http.close()  # type: ignore[attr-defined]
