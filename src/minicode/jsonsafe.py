"""JSON from untrusted sources (model arguments, server chunks, session files), with bounded nesting.

Python's parser recurses once per nested array or object: a document nested 100,000 levels
deep raises ``RecursionError`` far from where it came in, and a deep enough one can exhaust
the C stack. ``loads`` measures the nesting first with a scan that does not recurse (strings are
skipped by one regex, so brackets inside them do not count) and refuses a document deeper than
``max_depth`` with ``TooDeep`` — a ``ValueError`` the callers already handle as "not valid
JSON" — before the parser sees it.

A ``\\ud800`` escape with no partner parses to a lone surrogate, a string that can be neither
written as UTF-8 (a request body, a terminal, a file) nor shown; it fails far from where it
came in. ``loads(..., repair_surrogates=True)`` (stored data that must stay usable: session
files, the input history) replaces each one with U+FFFD; without it the caller sees them
(tool arguments are refused with a message instead). Pure, stdlib only.
"""

from __future__ import annotations

import json
import re
from typing import Any

__all__ = ["DEFAULT_MAX_DEPTH", "TooDeep", "check_depth", "loads", "loads_prefix", "without_lone_surrogates"]

DEFAULT_MAX_DEPTH = 64
"""How deep arrays/objects may nest: far beyond any real tool call, record or chunk."""

# Compiled at their first use through ``re``'s own cache: most runs never need one.
_TOKEN = r'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}]'
"""A whole JSON string (unrolled so the regex engine does not recurse), or one bracket."""
_SURROGATE_ESCAPE = r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}"
"""An escaped UTF-16 half (\\uD800-\\uDFFF): the only way valid UTF-8 JSON yields a surrogate."""
_SURROGATE_ESCAPE_BYTES = rb"\\u[dD][89a-fA-F][0-9a-fA-F]{2}"
_LONE_SURROGATE = "[\ud800-\udfff]"


class TooDeep(ValueError):
    """The document nests arrays/objects deeper than allowed."""

    def __init__(self, limit: int, position: int) -> None:
        super().__init__(f"JSON nested deeper than {limit} levels (at character {position})")
        self.limit = limit
        self.position = position


def check_depth(text: str | bytes, max_depth: int = DEFAULT_MAX_DEPTH) -> None:
    """Raise ``TooDeep`` when ``text`` nests deeper than ``max_depth``. Linear, no recursion."""
    if isinstance(text, bytes):  # counted undecoded: no UTF-8 sequence holds an ASCII byte
        if text.count(b"[") + text.count(b"{") <= max_depth:
            return  # cannot be deeper than the number of openers
        text = text.decode("utf-8", errors="replace")
    elif text.count("[") + text.count("{") <= max_depth:
        return
    depth = 0
    for match in re.finditer(_TOKEN, text, re.DOTALL):
        token = match.group()
        if token in ("[", "{"):
            depth += 1
            if depth > max_depth:
                raise TooDeep(max_depth, match.start())
        elif token in ("]", "}"):
            depth -= 1


def loads(text: str | bytes, max_depth: int = DEFAULT_MAX_DEPTH, *, repair_surrogates: bool = False,
          **kwargs: Any) -> Any:
    """``json.loads`` after ``check_depth``; ``RecursionError`` is reported as ``TooDeep`` too.
    ``repair_surrogates``: lone surrogates in the result's strings become U+FFFD (a pair of
    escapes is one character already; the walk runs only when the text holds such an escape)."""
    check_depth(text, max_depth)
    try:
        value = json.loads(text, **kwargs)
    except RecursionError as e:  # belt and braces: a limit the scan did not see
        raise TooDeep(max_depth, 0) from e
    if repair_surrogates and _has_surrogate_escape(text):
        value = without_lone_surrogates(value)
    return value


def loads_prefix(text: str, start: int, max_depth: int = DEFAULT_MAX_DEPTH, **kwargs: Any) -> tuple[Any, int]:
    """The JSON value that begins at ``text[start]`` and where it ends (``raw_decode``): for a
    value inside other text (a call a model wrote in prose). The rest of ``text`` is not read,
    but its nesting counts toward ``max_depth`` (the scan cannot know where the value ends).
    ``kwargs`` go to ``json.JSONDecoder`` (``strict``, ``parse_constant``)."""
    check_depth(text[start:], max_depth)
    try:
        return json.JSONDecoder(**kwargs).raw_decode(text, start)
    except RecursionError as e:
        raise TooDeep(max_depth, start) from e


def _has_surrogate_escape(text: str | bytes) -> bool:
    if isinstance(text, str):  # a raw one too (text decoded with surrogateescape)
        return ("\\u" in text and re.search(_SURROGATE_ESCAPE, text) is not None) or (
            not text.isascii() and re.search(_LONE_SURROGATE, text) is not None)
    return b"\\u" in text and re.search(_SURROGATE_ESCAPE_BYTES, text) is not None


def without_lone_surrogates(value: Any) -> Any:
    """``value`` (parsed JSON, or a request body) with every lone surrogate in its strings and
    keys replaced by U+FFFD; the same object when there is none to replace."""
    if isinstance(value, str):
        return value if value.isascii() else re.sub(_LONE_SURROGATE, "\ufffd", value)
    if isinstance(value, list):
        return [without_lone_surrogates(item) for item in value]
    if isinstance(value, dict):
        return {without_lone_surrogates(k): without_lone_surrogates(v) for k, v in value.items()}
    return value


