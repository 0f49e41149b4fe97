"""The plain TOML of a configuration file, read without importing ``tomllib``.

``tomllib`` (with the ``typing``, ``datetime`` and ``string`` it imports) costs ~42 M
instructions of every start — a third of the way to the first full-screen frame — to read a
file that is nearly always a few tables of ``key = "string"`` lines. ``loads`` reads exactly
that subset and returns what ``tomllib.loads`` returns for it: ``[table]`` headers with bare
names, ``key = value`` lines with bare keys, values that are basic strings without escapes,
literal strings, decimal integers, ``true``/``false`` and one-line arrays of such strings,
blank lines and comments. Anything else — escapes, multi-line strings or arrays, floats,
dates, inline tables, dotted or quoted keys, array tables, a duplicate key or table, a
carriage return, a control character, a byte-order mark — returns None, and ``tomlfile``
asks ``tomllib``, which reads it or reports the error. So a file this accepts reads the same
as with ``tomllib`` (``tests/test_toml_quick.py`` compares the two over thousands of files,
valid and not); a file it refuses costs the import, nothing else.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = ["loads"]

_BARE = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")
_BLANK = " \t"
_MAX_DIGITS = 18
"""Longer integers go to tomllib (TOML integers are 64-bit)."""


class _Refused(Exception):
    """Not in the subset: tomllib decides."""


def loads(text: str) -> dict[str, Any] | None:
    """``tomllib.loads(text)`` for the subset in the module doc, else None."""
    if any((c < " " and c not in "\t\n") or c == "\x7f" or c == "\ufeff" for c in text):
        return None
    root: dict[str, Any] = {}
    table = root
    try:
        for line in text.split("\n"):
            line = line.strip(_BLANK)
            if not line or line[0] == "#":
                continue
            if line[0] == "[":
                table = _open_table(root, line)
            else:
                key, value = _pair(line)
                if key in table:
                    return None
                table[key] = value
    except _Refused:
        return None
    return root


def _open_table(root: dict[str, Any], line: str) -> dict[str, Any]:
    end = line.find("]")
    name = line[1:end]
    if end < 0 or not _is_bare(name) or not _rest_is_comment(line, end + 1) or name in root:
        raise _Refused
    table: dict[str, Any] = {}
    root[name] = table
    return table


def _pair(line: str) -> tuple[str, Any]:
    key, equals, rest = line.partition("=")
    key = key.strip(_BLANK)
    if not equals or not _is_bare(key):
        raise _Refused
    value, at = _value(rest, _skip_blank(rest, 0))
    if not _rest_is_comment(rest, at):
        raise _Refused
    return key, value


def _value(text: str, at: int) -> tuple[Any, int]:
    """The value starting at ``at`` and where it ends."""
    if text.startswith(('"', "'"), at):
        return _string(text, at)
    if text.startswith("[", at):
        return _array(text, at)
    end = at
    while end < len(text) and text[end] not in " \t#,]":
        end += 1
    word = text[at:end]
    if word in ("true", "false"):
        return word == "true", end
    digits = word[1:] if word[:1] in "+-" else word
    if not digits.isascii() or not digits.isdigit() or len(digits) > _MAX_DIGITS or (digits[0] == "0" and digits != "0"):
        raise _Refused
    return int(word), end


def _string(text: str, at: int) -> tuple[str, int]:
    quote = text[at]
    if text.startswith(quote * 3, at):  # a multi-line string
        raise _Refused
    end = text.find(quote, at + 1)
    content = text[at + 1:end]
    if end < 0 or (quote == '"' and "\\" in content):
        raise _Refused
    return content, end + 1


def _array(text: str, at: int) -> tuple[list[str], int]:
    items: list[str] = []
    at = _skip_blank(text, at + 1)
    while not text.startswith("]", at):
        if not text.startswith(('"', "'"), at):
            raise _Refused  # only strings; anything else (or the array going on below) to tomllib
        item, at = _string(text, at)
        items.append(item)
        at = _skip_blank(text, at)
        if text.startswith(",", at):
            at = _skip_blank(text, at + 1)
        elif not text.startswith("]", at):
            raise _Refused
    return items, at + 1


def _skip_blank(text: str, at: int) -> int:
    while at < len(text) and text[at] in _BLANK:
        at += 1
    return at


def _rest_is_comment(text: str, at: int) -> bool:
    at = _skip_blank(text, at)
    return at == len(text) or text[at] == "#"


def _is_bare(name: str) -> bool:
    return bool(name) and all(c in _BARE for c in name)
