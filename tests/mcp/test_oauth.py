"""OAuth sign-in for a remote MCP server against a real authorization server (tests/mcp/oauth_server.py,
the SDK's ``mcp.server.auth`` on 127.0.0.1): the flow completed by following the authorization URL with
plain HTTP (as a browser would), a call with the token, the token file's mode, stored tokens reused and
refreshed, and every way a sign-in fails: nobody to ask, refused consent, a wrong state, no answer in
time, a token endpoint error, a revoked grant. None of them is retried by itself."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import stat
import subprocess
import sys
import time
from pathlib import Path
from typing import AsyncIterator, Callable
from urllib.parse import parse_qs, urlencode, urlsplit

import httpx2
import pytest

from minicode.config import McpServerConfig
from minicode.errors import ToolError
from minicode.mcp_client.link import State
from minicode.mcp_client.signin_settings import SignInSettings
from minicode.mcp_client.manager import McpManager
from minicode.mcp_client.token_file import token_path

SERVER = Path(__file__).with_name("oauth_server.py")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class AuthServer:
    def __init__(self, port: int, tokens: Path) -> None:
        self.url = f"http://127.0.0.1:{port}/mcp"
        self.tokens = tokens

    def issued(self) -> list[str]:
        return self.tokens.read_text().split() if self.tokens.exists() else []


@pytest.fixture
async def auth_server(tmp_path: Path, request: pytest.FixtureRequest) -> AsyncIterator[AuthServer]:
    mode = getattr(request, "param", "")
    port = _free_port()
    tokens = tmp_path / "issued"
    proc = subprocess.Popen([sys.executable, str(SERVER), str(port)], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True,
                            env={**os.environ, "MCP_TEST_OAUTH": mode, "MCP_TEST_TOKENS": str(tokens)})
    try:
        for _ in range(400):
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", port)) == 0:
                    break
            await asyncio.sleep(0.05)
        yield AuthServer(port, tokens)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


Browser = Callable[[str], "asyncio.Task[None]"]


def browser(tmp_path: Path, *, state: str | None = None) -> tuple[list[str], Callable[[str], None], list[httpx2.Response]]:
    """A person with a browser: follows each sign-in address shown (``state``: answers with that one instead)."""
    shown: list[str] = []
    answers: list[httpx2.Response] = []
    tasks: list[asyncio.Task[None]] = []

    async def follow(url: str) -> None:
        async with httpx2.AsyncClient() as client:
            consent = await client.get(url)
            assert consent.status_code == 302, consent.text
            back = consent.headers["location"]
            if state is not None:
                parts = urlsplit(back)
                query = {k: v[0] for k, v in parse_qs(parts.query).items()} | {"state": state}
                back = parts._replace(query=urlencode(query)).geturl()
            answers.append(await client.get(back))

    def show(line: str) -> None:
        shown.append(line)
        if "asks you to sign in" in line:  # (then how it went: signed in, or needs sign-in)
            tasks.append(asyncio.create_task(follow(line.rsplit(": ", 1)[1])))

    return shown, show, answers


def remote(url: str, **kw: float) -> McpServerConfig:
    return McpServerConfig(name="web", url=url, startup_timeout=kw.get("startup", 30), signin_timeout=kw.get("signin", 30))


async def connected(config: McpServerConfig, home: Path, *, attended: bool,
                    show: Callable[[str], None] | None = None) -> tuple[McpManager, list[str]]:
    manager = McpManager([config], home, SignInSettings(attended=attended, home=str(home), open_browser=False))
    notices: list[str] = []
    manager.listen(notices.append)
    manager.show_signin(show or (lambda line: pytest.fail(f"asked to sign in: {line}")))
    manager.start()
    await manager.settle(60)
    return manager, notices


async def test_signs_in_calls_a_tool_and_keeps_the_token_private(auth_server: AuthServer, tmp_path: Path) -> None:
    shown, show, answers = browser(tmp_path)
    manager, notices = await connected(remote(auth_server.url), tmp_path, attended=True, show=show)
    try:
        link = manager.links["web"]
        assert link.state is State.READY, (link.error, notices)
        assert len(shown) == 2 and "MCP server web asks you to sign in" in shown[0] and "/authorize?" in shown[0]
        assert shown[1] == "MCP server web: signed in (2 tools)"  # said where the address was, at once
        assert answers[0].status_code == 200 and "Signed in" in answers[0].text
        text, failed = await link.call("whoami", {})
        assert text.startswith("client ") and not failed
    finally:
        await manager.close()
    path = token_path(str(tmp_path), auth_server.url)
    assert path is not None and path.parent == tmp_path / ".minicode" / "mcp-oauth"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    stored = json.loads(path.read_text())
    assert stored["url"] == auth_server.url and stored["tokens"]["access_token"] in auth_server.issued()

    # the next run uses the stored token: no sign-in, even with nobody to ask
    manager, notices = await connected(remote(auth_server.url), tmp_path, attended=False)
    try:
        assert manager.links["web"].state is State.READY, notices
        assert (await manager.links["web"].call("whoami", {}))[0].startswith("client ")
    finally:
        await manager.close()


async def test_an_expired_stored_token_is_refreshed_without_a_sign_in(auth_server: AuthServer, tmp_path: Path) -> None:
    _, show, _ = browser(tmp_path)
    manager, _ = await connected(remote(auth_server.url), tmp_path, attended=True, show=show)
    await manager.close()
    path = token_path(str(tmp_path), auth_server.url)
    assert path is not None
    stored = json.loads(path.read_text())
    first = stored["tokens"]["access_token"]
    stored["tokens"]["expires_at"] = time.time() - 60  # as if an hour had passed
    path.write_text(json.dumps(stored))
    manager, notices = await connected(remote(auth_server.url), tmp_path, attended=False)
    try:
        assert manager.links["web"].state is State.READY, notices
    finally:
        await manager.close()
    refreshed = json.loads(path.read_text())["tokens"]["access_token"]
    assert refreshed != first and refreshed in auth_server.issued()


async def test_nobody_to_ask_marks_it_needs_sign_in_at_once_and_login_retries(auth_server: AuthServer, tmp_path: Path) -> None:
    shown, show, _ = browser(tmp_path)
    manager = McpManager([remote(auth_server.url)], tmp_path, SignInSettings(home=str(tmp_path), open_browser=False))
    notices: list[str] = []
    manager.listen(notices.append)
    manager.show_signin(show)
    manager.start()
    try:
        started = time.monotonic()
        await manager.settle(60)
        link = manager.links["web"]
        assert link.state is State.SIGNIN and time.monotonic() - started < 20
        assert notices == [f"MCP server web needs sign-in: {link.error}"] and "minicode --mcp-login web" in link.error
        assert shown == []  # no address for nobody
        with pytest.raises(ToolError, match="^MCP server web needs sign-in: it asks for a sign-in"):
            await link.call("whoami", {})
        assert link.state is State.SIGNIN  # not retried by itself
        assert link.sign_in()  # /mcp login web: now a person answers
        await link.wait_settled()
        assert link.state is State.READY and len(shown) == 2
    finally:
        await manager.close()


@pytest.mark.parametrize("auth_server", ["deny"], indirect=True)
async def test_refused_consent(auth_server: AuthServer, tmp_path: Path) -> None:
    shown, show, answers = browser(tmp_path)
    manager, notices = await connected(remote(auth_server.url), tmp_path, attended=True, show=show)
    try:
        link = manager.links["web"]
        assert link.state is State.SIGNIN
        assert "refused the sign-in (access_denied: the user said no)" in link.error
        assert "Sign-in refused" in answers[0].text
        assert notices == [] and shown[-1] == f"MCP server web needs sign-in: {link.error}; sign in with: " \
            "/mcp login web (or minicode --mcp-login web)"  # where the address was shown, at once
    finally:
        await manager.close()


async def test_an_answer_with_another_state_is_refused(auth_server: AuthServer, tmp_path: Path) -> None:
    _, show, answers = browser(tmp_path, state="forged")
    manager, _ = await connected(remote(auth_server.url), tmp_path, attended=True, show=show)
    try:
        assert manager.links["web"].state is State.SIGNIN
        assert "did not carry this sign-in's state" in manager.links["web"].error
        assert answers[0].status_code == 400
    finally:
        await manager.close()
    path = token_path(str(tmp_path), auth_server.url)
    assert path is not None and "tokens" not in json.loads(path.read_text())


async def test_no_answer_in_time(auth_server: AuthServer, tmp_path: Path) -> None:
    shown: list[str] = []
    manager, _ = await connected(remote(auth_server.url, signin=1), tmp_path, attended=True, show=shown.append)
    try:
        assert manager.links["web"].state is State.SIGNIN and len(shown) == 2
        assert "no answer from the browser within 1 s (signin_timeout)" in manager.links["web"].error
        port = urlsplit(parse_qs(urlsplit(shown[0].rsplit(": ", 1)[1]).query)["redirect_uri"][0]).port
        with socket.socket() as s:  # the callback listener is gone
            assert s.connect_ex(("127.0.0.1", port)) != 0
    finally:
        await manager.close()


async def test_the_person_signing_in_is_off_the_startup_clock(auth_server: AuthServer, tmp_path: Path) -> None:
    shown, show, _ = browser(tmp_path)

    def slow_person(line: str) -> None:  # answers after the start-up time-out has passed
        asyncio.get_running_loop().call_later(1.5, show, line)

    manager, notices = await connected(remote(auth_server.url, startup=1), tmp_path, attended=True, show=slow_person)
    try:
        assert manager.links["web"].state is State.READY, notices
    finally:
        await manager.close()


@pytest.mark.parametrize("auth_server", ["token500"], indirect=True)
async def test_a_token_endpoint_error(auth_server: AuthServer, tmp_path: Path) -> None:
    _, show, _ = browser(tmp_path)
    manager, notices = await connected(remote(auth_server.url), tmp_path, attended=True, show=show)
    try:
        link = manager.links["web"]
        assert link.state is State.SIGNIN and "Token exchange failed (500)" in link.error, notices
    finally:
        await manager.close()


async def test_a_revoked_grant_needs_a_new_sign_in_not_a_retry_loop(auth_server: AuthServer, tmp_path: Path) -> None:
    _, show, _ = browser(tmp_path)
    manager, _ = await connected(remote(auth_server.url), tmp_path, attended=True, show=show)
    await manager.close()
    manager, notices = await connected(remote(auth_server.url), tmp_path, attended=False)
    try:
        link = manager.links["web"]
        assert (await link.call("revoke", {}))[0] == "revoked"
        with pytest.raises(ToolError):
            await link.call("whoami", {})
        for _ in range(200):  # the reconnect that follows asks for a sign-in, once
            if link.state is State.SIGNIN:
                break
            await asyncio.sleep(0.05)
        assert link.state is State.SIGNIN and "minicode --mcp-login web" in link.error, notices
    finally:
        await manager.close()


async def test_an_authorization_header_means_no_sign_in(auth_server: AuthServer, tmp_path: Path) -> None:
    config = McpServerConfig(name="web", url=auth_server.url, headers=(("Authorization", "Bearer wrong"),),
                             startup_timeout=30)
    manager, _ = await connected(config, tmp_path, attended=True)
    try:
        assert manager.links["web"].state is State.FAILED  # the given token was refused: no browser
    finally:
        await manager.close()


async def test_tokens_that_cannot_be_kept_fail_the_sign_in_clearly(auth_server: AuthServer, tmp_path: Path) -> None:
    home = tmp_path / "no-such-home"  # ~/.minicode cannot be made in it
    manager = McpManager([remote(auth_server.url)], tmp_path, SignInSettings(attended=True, home=str(home)))
    manager.show_signin(lambda line: pytest.fail(f"asked to sign in: {line}"))
    manager.start()
    try:
        await manager.settle(60)
        link = manager.links["web"]
        assert link.state is State.SIGNIN  # not retried: each retry would register another client
        assert link.error.startswith(f"cannot keep the sign-in in {home}/.minicode/mcp-oauth/") and \
            link.error.endswith(": No such file or directory")
    finally:
        await manager.close()


async def test_a_person_signing_in_does_not_hold_up_the_other_servers(
        auth_server: AuthServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("minicode.mcp_client.manager.MAX_CONNECTING", 1)  # one server starts at a time
    other = McpServerConfig(name="local", command=(sys.executable, str(Path(__file__).with_name("server.py"))),
                            startup_timeout=30)
    shown: list[str] = []  # a person who has not answered yet
    manager = McpManager([remote(auth_server.url), other], tmp_path,
                         SignInSettings(attended=True, home=str(tmp_path)))
    manager.show_signin(shown.append)
    manager.start()
    try:
        await manager.links["local"].wait_settled()
        assert manager.links["local"].state is State.READY
        assert manager.links["web"].state is State.CONNECTING and len(shown) == 1  # still waiting for the person
    finally:
        await manager.close()
