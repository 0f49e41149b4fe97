"""Can the endpoint be reached, and where does it fail: DNS, TCP or TLS, each timed apart.

Used by ``minicode --doctor`` before any HTTP request, so "cannot reach the model endpoint"
becomes "cannot resolve the host", "connection refused" or "certificate not trusted".
asyncio and the standard library only (the TLS settings come from the adapter, so the
handshake is judged as the real requests are). When the environment names a proxy for the
URL (``HTTPS_PROXY``/``HTTP_PROXY``/``ALL_PROXY``, minus ``NO_PROXY``) — as the adapter's
HTTP client honours — the proxy is what is reached, and TLS is left to the real request.
Each stage's limit is an ``asyncio.timeout``, not ``wait_for``: Python 3.11's ``wait_for``
returns the result and drops a cancellation (Ctrl+C) that lands as the stage finishes.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import socket
import ssl
import time
from dataclasses import dataclass, replace
from typing import Awaitable, Callable, Mapping
from urllib.parse import urlsplit

from minicode.provider.proxy_env import proxy_named, shown

__all__ = ["Reach", "Resolver", "proxy_for", "reach"]

STAGE_TIMEOUT = 10.0
"""Seconds each stage (DNS, TCP, TLS) may take before it counts as failed."""

Resolver = Callable[[str, int], Awaitable[list[str]]]
"""host, port -> the addresses to try, in order (injectable for tests)."""


@dataclass(frozen=True, slots=True)
class Reach:
    """What reaching ``host:port`` showed. Times in milliseconds; ``None`` for a stage that
    was not needed (DNS of an IP address, TLS of ``http://``) or not reached."""

    host: str
    port: int
    tls: bool
    proxy: str | None = None
    addresses: tuple[str, ...] = ()
    dns_ms: float | None = None
    tcp_ms: float | None = None
    tls_ms: float | None = None
    tls_version: str | None = None
    failed: str | None = None
    """The stage that failed: "dns", "tcp" or "tls"; None when all went well."""
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.failed is None


async def reach(
    url: str,
    *,
    env: Mapping[str, str],
    tls_context: Callable[[], ssl.SSLContext],
    resolve: Resolver | None = None,
    timeout: float = STAGE_TIMEOUT,
    clock: Callable[[], float] = time.perf_counter,
) -> Reach:
    """Resolve, connect and (for https without a proxy) shake hands with ``url``'s host."""
    parts = urlsplit(url)
    secure = parts.scheme == "https"
    host, port = parts.hostname or "", parts.port or (443 if secure else 80)
    proxy = proxy_for(url, env)
    target_host, target_port = host, port
    if proxy is not None:
        proxied = urlsplit(proxy)
        target_host = proxied.hostname or ""
        target_port = proxied.port or (443 if proxied.scheme == "https" else 1080 if "socks" in proxied.scheme else 80)
    result = Reach(host, port, secure, shown(proxy) if proxy is not None else None)  # no password shown
    addresses, dns_ms, error = await _resolve(target_host, target_port, resolve or _system_resolve, timeout, clock)
    if error is not None:
        return _with(result, failed="dns", error=error, dns_ms=dns_ms)
    result = _with(result, addresses=tuple(addresses), dns_ms=dns_ms)
    started = clock()
    try:
        writer = await _connect(addresses, target_port, timeout)
    except _Failed as e:
        return _with(result, failed="tcp", error=str(e))
    try:
        result = _with(result, tcp_ms=_ms(clock() - started))
        if not secure or proxy is not None:
            return result
        started = clock()
        try:
            version = await _handshake(writer, host, tls_context(), timeout)
        except _Failed as e:
            return _with(result, failed="tls", error=str(e))
        return _with(result, tls_ms=_ms(clock() - started), tls_version=version)
    finally:
        writer.close()
        with contextlib.suppress(OSError, ssl.SSLError, TimeoutError):
            async with asyncio.timeout(1.0):
                await writer.wait_closed()


class _Failed(Exception):
    """A stage failed; the message says how, for a person."""


def _with(result: Reach, **changes: object) -> Reach:
    return replace(result, **changes)  # type: ignore[arg-type]


def _ms(seconds: float) -> float:
    return round(seconds * 1000, 1)


async def _system_resolve(host: str, port: int) -> list[str]:
    infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


async def _resolve(
    host: str, port: int, resolve: Resolver, timeout: float, clock: Callable[[], float]
) -> tuple[list[str], float | None, str | None]:
    """(addresses, milliseconds or None for an IP address, error)."""
    if not host:
        return [], None, "the URL has no host"
    try:
        ipaddress.ip_address(host)
        return [host], None, None  # nothing to resolve
    except ValueError:
        pass
    started = clock()
    try:
        async with asyncio.timeout(timeout):
            addresses = await resolve(host, port)
    except TimeoutError:
        return [], None, f"resolving {host} took longer than {timeout:g} s (is a DNS server reachable?)"
    except socket.gaierror as e:
        return [], _ms(clock() - started), _dns_error(host, e)
    except OSError as e:
        return [], _ms(clock() - started), f"cannot resolve {host}: {e.strerror or e}"
    if not addresses:
        return [], _ms(clock() - started), f"{host} resolves to no address"
    return addresses, _ms(clock() - started), None


def _dns_error(host: str, error: socket.gaierror) -> str:
    if error.errno in (socket.EAI_NONAME, getattr(socket, "EAI_NODATA", socket.EAI_NONAME)):
        return f"cannot resolve {host}: no such host"
    if error.errno == socket.EAI_AGAIN:
        return f"cannot resolve {host}: temporary DNS failure (is a DNS server reachable?)"
    return f"cannot resolve {host}: {error.strerror or error}"


async def _connect(addresses: list[str], port: int, timeout: float) -> asyncio.StreamWriter:
    """A connection to the first address that accepts one; _Failed naming the first failure."""
    first: str | None = None
    for address in addresses:
        try:
            async with asyncio.timeout(timeout):
                _, writer = await asyncio.open_connection(address, port)
        except TimeoutError:
            why = f"no answer from {_where(address, port)} within {timeout:g} s (a firewall, or the wrong host or port?)"
        except ConnectionRefusedError:
            why = f"connection refused by {_where(address, port)}: nothing listens there"
        except OSError as e:
            why = f"cannot connect to {_where(address, port)}: {e.strerror or e}"
        else:
            return writer
        first = first or why
    raise _Failed(first or "no address to connect to")


def _where(address: str, port: int) -> str:
    return f"[{address}]:{port}" if ":" in address else f"{address}:{port}"


async def _handshake(writer: asyncio.StreamWriter, host: str, context: ssl.SSLContext, timeout: float) -> str | None:
    try:
        async with asyncio.timeout(timeout):
            await writer.start_tls(context, server_hostname=host)
    except TimeoutError:
        raise _Failed(f"the TLS handshake took longer than {timeout:g} s") from None
    except ssl.SSLCertVerificationError as e:
        raise _Failed(f"the server's certificate is not trusted: {e.verify_message or e.reason}") from None
    except ssl.SSLError as e:
        hint = " (is it a plain http:// server?)" if "WRONG_VERSION_NUMBER" in str(e) else ""
        raise _Failed(f"the TLS handshake failed: {e.reason or e}{hint}") from None
    except (ConnectionError, OSError) as e:
        raise _Failed(f"the connection broke during the TLS handshake: {e.strerror or e or type(e).__name__}") from None
    tls = writer.get_extra_info("ssl_object")
    return tls.version() if isinstance(tls, ssl.SSLObject) else None


def proxy_for(url: str, env: Mapping[str, str]) -> str | None:
    """The proxy URL the environment names for ``url``, or None (``NO_PROXY`` honoured)."""
    proxy = proxy_named(url, env)
    return proxy.url if proxy is not None else None
