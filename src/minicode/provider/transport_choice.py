"""Which transport carries a provider's requests: minicode's own client or httpx.

``choose`` gives minicode's own HTTP/1.1 client (``socket_transport``) when the environment
is known and the endpoint is plain (``plain_http.plain_endpoint``: no proxy, a plain URL, an
ASCII key, no extra content codings, not ``MINICODE_HTTP=httpx``), so a plain run never imports
httpx; otherwise httpx (``httpx_transport``), as for an injected client. Imports the chosen
transport only.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    import ssl
    from typing import Mapping

    import httpx

    from minicode.provider.transport import Transport

__all__ = ["choose"]


def choose(url: str, api_key: str, *, tls: ssl.SSLContext | None, env: Mapping[str, str] | None,
           client: httpx.Client | None) -> Transport:
    """The transport for requests to ``url`` (the chat endpoint). ``client``: the caller's
    httpx client (always used when given); ``env`` None: the environment is unknown (httpx
    reads it itself). Raises ``ConfigError`` for a proxy httpx cannot use."""
    if client is None and env is not None:
        from minicode.provider.plain_http import httpx_user_agent, plain_endpoint

        point = plain_endpoint(url, api_key, env)
        user_agent = httpx_user_agent()
        if point is not None and user_agent is not None:
            from minicode.provider.socket_transport import SocketTransport

            if tls is None and point.scheme == "https":
                from minicode.provider.tls import LazyTrustContext

                tls = LazyTrustContext(env)
            return SocketTransport(point, tls, user_agent)
    from minicode.provider.httpx_transport import HttpxTransport, make_client

    if client is not None:
        return HttpxTransport(client, owns=False)
    return HttpxTransport(make_client(tls, env or {}), owns=True)
