"""Turning what a server said about a failure into one ``APIError``, pure.

Owns the error-body shapes (OpenAI's nested ``{"error": {...}}``, a flat object, a bare
string, HTML or plain text), the recognition of context-window overflow and of an exhausted
quota, and ``Retry-After`` parsing. Used by ``provider/openai.py`` for HTTP errors and for
errors that arrive inside a stream. Imports only the standard library and ``minicode.errors``.
"""

from __future__ import annotations

import re
from typing import Any

from minicode import jsonsafe
from minicode.errors import APIError
from dataclasses import dataclass

__all__ = [
    "ErrorInfo",
    "api_error",
    "error_info_from_body",
    "error_info_from_object",
    "excerpt",
    "is_context_overflow",
    "is_quota_exhausted",
    "parse_retry_after",
    "parse_retry_after_ms",
]

EXCERPT_CHARS = 200
"""A non-JSON error body is shown as at most this many characters, whitespace collapsed."""
MESSAGE_CHARS = 1000
"""A server's error message is cut here: some echo large parts of the request."""

_OVERFLOW_CODES = frozenset({"context_length_exceeded", "exceed_context_size_error", "context_window_exceeded"})
_OVERFLOW_TEXT = (  # patterns are compiled at their first use (re caches them): errors are rare
    r"maximum context length"  # OpenAI, vLLM, DeepSeek, Mistral, Ollama
    r"|context[_ ]length[_ ]exceeded"
    r"|exceeds? (?:the )?(?:available |maximum |max )?context (?:size|window|length)"  # llama.cpp, Ollama
    r"|context size has been exceeded"  # llama.cpp
    r"|context window (?:is )?(?:exceeded|too small)"
    r"|prompt (?:is )?too long"  # Ollama, Anthropic-style gateways
    r"|reduce the length of the (?:messages|input)"  # OpenAI, Groq, DeepSeek
    r"|too large for model with \d+ maximum context length"  # Mistral
)
_QUOTA_CODES = frozenset({"insufficient_quota", "billing_hard_limit_reached", "exceeded_current_quota_error"})
_QUOTA_TEXT = (
    r"insufficient[_ ](?:quota|balance|credits?|funds)"
    r"|exceeded your current quota"
    r"|(?:quota|balance|credits?) (?:has been |is )?(?:exhausted|depleted|used up)"
    r"|billing hard limit"
)
_TAG = r"<[^>]*>"
_HTML = r"\s*(<!doctype html|<html|<head|<body|<!--|<\?xml)"
_TITLE = r"<(title|h1)[^>]*>(.*?)</(?:title|h1)>"
WEB_PAGE = "web_page"
"""``ErrorInfo.type`` of an error body that was an HTML page."""
NOT_THE_API = (404, 405, 501)
"""Statuses that, without an API error body, mean the URL does not serve the API at all."""
_PATH_HINT = ("; is [model].base_url the API's URL? This path does not serve an OpenAI-compatible API "
              "(most servers want the URL ending in /v1)")
_SPACE = r"\s+"
MAX_RETRY_AFTER_SECONDS = 60.0
"""A longer ``Retry-After`` is clamped: waiting minutes inside one request helps nobody."""


@dataclass(frozen=True, slots=True)
class ErrorInfo:
    """The fields of an error body, before deciding what kind of ``APIError`` it is."""

    message: str
    type: str | None = None
    code: str | None = None
    param: str | None = None


def error_info_from_object(obj: object) -> ErrorInfo | None:
    """Read an error out of parsed JSON (nested, flat or ``{"error": "text"}``); ``None`` if absent."""
    if isinstance(obj, list) and obj and isinstance(obj[0], dict):
        obj = obj[0]  # a few gateways wrap the error object in a list
    if not isinstance(obj, dict):
        return None
    inner = obj.get("error")
    if isinstance(inner, dict):
        return _from_flat(inner) or ErrorInfo(message="unspecified error")
    if isinstance(inner, str) and inner:
        return ErrorInfo(message=_clip(inner), type=_text(obj.get("type")), code=_text(obj.get("code")))
    if obj.get("object") == "error" or "message" in obj or "detail" in obj:
        return _from_flat(obj) or ErrorInfo(message="unspecified error")
    return None


def _from_flat(obj: dict[str, Any]) -> ErrorInfo | None:
    message = obj.get("message")
    if not isinstance(message, str) or not message:
        message = _detail_text(obj.get("detail")) or _text(obj.get("msg")) or ""
    if not message:
        return None
    return ErrorInfo(
        message=_clip(message),
        type=_text(obj.get("type")),
        code=_text(obj.get("code")),
        param=_text(obj.get("param")),
    )


