"""The provider's httpx2 client: what it is made with, and the base URLs it can request —
``config.check_base_url`` (which runs at start, without httpx2) never accepts one httpx2 refuses."""

from __future__ import annotations

import httpx2
import pytest

from minicode import __version__
from minicode.config import check_base_url
from minicode.errors import ConfigError
from minicode.provider.http import ACCEPT_ENCODING, TIMEOUT, USER_AGENT, HttpClient

ACCEPTED_BY_BOTH = [
    "https://api.openai.com/v1", "http://127.0.0.1:11434/v1", "http://[::1]:8080/v1", "http://localhost.:8080/v1",
    "https://bücher.example/v1", "https://xn--bcher-kva.example/v1", "https://straße.de/v1", "http://my_service/v1",
    "HTTPS://API.Example.COM/v1", "http://10.0.0.1:65535/v1", "https://host/v1/", "http://u:p@host/v1",
    "https://host/%7Euser/v1", "https://ex-ample.com/v1", "http://127.1:8080/v1", "http://2130706433/v1",
]
REFUSED_BY_BOTH = [
    "ftp://host/v1", "api.example.com/v1", "http:///v1", "http://ho\x01st/v1", "http://host/v1\x7f",
    "http://host/v\t1", "http://[::1/v1", "http://1.2.3.256/v1",
    "http://h\u2024x/v1", "http://exa\u200bmple/v1", "http://host\u00a0/v1", "http://\u3000host/v1",
    "http://a:80:80/v1", "http://host:8x/v1", "http://[::1]:x/v1",
]
REFUSED_BY_MINICODE_ONLY = {
    # httpx2 would try them; each fails later, or sends what the user did not mean
    "http://a b/v1": "a space in the host: a DNS failure at the first request",
    "http://host/v 1": "a space: sent as %20, never what was typed",
    "http://host:0/v1": "port 0: nothing listens there",
    "http://host:99999/v1": "a port out of range: the connect fails",
    "http://a..b/v1": "an empty label: the resolver raises UnicodeError through httpx2",
    # httpx2 decodes an encoded name for display only (idna's display=True: no error), then sends it
    "http://xn--zz/v1": "not a valid encoded international name: no such host at the first request",
    "http://xn--/v1": "an empty encoded name: no such host at the first request",
    "https://host/v1?x=1": "a query: /chat/completions would land inside it",
    "https://host/v1#f": "a fragment: /chat/completions would be dropped",
}


def _httpx2_can(url: str) -> bool:
    try:
        HttpClient(url.rstrip("/") + "/chat/completions", {}).close()
    except ConfigError:
        return False
    return True


def _minicode_can(url: str) -> bool:
    try:
        check_base_url(url)
    except ConfigError:
        return False
    return True


@pytest.mark.parametrize("url", ACCEPTED_BY_BOTH)
def test_a_url_both_accept(url: str) -> None:
    assert _minicode_can(url) and _httpx2_can(url)


@pytest.mark.parametrize("url", REFUSED_BY_BOTH)
def test_a_url_httpx2_refuses_is_refused_at_start(url: str) -> None:
    assert not _httpx2_can(url), "httpx2 takes it now: move it to ACCEPTED_BY_BOTH if minicode should too"
    assert not _minicode_can(url)


@pytest.mark.parametrize("url", list(REFUSED_BY_MINICODE_ONLY))
def test_minicode_s_own_stricter_rules(url: str) -> None:
    assert not _minicode_can(url)


def test_the_client_is_made_with_minicode_s_settings() -> None:
    http = HttpClient("https://api.example.com/v1/chat/completions", {})
    try:
        assert http.client.headers["user-agent"] == USER_AGENT == f"minicode/{__version__}"
        assert http.client.headers["accept-encoding"] == ACCEPT_ENCODING == "gzip, deflate"
        assert http.client.timeout == TIMEOUT and TIMEOUT.read == 300.0 and TIMEOUT.connect == 15.0
        assert not http.client.follow_redirects  # a moved endpoint is a configuration matter
    finally:
        http.close()


def test_a_caller_s_own_client_is_used_and_left_open() -> None:
    client = httpx2.Client(transport=httpx2.MockTransport(lambda request: httpx2.Response(200)))
    http = HttpClient("http://test/v1/chat/completions", {}, client)
    http.close()
    assert http.client is client and not client.is_closed
    client.close()
