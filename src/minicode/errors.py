"""The one error hierarchy of minicode.

    MinicodeError
     ├── ConfigError        bad configuration or usage; the CLI exits 2
     ├── APIError           the model endpoint failed (.status/.type/.code, .retryable, .context_overflow)
     ├── ProtocolError      a local rule of the wire protocol was broken (invalid history, bad stream)
     ├── ToolError          a tool could not do what it was asked; becomes an error tool result
     ├── SessionError       a session file cannot be created, loaded or resumed
     └── MemoryFileError    MiniCode.md or a memory detail file breaks the limits

Foreign errors are wrapped at the boundary with ``raise X(...) from e`` so the cause is kept.
Messages never contain secrets or raw configuration lines.
"""

from __future__ import annotations

__all__ = [
    "APIError",
    "ConfigError",
    "MemoryFileError",
    "MinicodeError",
    "ProtocolError",
    "SessionError",
    "ToolError",
]

_RETRYABLE_STATUSES = frozenset({408, 409, 429, 500, 502, 503, 504})


class MinicodeError(Exception):
    """Root of every error minicode raises on purpose."""


class ConfigError(MinicodeError):
    """Configuration or usage error: the message names the file and key; exit code 2."""

    exit_code = 2


class APIError(MinicodeError):
    """An error reported by (or while talking to) the model endpoint.

    ``status`` is the HTTP status (``None`` for network errors and in-stream errors without
    one). ``context_overflow`` marks a request that did not fit the model's context window;
    ``quota_exhausted`` marks a 429 that will not clear by waiting.
    """

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        type: str | None = None,
        code: str | None = None,
        context_overflow: bool = False,
        quota_exhausted: bool = False,
        network: bool = False,
        lasting: bool = False,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.status = status
        self.type = type
        self.code = code
        self.context_overflow = context_overflow
        self.quota_exhausted = quota_exhausted
        self.network = network
        self.lasting = lasting
        """A network failure retrying cannot fix (no such host, a failed TLS handshake)."""

    @property
    def retryable(self) -> bool:
        """Whether sending the same request again may succeed (before any byte was consumed)."""
        if self.quota_exhausted or self.context_overflow or self.lasting:
            return False
        if self.network:
            return True
        return self.status in _RETRYABLE_STATUSES

    def __str__(self) -> str:
        prefix = f"HTTP {self.status}: " if self.status is not None else ""
        return f"{prefix}{self.message}"


class ProtocolError(MinicodeError):
    """A wire-protocol rule was broken locally (invalid history) or by the server (bad stream)."""


class ToolError(MinicodeError):
    """A tool could not do what it was asked. The registry turns it into an error tool result."""


class SessionError(MinicodeError):
    """A session cannot be created, loaded or resumed. ``exit_code`` 2 when it is the user's input."""

    def __init__(self, message: str, *, exit_code: int = 1) -> None:
        super().__init__(message)
        self.exit_code = exit_code


class MemoryFileError(MinicodeError):
    """MiniCode.md or a `.minicode/memory/*.md` file is not valid UTF-8, has a NUL or is too large."""
