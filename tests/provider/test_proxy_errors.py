"""A request that cannot reach the proxy the environment names says so — the proxy (without
its password), the variable that set it, what to do — rather than blaming the model server
behind it, which was never reached."""

from __future__ import annotations

import os
import socket

import pytest

from minicode.errors import APIError
from minicode.provider.openai import OpenAIProvider
from minicode.provider.proxy_env import proxy_named, shown

from .helpers import REQUEST, Sleeps
from .test_exchange import RawServer, json_answer


def closed_port() -> int:
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    listener.close()  # nothing listens there now
    return port


async def test_an_unreachable_proxy_is_named_with_its_variable_not_its_password(monkeypatch: pytest.MonkeyPatch) -> None:
    server = RawServer(lambda conn, index: json_answer("never asked"))  # the model server runs
    port = closed_port()
    for name in ("HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy", "NO_PROXY", "no_proxy", "http_proxy"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HTTP_PROXY", f"http://me:hunter2@127.0.0.1:{port}")
    provider = OpenAIProvider(base_url=server.base_url, api_key="", model="m", env=dict(os.environ),
                              sleep=Sleeps(), max_retries=1)
    try:
        with pytest.raises(APIError) as info:
            await provider.chat(REQUEST)
    finally:
        await provider.aclose()
        server.close()
    message = info.value.message
    assert message.startswith(f"cannot reach the proxy http://127.0.0.1:{port} (set in HTTP_PROXY)")
    assert "NO_PROXY" in message and "hunter2" not in message and "me:" not in message
    assert server.requests == []


async def test_without_a_proxy_an_unreachable_server_is_still_the_server_s_fault() -> None:
    port = closed_port()
    provider = OpenAIProvider(base_url=f"http://127.0.0.1:{port}/v1", api_key="", model="m", env={},
                              sleep=Sleeps(), max_retries=0)
    with pytest.raises(APIError) as info:
        await provider.chat(REQUEST)
    await provider.aclose()
    assert info.value.message.startswith(f"cannot reach the model endpoint (127.0.0.1:{port})")
    assert "proxy" not in info.value.message


def test_which_variable_names_the_proxy() -> None:
    proxy = proxy_named("http://a.example/v1", {"http_proxy": "p:3128", "HTTPS_PROXY": "http://q:1"})
    assert proxy is not None and (proxy.url, proxy.variable) == ("http://p:3128", "http_proxy")
    proxy = proxy_named("https://a.example/v1", {"ALL_PROXY": "socks5://u:pw@s:1080"})
    assert proxy is not None and proxy.variable == "ALL_PROXY" and "pw" not in repr(proxy)
    assert proxy_named("https://a.example/v1", {"HTTPS_PROXY": "http://q:1", "no_proxy": "a.example"}) is None
    assert shown("http://user:secret@proxy.local:8080/x") == "http://proxy.local:8080"
    assert shown("http://[::1]:3128") == "http://[::1]:3128"
