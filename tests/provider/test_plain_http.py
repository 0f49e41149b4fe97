"""Which endpoints minicode's own HTTP client may serve (``provider/plain_http.py``)."""

from __future__ import annotations

import pytest

from minicode.provider.plain_http import client_headers, endpoint, httpx_user_agent, plain_endpoint

URL = "https://api.example.com/v1/chat/completions"


def test_a_plain_url_is_split_as_httpx_sends_it() -> None:
    point = endpoint("http://[::1]:8080/v1/chat/completions")
    assert point is not None
    assert (point.scheme, point.host, point.port, point.netloc, point.path, point.host_key) == (
        "http", "::1", 8080, "[::1]:8080", "/v1/chat/completions", "::1:8080")
    default = endpoint("HTTPS://API.example.com:443/v1")
    assert default is not None and (default.netloc, default.port, default.host_key) == (
        "api.example.com", 443, "api.example.com:443")  # the profile key keeps the port as written


@pytest.mark.parametrize("url", [
    "ftp://host/v1", "http:///v1", "http://user:pw@host/v1", "http://host/v1?x=1", "http://host/v1#frag",
    "http://hôst/v1", "http://host/v 1", "http://host/v%201", "http://host:99999/v1", "http://host:abc/v1",
    "http://host/v1/../v1/chat/completions", "http://host/./v1/chat/completions", "http://host/v1/..",
])
def test_urls_httpx_would_treat_differently_are_not_plain(url: str) -> None:
    assert endpoint(url) is None


def test_plain_needs_no_proxy_an_ascii_key_and_no_switch() -> None:
    assert plain_endpoint(URL, "sk-abc", {}) is not None
    assert plain_endpoint(URL, "", {"MINICODE_HTTP": "own"}) is not None
    for env in ({"HTTPS_PROXY": "http://proxy:3128"}, {"all_proxy": "socks5://p"}, {"MINICODE_HTTP": "httpx"},
                {"MINICODE_HTTP": " HTTPX "}):
        assert plain_endpoint(URL, "sk-abc", env) is None, env
    assert plain_endpoint(URL, "sk-é", {}) is None
    assert plain_endpoint(URL, "sk-\n", {}) is None
    assert plain_endpoint(URL, "k", {"HTTP_PROXY": ""}) is not None  # an empty variable is no proxy


def test_client_headers_merge_like_httpx() -> None:
    agent = httpx_user_agent()
    import httpx

    assert agent == f"python-httpx/{httpx.__version__}"
    own = {"Accept": "text/event-stream", "Authorization": "Bearer k"}
    expected = httpx.Client().build_request("GET", URL, headers=own).headers.raw[1:]  # past Host
    assert [(k.encode(), v.encode()) for k, v in client_headers(own, agent)] == expected
