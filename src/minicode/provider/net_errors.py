"""What a failed connection to the endpoint means for the user, and whether waiting helps.

A name that does not resolve (NXDOMAIN) or a TLS handshake that fails (a plain-http server
behind an https:// URL, an untrusted certificate) will fail the same way on every retry: say
what to fix at once, the way ``--doctor`` does, instead of retrying for seconds first. A
temporary DNS failure, a refused or reset connection and timeouts stay retryable (a local
server may be starting, a network may come back). ``http_reason`` is the short reason a retry
shows for an HTTP status. Standard library only.
"""

from __future__ import annotations

import socket
import ssl

__all__ = ["broke_http", "http_reason", "lasting_failure"]

_NO_SUCH_HOST = {socket.EAI_NONAME, getattr(socket, "EAI_NODATA", socket.EAI_NONAME)}


def lasting_failure(error: BaseException, host: str) -> str | None:
    """A message for a failure that retrying cannot fix, or None when it may be transient."""
    for cause in _chain(error):
        if isinstance(cause, socket.gaierror) and cause.errno in _NO_SUCH_HOST:
            return f"cannot resolve {host}: no such host — check the host in [model].base_url"
        if isinstance(cause, ssl.SSLCertVerificationError):
            return (f"the TLS certificate of {host} is not trusted ({cause.verify_message or cause.reason}) — "
                    "set SSL_CERT_FILE to your CA bundle, or check [model].base_url")
        if isinstance(cause, ssl.SSLError) and cause.reason == "WRONG_VERSION_NUMBER":
            return (f"the TLS handshake with {host} failed (WRONG_VERSION_NUMBER): is it a plain http:// "
                    "server? A local server usually wants http:// in [model].base_url")
    return None


def broke_http(name: str, message: str) -> bool:
    """A protocol error (``name``: httpx2's error type) that is
    the server answering with something that is not HTTP — not the connection ending early."""
    cut_short = "disconnected" in message or "peer closed" in message or "incomplete" in message
    return name == "RemoteProtocolError" and not cut_short


def _chain(error: BaseException) -> list[BaseException]:
    """``error`` and what caused it (httpx2 wraps the socket and ssl errors), at most 8 deep."""
    seen: list[BaseException] = []
    current: BaseException | None = error
    while current is not None and len(seen) < 8 and current not in seen:
        seen.append(current)
        current = current.__cause__ or current.__context__
    return seen


_STATUS_REASONS = {408: "request timeout", 409: "conflict", 429: "rate limited", 500: "server error",
                   502: "bad gateway", 503: "service unavailable", 504: "gateway timeout"}


def http_reason(status: int) -> str:
    """Why a retry happens, short: "HTTP 429 rate limited" (the body may hold secrets or noise)."""
    return f"HTTP {status} {_STATUS_REASONS.get(status, 'server error' if status >= 500 else 'error')}"
