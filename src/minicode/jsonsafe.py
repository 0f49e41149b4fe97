"""JSON from untrusted sources (model arguments, server chunks, session files), with bounded nesting.

Python's parser recurses once per nested array or object: a document nested 100,000 levels
deep raises ``RecursionError`` far from where it came in, and a deep enough one can exhaust
the C stack. ``loads`` measures the nesting first with a scan that does not recurse (strings are
skipped by one regex, so brackets inside them do not count) and refuses a document deeper than
``max_depth`` with ``TooDeep`` — a ``ValueError`` the callers already handle as "not valid
JSON" — before the parser sees it. Pure, stdlib only.
"""

from __future__ import annotations

import json
import re
from typing import Any, Callable

__all__ = ["DEFAULT_MAX_DEPTH", "TooDeep", "check_depth", "loads"]

DEFAULT_MAX_DEPTH = 64
"""How deep arrays/objects may nest: far beyond any real tool call, record or chunk."""

# A whole JSON string (unrolled so the regex engine does not recurse), or one bracket.
_TOKEN = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}]', re.DOTALL)


class TooDeep(ValueError):
    """The document nests arrays/objects deeper than allowed."""

    def __init__(self, limit: int, position: int) -> None:
        super().__init__(f"JSON nested deeper than {limit} levels (at character {position})")
        self.limit = limit
        self.position = position


def check_depth(text: str | bytes, max_depth: int = DEFAULT_MAX_DEPTH) -> None:
    """Raise ``TooDeep`` when ``text`` nests deeper than ``max_depth``. Linear, no recursion."""
    if isinstance(text, bytes):
        text = text.decode("utf-8", errors="replace")
    if text.count("[") + text.count("{") <= max_depth:
        return  # cannot be deeper than the number of openers
    depth = 0
    for match in _TOKEN.finditer(text):
        token = match.group()
        if token in ("[", "{"):
            depth += 1
            if depth > max_depth:
                raise TooDeep(max_depth, match.start())
        elif token in ("]", "}"):
            depth -= 1


def loads(text: str | bytes, max_depth: int = DEFAULT_MAX_DEPTH, **kwargs: Any) -> Any:
    """``json.loads`` after ``check_depth``; ``RecursionError`` is reported as ``TooDeep`` too."""
    check_depth(text, max_depth)
    try:
        return json.loads(text, **kwargs)
    except RecursionError as e:  # belt and braces: a limit the scan did not see
        raise TooDeep(max_depth, 0) from e


