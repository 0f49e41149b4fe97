"""Making text valid Unicode before it travels: file names, bytes from stdin or argv.

Python represents undecodable bytes as lone surrogates (``surrogateescape``: os.listdir,
sys.argv); such strings cannot be encoded as UTF-8 and crash JSON files, HTTP bodies and
terminals later, far from where they came in. ``scrub`` turns every lone surrogate into
U+FFFD, so what is stored and sent is always valid UTF-8.
"""

from __future__ import annotations

__all__ = ["scrub"]


def scrub(text: str) -> str:
    """``text`` with undecodable bytes / lone surrogates replaced by U+FFFD (same text if clean)."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        pass
    try:
        # surrogateescape'd bytes (U+DC80..U+DCFF) back to bytes, then decoded leniently
        return text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    except UnicodeEncodeError:
        # other lone surrogates (e.g. "\ud800" from JSON) can't be bytes: replace each one
        return "".join("\ufffd" if 0xD800 <= ord(c) <= 0xDFFF else c for c in text)
