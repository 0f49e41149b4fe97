"""Which proxy the environment names for a URL: ``HTTPS_PROXY``/``HTTP_PROXY``/``ALL_PROXY``
(any case), minus the hosts ``NO_PROXY`` lists — the variables httpx2 follows. ``--doctor``
reaches the proxy instead of the host, and a request that cannot reach the proxy says so,
naming the variable (the server behind it may be running fine).

Pure; imports only the standard library.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping
from urllib.parse import urlsplit

__all__ = ["PROXY_FAILURES", "Proxy", "proxy_named", "shown", "unreachable_proxy"]

PROXY_FAILURES = frozenset({"ConnectError", "ConnectTimeout", "ProxyError"})
"""The failures (httpx2's names) that happen on the way to the proxy when one is in use."""


@dataclass(frozen=True, slots=True)
class Proxy:
    """The proxy URL (``http://`` added when the value has no scheme) and the variable naming it."""

    url: str
    variable: str

    def __repr__(self) -> str:
        return f"Proxy({shown(self.url)!r}, {self.variable!r})"


def proxy_named(url: str, env: Mapping[str, str]) -> Proxy | None:
    """The proxy the environment names for ``url``, or None (``NO_PROXY`` honoured)."""
    names = {k.lower(): k for k in env if k.lower().endswith("_proxy")}
    parts = urlsplit(url)
    host = (parts.hostname or "").lower()
    if _bypassed(host, env.get(names.get("no_proxy", ""), "")):
        return None
    for key in (f"{parts.scheme}_proxy", "all_proxy"):
        name = names.get(key)
        value = env.get(name, "").strip() if name else ""
        if name and value:
            return Proxy(value if "://" in value else "http://" + value, name)
    return None


def unreachable_proxy(proxy: Proxy, host: str, detail: str) -> str:
    """What to say when ``proxy`` could not be reached on the way to the endpoint ``host``."""
    return (f"cannot reach the proxy {shown(proxy.url)} (set in {proxy.variable}) for the model endpoint "
            f"({host}): {detail} — check {proxy.variable}, or list the host in NO_PROXY (the "
            "[model].base_url server itself was not reached)")


def shown(proxy_url: str) -> str:
    """The proxy URL without its user and password: scheme, host and port only."""
    parts = urlsplit(proxy_url)
    try:
        port = parts.port
    except ValueError:
        port = None
    host = parts.hostname or "?"
    if ":" in host:
        host = f"[{host}]"  # an IPv6 address
    return f"{parts.scheme}://{host}" + (f":{port}" if port else "")


def _bypassed(host: str, no_proxy: str) -> bool:
    for entry in (e.strip().lower() for e in no_proxy.split(",")):
        if not entry:
            continue
        if entry == "*":
            return True
        entry = entry.split("://", 1)[-1].lstrip(".").split(":", 1)[0]
        if host == entry or host.endswith("." + entry):
            return True
    return False
