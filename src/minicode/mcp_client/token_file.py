"""A remote MCP server's OAuth tokens, kept for the next run: the SDK's ``TokenStorage`` as one
private file per server URL, ``~/.minicode/mcp-oauth/<digest of the URL>.json`` (the directory
0700, the file 0600 through ``private_file``), beside the trust records and outside every
workspace: nothing the model runs there reads it, and no session file, trace or log holds it.

It holds the tokens, when the access token expires (an absolute time: the SDK only knows
``expires_in`` of a response it has just received, so a token loaded at start-up would never
be refreshed, only refused), and the client registration (reused: it names the loopback
callback's port). A file that cannot be read, or holds what the SDK refuses, is no tokens:
the next request signs in again. Without an absolute ``$HOME`` nothing is kept (a sign-in
each run). Imported with the SDK (``connect``).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import time
from pathlib import Path
from typing import Any

from mcp.shared.auth import OAuthClientInformationFull, OAuthToken
from pydantic import ValidationError

from minicode import jsonsafe
from minicode.mcp_client.callback import SignInFailed
from minicode.private_file import write_private

__all__ = ["TokenFile", "token_path"]

_DIR_MODE = 0o700


def token_path(home: str | None, url: str) -> Path | None:
    """Where ``url``'s tokens are kept, or None without an absolute home to keep them in."""
    if not home or not Path(home).is_absolute():
        return None
    key = hashlib.sha256(url.encode("utf-8", "surrogateescape")).hexdigest()[:32]
    return Path(home) / ".minicode" / "mcp-oauth" / f"{key}.json"


class TokenFile:
    """``TokenStorage`` for one server (see the module docstring); a ``path`` of None keeps the
    tokens of this run in memory only."""

    def __init__(self, path: Path | None, url: str) -> None:
        self.path = path
        self._url = url
        self._data: dict[str, Any] | None = None

    async def _read(self) -> dict[str, Any]:
        if self._data is None:
            self._data = await asyncio.to_thread(self._load)
        return self._data

    def _load(self) -> dict[str, Any]:
        if self.path is None:
            return {}
        try:
            data = jsonsafe.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        # a file for another URL (a digest collision, a copied file) is not this server's
        return data if isinstance(data, dict) and data.get("url") == self._url else {}

    async def _write(self, key: str, value: dict[str, Any]) -> None:
        data = dict(await self._read())
        data.update({"url": self._url, key: value})
        self._data = data
        if self.path is not None:
            await asyncio.to_thread(self._save, data)

    def _save(self, data: dict[str, Any]) -> None:
        assert self.path is not None
        try:
            for directory in (self.path.parent.parent, self.path.parent):  # ~/.minicode, then its mcp-oauth
                directory.mkdir(mode=_DIR_MODE, exist_ok=True)
            write_private(self.path, json.dumps(data).encode("utf-8") + b"\n")
        except OSError as e:  # a sign-in that cannot be kept is not half done: it fails, and says where
            raise SignInFailed(f"cannot keep the sign-in in {self.path}: {e.strerror or e}") from None

    # --- the SDK's TokenStorage -------------------------------------------------------------

    async def get_tokens(self) -> OAuthToken | None:
        stored = (await self._read()).get("tokens")
        try:
            return OAuthToken.model_validate(stored) if isinstance(stored, dict) else None
        except ValidationError:
            return None

    async def set_tokens(self, tokens: OAuthToken) -> None:
        record = tokens.model_dump(mode="json", exclude_none=True)
        if tokens.expires_in is not None:
            record["expires_at"] = time.time() + tokens.expires_in
        await self._write("tokens", record)

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        stored = (await self._read()).get("client")
        try:
            return OAuthClientInformationFull.model_validate(stored) if isinstance(stored, dict) else None
        except ValidationError:
            return None

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        await self._write("client", client_info.model_dump(mode="json", exclude_none=True))

    # --- minicode's own ----------------------------------------------------------------------

    async def expires_at(self) -> float | None:
        """When the stored access token expires (seconds since the epoch), if the server said."""
        stored = (await self._read()).get("tokens")
        when = stored.get("expires_at") if isinstance(stored, dict) else None
        return float(when) if isinstance(when, (int, float)) and not isinstance(when, bool) else None

    async def forget_client(self) -> None:
        """Drop the registration (its callback port could not be had): the next sign-in registers anew."""
        await self._forget("client")

    async def forget_tokens(self) -> None:
        """Drop the tokens (``--mcp-login``: a sign-in anew); the registration stays."""
        await self._forget("tokens")

    async def _forget(self, key: str) -> None:
        data = dict(await self._read())
        if data.pop(key, None) is not None:
            self._data = data
            if self.path is not None:
                await asyncio.to_thread(self._save, data)
