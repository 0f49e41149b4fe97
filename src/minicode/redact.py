"""The one secret redaction every outbound text goes through (errors, traces, tool output).

Owns: deciding which strings count as secrets worth hiding and replacing them in free text.
Pure and stdlib-only, so the provider, the telemetry and the tools can all share it without
importing each other.
"""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["MIN_SECRET_LENGTH", "REDACTED", "contains_secret", "redact", "significant_secrets"]

REDACTED = "[redacted]"

MIN_SECRET_LENGTH = 8
"""Shorter strings are not treated as secrets.

Real API keys are long; a short "secret" (a placeholder like ``k`` or ``test``, an empty
string from an unset variable) occurs by chance in ordinary text, and replacing it would
mangle paths, code and model output while protecting nothing.
"""


def significant_secrets(secrets: Iterable[str]) -> tuple[str, ...]:
    """The distinct secrets worth hiding, longest first.

    Longest first so that a secret containing another one is replaced whole, rather than
    leaving its remainder visible around a redaction of the shorter one.
    """
    return tuple(sorted({s for s in secrets if len(s) >= MIN_SECRET_LENGTH}, key=len, reverse=True))


def redact(text: str, secrets: Iterable[str]) -> str:
    """``text`` with every occurrence of each significant secret replaced by ``[redacted]``."""
    for secret in significant_secrets(secrets):
        text = text.replace(secret, REDACTED)
    return text


def contains_secret(text: str, secrets: Iterable[str]) -> bool:
    """Whether ``text`` contains any significant secret (for values dropped, not rewritten)."""
    return any(secret in text for secret in significant_secrets(secrets))
