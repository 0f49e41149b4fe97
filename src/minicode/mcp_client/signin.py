"""OAuth sign-in for a remote MCP server, through the SDK's ``OAuthClientProvider``: when the
server answers 401 (its ``WWW-Authenticate`` and protected-resource metadata name the
authorization server), the SDK discovers, registers minicode as a client (dynamic
registration), builds the authorization URL, exchanges the code and refreshes the tokens;
minicode supplies the three things it cannot:

- where the tokens live: ``token_file.TokenFile`` (0600, under ``~/.minicode/mcp-oauth/``);
- the redirect: the URL is shown (``show``: a notice in the full screen, a line on stderr
  elsewhere) and the browser opened where there is one to open (never fatal);
- the callback: ``callback.CallbackListener`` on 127.0.0.1, single use, ``state`` checked,
  for at most ``signin_timeout`` seconds.

Only when a person can answer (``SignInSettings.attended``: a terminal, not ``--yes``, not
JSON). Otherwise the redirect fails at once with ``SignInNeeded`` and the server is marked
"needs sign-in" (``link``), never waited for. ``started`` and ``on_waiting`` tell the link that
this attempt reached a person: that time is off the start-up clock, and a failure after it is
not retried (a revoked grant or a refused consent must not reopen the browser every minute).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import webbrowser
from typing import Any, Callable
from urllib.parse import parse_qs, urlsplit

import httpx2
from mcp.client.auth import OAuthClientProvider
from mcp.shared.auth import AuthorizationCodeResult, OAuthClientMetadata

from minicode import __version__
from minicode.config import McpServerConfig
from minicode.mcp_client.callback import CALLBACK_PATH, CallbackListener, SignInFailed
from minicode.mcp_client.signin_settings import SignInSettings
from minicode.mcp_client.token_file import TokenFile, token_path

__all__ = ["SignIn", "SignInFailed", "SignInNeeded"]

_BROWSER_S = 5.0
# The SDK logs each failed flow with a traceback; here the failure is the server's state and a
# notice, and a traceback on stderr would tear the full screen.
logging.getLogger("mcp.client.auth").setLevel(logging.CRITICAL + 1)


class SignInNeeded(SignInFailed):
    """The server asks for a sign-in and nobody is there to do it."""


class SignIn:
    """One connection attempt's sign-in for one server (see the module docstring)."""

    def __init__(self, config: McpServerConfig, settings: SignInSettings, show: Callable[[str], None],
                 on_waiting: Callable[[bool], None]) -> None:
        self._config = config
        self._settings = settings
        self._show = show
        self._tokens = TokenFile(token_path(settings.home, config.url), config.url)
        self._listener: CallbackListener | None = None
        self._state = ""
        self._port = 0
        self._wait_for_person = on_waiting
        """Told True while a person is being waited for (that time is off the start-up clock)."""
        self.started = False
        """The server asked for a sign-in in this attempt."""
        self.failure = ""
        """Why the sign-in failed, as minicode saw it ("" when it did not, or the SDK said)."""
        self.shown = False
        """The address was shown: the outcome goes where it went (``show``), at once."""

    async def auth(self) -> httpx2.Auth:
        """The SDK's provider for this server, its callback port chosen (the registered one)."""
        port = _registered_port(await self._tokens.get_client_info())
        if port is None:
            port = await _free_port()
        redirect = f"http://127.0.0.1:{port}{CALLBACK_PATH}"
        metadata = OAuthClientMetadata(
            client_name=f"minicode {__version__}", redirect_uris=[redirect],  # type: ignore[list-item]
            grant_types=["authorization_code", "refresh_token"], response_types=["code"],
            token_endpoint_auth_method="none",
        )
        self._port = port
        return _Provider(self._config.url, metadata, self._tokens, redirect_handler=self._redirect,
                         callback_handler=self._callback)

    async def close(self) -> None:
        if self._listener is not None:
            await self._listener.__aexit__()
        self._wait_for_person(False)

    async def _redirect(self, url: str) -> None:
        try:
            await self._open(url)
        except SignInFailed as e:
            self.failure = str(e)
            raise

    async def _open(self, url: str) -> None:
        self.started = True
        name = self._config.name
        if not self._settings.attended:
            raise SignInNeeded(f"it asks for a sign-in, and this run has nobody to ask (no terminal, --yes or "
                               f"--output json); sign in with: minicode --mcp-login {name}")
        self._state = parse_qs(urlsplit(url).query).get("state", [""])[0]
        listener = CallbackListener(self._port)
        try:
            await listener.__aenter__()
        except OSError as e:
            await self._tokens.forget_client()  # the next sign-in registers another port
            raise SignInFailed(f"cannot listen for the sign-in on 127.0.0.1:{self._port} ({e.strerror or e}); "
                               "sign in again") from None
        self._listener = listener
        self._wait_for_person(True)
        self.shown = True
        self._show(f"MCP server {name} asks you to sign in; open this address in a browser "
                   f"(waiting {self._config.signin_timeout:g} s): {url}")
        if self._settings.open_browser:
            with contextlib.suppress(Exception):  # no browser, a slow one: the address is shown
                await asyncio.wait_for(asyncio.to_thread(webbrowser.open, url), _BROWSER_S)

    async def _callback(self) -> AuthorizationCodeResult:
        listener = self._listener
        if listener is None:
            raise SignInFailed("the sign-in was not started")
        try:
            answer = await listener.wait(self._state, self._config.signin_timeout)
        except SignInFailed as e:
            self.failure = str(e)
            raise
        finally:
            self._listener = None
            self._wait_for_person(False)
        return AuthorizationCodeResult(code=answer.code, state=answer.state, iss=answer.iss)


class _Provider(OAuthClientProvider):
    """The SDK's provider, told when a stored token expires: it records expiry only for a token
    it has just received, so without this one loaded at start-up is never refreshed, only
    refused (and that means a new sign-in). Overriding ``_initialize`` is how the SDK's own
    providers (``client/auth/extensions``) adjust what is loaded."""

    async def _initialize(self) -> None:
        await super()._initialize()
        storage = self.context.storage
        if isinstance(storage, TokenFile) and self.context.current_tokens is not None:
            self.context.token_expiry_time = await storage.expires_at()


def _registered_port(client: Any) -> int | None:
    """The port of a stored registration's loopback redirect (reused: the server knows it)."""
    uris = getattr(client, "redirect_uris", None) or []
    parts = urlsplit(str(uris[0])) if uris else None
    if parts is None or parts.hostname != "127.0.0.1" or parts.path != CALLBACK_PATH:
        return None
    try:
        return parts.port
    except ValueError:
        return None


async def _free_port() -> int:
    async with CallbackListener(0) as probe:
        return probe.port

