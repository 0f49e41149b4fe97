"""Reaching an endpoint: DNS, TCP and TLS each diagnosed apart, with real local sockets."""

from __future__ import annotations

import asyncio
import socket
import ssl
import subprocess
from pathlib import Path
from typing import AsyncIterator, Awaitable, Callable

import pytest

from minicode.provider.reach import proxy_for, reach


@pytest.fixture
async def listening() -> AsyncIterator[int]:
    """A TCP server that answers any bytes like a plain HTTP server would."""

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.read(1024)
        writer.write(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    yield server.sockets[0].getsockname()[1]
    server.close()
    await server.wait_closed()


@pytest.fixture(scope="module")
def certificate(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A self-signed certificate for localhost (openssl, as any CI image has it)."""
    where = tmp_path_factory.mktemp("tls")
    cert, key = where / "cert.pem", where / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=localhost",
         "-addext", "subjectAltName=DNS:localhost", "-keyout", str(key), "-out", str(cert)],
        check=True, capture_output=True,
    )
    return cert, key


@pytest.fixture
async def tls_port(certificate: tuple[Path, Path]) -> AsyncIterator[int]:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(*map(str, certificate))

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.read(1)
        writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0, ssl=context)
    yield server.sockets[0].getsockname()[1]
    server.close()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def to_loopback(host: str, port: int) -> list[str]:
    return ["127.0.0.1"]


async def test_an_ip_address_needs_no_dns_and_http_no_tls(listening: int) -> None:
    result = await reach(f"http://127.0.0.1:{listening}/v1", env={}, tls_context=ssl.create_default_context)
    assert result.ok and result.addresses == ("127.0.0.1",)
    assert result.dns_ms is None and result.tcp_ms is not None and result.tls_ms is None


async def test_connection_refused_is_a_tcp_failure() -> None:
    port = free_port()
    result = await reach(f"http://127.0.0.1:{port}", env={}, tls_context=ssl.create_default_context)
    assert result.failed == "tcp" and "connection refused by 127.0.0.1" in (result.error or "")


@pytest.mark.parametrize(("errno", "said"), [
    (socket.EAI_NONAME, "no such host"),
    (socket.EAI_AGAIN, "temporary DNS failure"),
])
async def test_resolver_errors_are_dns_failures(errno: int, said: str) -> None:
    async def failing(host: str, port: int) -> list[str]:
        raise socket.gaierror(errno, "resolver says no")

    result = await reach("https://api.example.test/v1", env={}, tls_context=ssl.create_default_context,
                         resolve=failing)
    assert result.failed == "dns" and said in (result.error or "") and "api.example.test" in (result.error or "")
    assert result.tcp_ms is None


async def test_a_resolver_that_never_answers_times_out() -> None:
    async def silent(host: str, port: int) -> list[str]:
        await asyncio.Event().wait()
        return []

    result = await reach("https://a.test", env={}, tls_context=ssl.create_default_context, resolve=silent,
                         timeout=0.05)
    assert result.failed == "dns" and "took longer than" in (result.error or "")


async def test_no_addresses_is_a_dns_failure() -> None:
    async def empty(host: str, port: int) -> list[str]:
        return []

    result = await reach("https://a.test", env={}, tls_context=ssl.create_default_context, resolve=empty)
    assert result.failed == "dns" and "no address" in (result.error or "")


async def test_an_untrusted_certificate_is_a_tls_failure(tls_port: int) -> None:
    result = await reach(f"https://localhost:{tls_port}/v1", env={}, tls_context=ssl.create_default_context,
                         resolve=to_loopback)
    assert result.failed == "tls" and "certificate is not trusted" in (result.error or "")
    assert result.dns_ms is not None and result.tcp_ms is not None


async def test_a_trusted_certificate_reports_the_tls_version(tls_port: int, certificate: tuple[Path, Path]) -> None:
    def trusting() -> ssl.SSLContext:
        return ssl.create_default_context(cafile=str(certificate[0]))

    result = await reach(f"https://localhost:{tls_port}/v1", env={}, tls_context=trusting, resolve=to_loopback)
    assert result.ok, result.error
    assert result.tls_version is not None and result.tls_version.startswith("TLSv1")
    assert result.tls_ms is not None


async def test_https_to_a_plain_http_server_is_a_tls_failure(listening: int) -> None:
    result = await reach(f"https://127.0.0.1:{listening}", env={}, tls_context=ssl.create_default_context)
    assert result.failed == "tls"
    assert "plain http:// server" in (result.error or "") or "broke during the TLS handshake" in (result.error or "")


async def test_a_proxy_is_what_is_reached_and_tls_is_left_to_the_request(listening: int) -> None:
    env = {"HTTPS_PROXY": f"http://127.0.0.1:{listening}"}
    result = await reach("https://api.example.test/v1", env=env, tls_context=ssl.create_default_context)
    assert result.ok and result.proxy == f"http://127.0.0.1:{listening}"
    assert result.addresses == ("127.0.0.1",) and result.tls_ms is None


async def test_a_proxy_s_password_is_never_shown(listening: int) -> None:
    env = {"HTTPS_PROXY": f"http://me:hunter2@127.0.0.1:{listening}"}
    result = await reach("https://api.example.test/v1", env=env, tls_context=ssl.create_default_context)
    assert result.ok and result.proxy == f"http://127.0.0.1:{listening}"
    assert "hunter2" not in repr(result)


def test_proxy_for_follows_scheme_all_proxy_and_no_proxy() -> None:
    assert proxy_for("https://a.example/v1", {"https_proxy": "proxy:3128"}) == "http://proxy:3128"
    assert proxy_for("http://a.example/v1", {"https_proxy": "http://p:1"}) is None
    assert proxy_for("http://a.example/v1", {"ALL_PROXY": "socks5://p:1080"}) == "socks5://p:1080"
    assert proxy_for("https://a.example/v1", {"HTTPS_PROXY": "http://p:1", "NO_PROXY": ".example"}) is None
    assert proxy_for("https://x.a.example/v1", {"HTTPS_PROXY": "http://p:1", "no_proxy": "a.example:443"}) is None
    assert proxy_for("https://a.example/v1", {"HTTPS_PROXY": "http://p:1", "NO_PROXY": "*"}) is None
    assert proxy_for("https://b.example/v1", {"HTTPS_PROXY": "http://p:1", "NO_PROXY": "a.example"}) == "http://p:1"


async def test_the_adapters_trust_rule_is_what_judges_the_handshake(tls_port: int, certificate: tuple[Path, Path]) -> None:
    from minicode.provider.factory import tls_context

    trusted = await reach(f"https://localhost:{tls_port}/v1", env={},
                          tls_context=lambda: tls_context({"SSL_CERT_FILE": str(certificate[0])}), resolve=to_loopback)
    assert trusted.ok, trusted.error
    untrusted = await reach(f"https://localhost:{tls_port}/v1", env={}, tls_context=lambda: tls_context({}),
                            resolve=to_loopback)
    assert untrusted.failed == "tls" and "not trusted" in (untrusted.error or "")


class _Writer:
    """A connection whose TLS handshake finishes when the test says so."""

    def __init__(self, handshake: Callable[[], Awaitable[object]]) -> None:
        self.handshake = handshake

    async def start_tls(self, context: ssl.SSLContext, server_hostname: str) -> None:
        await self.handshake()

    def get_extra_info(self, name: str) -> None:
        return None

    def close(self) -> None:
        pass

    async def wait_closed(self) -> None:
        pass


@pytest.mark.parametrize("stage", ["dns", "tcp", "tls"])
async def test_a_cancellation_as_a_stage_finishes_is_not_lost(stage: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A Ctrl+C during ``--doctor`` lands in the same moment as a stage's answer: the check
    still ends cancelled (Python 3.11's ``wait_for`` returned the answer and dropped the
    cancellation, so the check went on to the next stage)."""
    answer: asyncio.Future[object] = asyncio.get_running_loop().create_future()
    waiting = asyncio.Event()

    async def stage_answer() -> object:
        waiting.set()
        return await answer

    async def resolve(host: str, port: int) -> list[str]:
        return ["127.0.0.1"] if stage != "dns" else await stage_answer()  # type: ignore[return-value]

    async def open_connection(host: str, port: int) -> tuple[None, _Writer]:
        if stage == "tcp":
            await stage_answer()
        return None, _Writer(stage_answer)

    monkeypatch.setattr(asyncio, "open_connection", open_connection)
    checking = asyncio.ensure_future(
        reach("https://a.test/v1", env={}, tls_context=ssl.create_default_context, resolve=resolve))
    await waiting.wait()  # the stage waits for its answer
    answer.set_result(["127.0.0.1"])
    checking.cancel()  # in the same moment
    with pytest.raises(asyncio.CancelledError):
        await checking
