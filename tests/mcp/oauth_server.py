"""A Streamable HTTP MCP server that requires OAuth, for the tests: its own authorization server
built with the SDK's server-side auth support (``mcp.server.auth``: metadata, dynamic client
registration, /authorize, /token, protected resource metadata, bearer tokens), all in memory.

``python oauth_server.py PORT``. Consent is given at once: ``/authorize`` redirects straight to
the client's callback with a code (a test follows the authorization URL with a plain GET).
``MCP_TEST_OAUTH`` changes that: ``deny`` redirects with ``error=access_denied``; ``token500``
makes the token endpoint fail (HTTP 500); ``short`` issues access tokens that expire in 1 s
(so the client refreshes them). Tools: ``whoami`` (the client id of the token used),
``revoke`` (revokes every token: the next request is refused with 401). Every access token
issued is appended to ``MCP_TEST_TOKENS`` (a file) so a test can look for it elsewhere.
"""

from __future__ import annotations

import os
import secrets
import sys
import time

from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.auth.provider import (
    AccessToken,
    AuthorizationCode,
    AuthorizationParams,
    RefreshToken,
    construct_redirect_uri,
)
from mcp.server.auth.settings import AuthSettings, ClientRegistrationOptions
from mcp.server.mcpserver import MCPServer
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken

MODE = os.environ.get("MCP_TEST_OAUTH", "")
PORT = int(sys.argv[1])
BASE = f"http://127.0.0.1:{PORT}"


class MemoryProvider:
    def __init__(self) -> None:
        self.clients: dict[str, OAuthClientInformationFull] = {}
        self.codes: dict[str, AuthorizationCode] = {}
        self.access: dict[str, AccessToken] = {}
        self.refresh: dict[str, RefreshToken] = {}

    async def get_client(self, client_id: str) -> OAuthClientInformationFull | None:
        return self.clients.get(client_id)

    async def register_client(self, client_info: OAuthClientInformationFull) -> None:
        assert client_info.client_id is not None
        self.clients[client_info.client_id] = client_info

    async def authorize(self, client: OAuthClientInformationFull, params: AuthorizationParams) -> str:
        if MODE == "deny":
            return construct_redirect_uri(str(params.redirect_uri), error="access_denied",
                                          error_description="the user said no", state=params.state)
        code = secrets.token_urlsafe(24)
        self.codes[code] = AuthorizationCode(
            code=code, scopes=params.scopes or [], expires_at=time.time() + 300, client_id=client.client_id or "",
            code_challenge=params.code_challenge, redirect_uri=params.redirect_uri,
            redirect_uri_provided_explicitly=params.redirect_uri_provided_explicitly, resource=params.resource)
        return construct_redirect_uri(str(params.redirect_uri), code=code, state=params.state)

    async def load_authorization_code(self, client: OAuthClientInformationFull, authorization_code: str) -> AuthorizationCode | None:
        return self.codes.get(authorization_code)

    async def exchange_authorization_code(self, client: OAuthClientInformationFull, authorization_code: AuthorizationCode) -> OAuthToken:
        if MODE == "token500":
            raise RuntimeError("the token endpoint is broken (MCP_TEST_OAUTH=token500)")
        self.codes.pop(authorization_code.code, None)
        return self._issue(client.client_id or "", authorization_code.scopes, authorization_code.resource)

    async def load_refresh_token(self, client: OAuthClientInformationFull, refresh_token: str) -> RefreshToken | None:
        return self.refresh.get(refresh_token)

    async def exchange_refresh_token(self, client: OAuthClientInformationFull, refresh_token: RefreshToken, scopes: list[str]) -> OAuthToken:
        self.refresh.pop(refresh_token.token, None)
        return self._issue(refresh_token.client_id, scopes or refresh_token.scopes, refresh_token.resource)

    async def load_access_token(self, token: str) -> AccessToken | None:
        found = self.access.get(token)
        if found is None or (found.expires_at is not None and found.expires_at < time.time()):
            return None
        return found

    async def revoke_token(self, token: AccessToken | RefreshToken) -> None:
        self.access.clear()
        self.refresh.clear()

    def _issue(self, client_id: str, scopes: list[str], resource: str | None) -> OAuthToken:
        lifetime = 1 if MODE == "short" else 3600
        access, refresh = "at-" + secrets.token_urlsafe(24), "rt-" + secrets.token_urlsafe(24)
        self.access[access] = AccessToken(token=access, client_id=client_id, scopes=scopes,
                                          expires_at=int(time.time()) + lifetime, resource=resource)
        self.refresh[refresh] = RefreshToken(token=refresh, client_id=client_id, scopes=scopes, resource=resource)
        issued = os.environ.get("MCP_TEST_TOKENS")
        if issued:
            with open(issued, "a") as f:
                f.write(f"{access}\n{refresh}\n")
        return OAuthToken(access_token=access, token_type="Bearer", expires_in=lifetime, refresh_token=refresh,
                          scope=" ".join(scopes) or None)


provider = MemoryProvider()
server = MCPServer(
    "minicode-oauth-test", auth_server_provider=provider,
    auth=AuthSettings(issuer_url=BASE, resource_server_url=f"{BASE}/mcp", validate_token_resource=False,
                      client_registration_options=ClientRegistrationOptions(enabled=True)),
)


@server.tool()
def whoami() -> str:
    """The client id of the token this call carried."""
    token = get_access_token()
    return f"client {token.client_id if token else '(none)'}"


@server.tool()
async def revoke() -> str:
    """Revoke every token: the next request is refused."""
    await provider.revoke_token(AccessToken(token="", client_id="", scopes=[]))
    return "revoked"


if __name__ == "__main__":
    server.run("streamable-http", host="127.0.0.1", port=PORT)
