"""When minicode's own HTTP/1.1 client may carry a run's requests instead of httpx.

The early first request (``provider/early.py``) and every later request of a run
(``provider/socket_transport.py``) go over minicode's small socket client — no httpx, httpcore
or h11 to import, no objects of theirs per request — when the endpoint is "plain": the
request that client sends is byte for byte the one httpx would send and nothing httpx does
for this run is missing. That holds unless:

- ``MINICODE_HTTP=httpx`` is set (the switch: every request through httpx, no early request);
- a proxy variable is set (``HTTP(S)_PROXY``, ``ALL_PROXY``, any case: httpx routes through it);
- the endpoint URL is not plain ``http(s)://host[:port]/path`` (user info, a query, a fragment,
  a non-ASCII host, characters httpx would escape in the path);
- the API key is not printable ASCII (httpx would refuse or encode it its own way);
- brotli, brotlicffi or zstandard is installed (httpx would offer those codings);
- httpx's version cannot be read (its ``User-Agent`` is sent, as httpx would).

``client_headers`` is httpx's default header set merged with minicode's own, in httpx's order.
Standard library only, cheap to import: the early start calls it before anything else loads.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Mapping

__all__ = ["SWITCH_VARIABLE", "Endpoint", "client_headers", "endpoint", "extra_codings_installed", "httpx_user_agent",
           "plain_endpoint"]

SWITCH_VARIABLE = "MINICODE_HTTP"
"""``MINICODE_HTTP=httpx``: send every request through httpx (and no early first request)."""
_PROXY_NAMES = ("http_proxy", "https_proxy", "all_proxy")
_EXTRA_CODINGS = ("brotli", "brotlicffi", "zstandard")
_PATH_CHARACTERS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~/!$&'()*+,;=:@")


class Endpoint:
    """Where a plain URL points: ``host`` without IPv6 brackets, ``netloc`` as the ``Host``
    header carries it (the port only when not the scheme's default), the ``path``, and
    ``host_key``: the host and the port as written (the adapter's key of learned profiles)."""

    __slots__ = ("host", "host_key", "netloc", "path", "port", "scheme")

    def __init__(self, scheme: str, host: str, port: int, netloc: str, path: str, host_key: str) -> None:
        self.scheme = scheme
        self.host = host
        self.port = port
        self.netloc = netloc
        self.path = path
        self.host_key = host_key

    def __repr__(self) -> str:
        return f"Endpoint({self.scheme}://{self.netloc}{self.path})"


def endpoint(url: str) -> Endpoint | None:
    """``url`` split the way httpx would send it, or None when it is not plain."""
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(url)
        explicit_port = parts.port
    except ValueError:
        return None
    scheme, host = parts.scheme.lower(), (parts.hostname or "")
    if scheme not in ("http", "https") or not host or parts.username is not None or parts.password is not None:
        return None
    if parts.query or parts.fragment or "?" in url or "#" in url or not host.isascii():
        return None
    if not set(parts.path) <= _PATH_CHARACTERS or "%" in parts.path:
        return None
    if any(segment in (".", "..") for segment in parts.path.split("/")):
        return None  # httpx removes dot segments (RFC 3986); it sends this one
    default_port = 443 if scheme == "https" else 80
    port = explicit_port or default_port
    netloc = (f"[{host}]" if ":" in host else host) + ("" if port == default_port else f":{port}")
    host_key = host + (f":{explicit_port}" if explicit_port else "")
    return Endpoint(scheme, host, port, netloc, parts.path, host_key)


def plain_endpoint(url: str, api_key: str, env: Mapping[str, str]) -> Endpoint | None:
    """The endpoint of ``url`` when minicode's own client may send this run's requests to it
    (see the module doc), else None."""
    if env.get(SWITCH_VARIABLE, "").strip().lower() == "httpx":
        return None
    if any(value for name, value in env.items() if name.lower() in _PROXY_NAMES):
        return None
    if not all(" " <= c <= "~" for c in api_key):
        return None
    found = endpoint(url)
    if found is None or httpx_user_agent() is None or _extra_codings():
        return None
    return found


def client_headers(own: Mapping[str, str], user_agent: str) -> list[tuple[str, str]]:
    """httpx's client defaults (gzip, deflate: no brotli, no zstandard here) merged with
    minicode's own headers the way ``Client.build_request`` merges them."""
    merged = {"Accept": "*/*", "Accept-Encoding": "gzip, deflate", "Connection": "keep-alive",
              "User-Agent": user_agent}
    for name, value in own.items():  # httpx.Headers.update: the old field goes, the new one is appended
        merged.pop(name, None)
        merged[name] = value
    return list(merged.items())


_user_agent: list[str | None] = []
_codings: list[bool] = []


def extra_codings_installed() -> bool:
    """Whether httpx can decode ``br`` or ``zstd`` here (brotli, brotlicffi or zstandard installed)."""
    return _extra_codings()


def _extra_codings() -> bool:
    """Whether a content coding httpx would offer beyond gzip and deflate is installed."""
    if not _codings:
        from importlib.util import find_spec

        _codings.append(any(find_spec(name) is not None for name in _EXTRA_CODINGS))
    return _codings[0]


def httpx_user_agent() -> str | None:
    """``python-httpx/VERSION`` as httpx sends it, read from its ``__version__.py`` without
    importing httpx (that is what this saves); None if it cannot be found. Read once."""
    if not _user_agent:
        _user_agent.append(_read_user_agent())
    return _user_agent[0]


def _read_user_agent() -> str | None:
    from importlib.util import find_spec

    spec = find_spec("httpx")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = os.path.join(list(spec.submodule_search_locations)[0], "__version__.py")
    try:
        with open(path, encoding="utf-8") as f:
            for line in f:
                name, _, value = line.partition("=")
                if name.strip() == "__version__":
                    return "python-httpx/" + value.strip().strip("\"'")
    except OSError:
        return None
    return None