def _detail_text(detail: object) -> str | None:
    # FastAPI-style servers (vLLM's validation errors) answer {"detail": [{"loc": [...], "msg": ...}]}.
    if isinstance(detail, str):
        return detail
    if isinstance(detail, list):
        parts = []
        for item in detail:
            if isinstance(item, dict) and isinstance(item.get("msg"), str):
                loc = item.get("loc")
                where = ".".join(str(p) for p in loc) if isinstance(loc, list) else ""
                parts.append(f"{where}: {item['msg']}" if where else item["msg"])
        return "; ".join(parts) or None
    return None


def _text(value: object) -> str | None:
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, (str, int)):
        return str(value) or None
    return None


def _clip(text: str) -> str:
    text = text.strip()
    return text if len(text) <= MESSAGE_CHARS else text[: MESSAGE_CHARS - 1] + "…"


def error_info_from_body(body: bytes, reason: str = "") -> ErrorInfo:
    """The error described by an HTTP error body of any shape."""
    text = body.decode("utf-8", errors="replace")
    try:
        parsed = jsonsafe.loads(text)
    except ValueError:
        parsed = None
    info = error_info_from_object(parsed)
    if info is not None:
        return info
    if re.match(_HTML, text, re.IGNORECASE):  # a web server's error page, not an API's answer: its title says enough
        found = re.search(_TITLE, text, re.IGNORECASE | re.DOTALL)
        title = _squeezed(found.group(2))[:EXCERPT_CHARS] if found else ""
        return ErrorInfo(message=f"{title or reason or 'error'} (the server answered with a web page, "
                                 "not an API error)", type=WEB_PAGE)
    excerpt = _squeezed(text)
    if len(excerpt) > EXCERPT_CHARS:
        excerpt = excerpt[: EXCERPT_CHARS - 1] + "…"
    return ErrorInfo(message=excerpt or reason or "empty error body")


def not_a_stream(head: bytes) -> APIError:
    """A successful answer to a streaming request that held no server-sent event at all:
    a web page or some other text where the API was expected (``head``: its first bytes)."""
    info = error_info_from_body(head)
    what = "a web page" + (f" ({info.message.split(' (the server answered')[0]})" if info.message else "") \
        if info.type == WEB_PAGE else f"text that is not an event stream ({excerpt(head)})"
    return APIError(f"the server answered with {what}, not the model's streamed answer; is [model].base_url "
                    "the API's URL? (most servers want the URL ending in /v1)")


def excerpt(raw: bytes, limit: int = 80) -> str:
    """A short one-line quote of bytes a server sent, for an error message."""
    text = " ".join(raw.decode("utf-8", errors="replace").split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def is_context_overflow(info: ErrorInfo) -> bool:
    """Whether the server said the request does not fit the model's context window."""
    if info.code in _OVERFLOW_CODES or info.type in _OVERFLOW_CODES:
        return True
    return re.search(_OVERFLOW_TEXT, info.message, re.IGNORECASE) is not None


def is_quota_exhausted(info: ErrorInfo) -> bool:
    """Whether a 429 means "out of money/quota" rather than "slow down"."""
    if info.code in _QUOTA_CODES or info.type in _QUOTA_CODES:
        return True
    return re.search(_QUOTA_TEXT, info.message, re.IGNORECASE) is not None


def api_error(info: ErrorInfo, *, status: int | None) -> APIError:
    """The one ``APIError`` for an error body (HTTP or in-stream)."""
    overflow = is_context_overflow(info)
    unstructured = info.type in (None, WEB_PAGE) and info.code is None
    hint = _PATH_HINT if status in NOT_THE_API and unstructured else ""
    return APIError(
        info.message + hint,
        status=status,
        type=info.type,
        code=info.code,
        context_overflow=overflow,
        quota_exhausted=status == 429 and not overflow and is_quota_exhausted(info),
    )


def parse_retry_after(value: str | None, *, now: float) -> float | None:
    """Seconds to wait from a ``Retry-After`` header (delta-seconds or HTTP date), clamped to
    ``[0, MAX_RETRY_AFTER_SECONDS]``; ``None`` if absent or unparseable."""
    if not value:
        return None
    value = value.strip()
    seconds: float | None
    try:
        seconds = float(value)
    except ValueError:
        from datetime import timezone  # an HTTP date is rare: its parser loads here
        from email.utils import parsedate_to_datetime

        try:
            when = parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        if when.tzinfo is None:
            when = when.replace(tzinfo=timezone.utc)
        seconds = when.timestamp() - now
    if seconds != seconds:  # NaN
        return None
    return min(max(seconds, 0.0), MAX_RETRY_AFTER_SECONDS)


def parse_retry_after_ms(value: str | None) -> float | None:
    """Seconds from OpenAI's ``retry-after-ms`` header, clamped like ``Retry-After``."""
    try:
        seconds = float(value) / 1000 if value else None
    except ValueError:
        return None
    if seconds is None or seconds != seconds:
        return None
    return min(max(seconds, 0.0), MAX_RETRY_AFTER_SECONDS)


def _squeezed(text: str) -> str:
    """``text`` without markup tags, each run of whitespace one space."""
    return re.sub(_SPACE, " ", re.sub(_TAG, " ", text)).strip()
