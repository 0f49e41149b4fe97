"""The sign-in's own parts, without a server: the loopback callback listener (single use, the state
checked, other paths ignored, untrusted text made printable) and the token file (0600, one per URL,
a damaged or foreign file is no tokens, nothing kept without a home)."""

from __future__ import annotations

import asyncio
import json
import stat
from pathlib import Path

import httpx2
import pytest
from mcp.shared.auth import OAuthToken

from minicode.mcp_client.callback import CallbackListener, SignInFailed, printable
from minicode.mcp_client.token_file import TokenFile, token_path


async def _get(url: str) -> httpx2.Response:
    async with httpx2.AsyncClient() as client:
        return await client.get(url)


async def test_the_callback_takes_one_answer_with_the_right_state() -> None:
    async with CallbackListener() as listener:
        waiting = asyncio.create_task(listener.wait("s1", 30))
        base = f"http://127.0.0.1:{listener.port}"
        assert (await _get(f"{base}/favicon.ico")).status_code == 404  # a browser's extra request changes nothing
        page = await _get(f"{listener.redirect_uri}?code=c1&state=s1&iss=http://as.example")
        assert page.status_code == 200 and "Signed in" in page.text
        answer = await waiting
        assert (answer.code, answer.state, answer.iss) == ("c1", "s1", "http://as.example")
        with pytest.raises(httpx2.ConnectError):  # single use: it no longer listens
            await _get(f"{listener.redirect_uri}?code=c2&state=s1")


async def test_the_callback_refuses_another_state_and_reports_a_refusal() -> None:
    async with CallbackListener() as listener:
        waiting = asyncio.create_task(listener.wait("right", 30))
        assert (await _get(f"{listener.redirect_uri}?code=c&state=wrong")).status_code == 400
        with pytest.raises(SignInFailed, match="did not carry this sign-in's state"):
            await waiting
    async with CallbackListener() as listener:
        waiting = asyncio.create_task(listener.wait("s", 30))
        await _get(f"{listener.redirect_uri}?error=access_denied&error_description=no%1b[31m&state=s")
        with pytest.raises(SignInFailed, match=r"refused the sign-in \(access_denied: no \[31m\)"):
            await waiting


async def test_the_callback_times_out() -> None:
    async with CallbackListener() as listener:
        with pytest.raises(SignInFailed, match="no answer from the browser within 0.2 s"):
            await listener.wait("s", 0.2)


def test_printable_makes_untrusted_text_one_short_line() -> None:
    assert printable("a\x1b[2J\nb\tc") == "a [2J b c"
    assert len(printable("x" * 1000)) == 200


async def test_the_token_file_is_private_and_belongs_to_one_url(tmp_path: Path) -> None:
    path = token_path(str(tmp_path), "https://a.example/mcp")
    assert path is not None and path != token_path(str(tmp_path), "https://b.example/mcp")
    tokens = TokenFile(path, "https://a.example/mcp")
    await tokens.set_tokens(OAuthToken(access_token="at-1", expires_in=60, refresh_token="rt-1"))
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE((tmp_path / ".minicode").stat().st_mode) == 0o700
    again = TokenFile(path, "https://a.example/mcp")
    stored = await again.get_tokens()
    assert stored is not None and stored.access_token == "at-1"
    expires = await again.expires_at()
    assert expires is not None and expires > 0
    await again.forget_tokens()
    assert await TokenFile(path, "https://a.example/mcp").get_tokens() is None
    # a file that names another URL, or is damaged, is no tokens
    path.write_text(json.dumps({"url": "https://evil.example/mcp", "tokens": {"access_token": "x"}}))
    assert await TokenFile(path, "https://a.example/mcp").get_tokens() is None
    path.write_text("{not json")
    assert await TokenFile(path, "https://a.example/mcp").get_tokens() is None
    path.write_text(json.dumps({"url": "https://a.example/mcp", "tokens": {"access_token": 5}}))
    assert await TokenFile(path, "https://a.example/mcp").get_tokens() is None


async def test_without_a_home_tokens_last_this_run_only(tmp_path: Path) -> None:
    assert token_path(None, "https://a.example/mcp") is None and token_path("relative", "https://a/mcp") is None
    tokens = TokenFile(None, "https://a.example/mcp")
    await tokens.set_tokens(OAuthToken(access_token="at"))
    stored = await tokens.get_tokens()
    assert stored is not None and stored.access_token == "at"


def test_the_browser_is_opened_only_where_it_opens_a_window(monkeypatch: pytest.MonkeyPatch) -> None:
    from minicode.mcp_client.signin_settings import SignInSettings

    monkeypatch.setattr("sys.platform", "linux")
    assert not SignInSettings.from_env({"HOME": "/h", "TERM": "xterm"}, attended=True).open_browser  # lynx, no
    assert SignInSettings.from_env({"DISPLAY": ":0"}, attended=True).open_browser
    settings = SignInSettings.from_env({"HOME": "/h", "WAYLAND_DISPLAY": "w"}, attended=False)
    assert (settings.home, settings.attended, settings.open_browser) == ("/h", False, True)
