"""The call blocks of a model's text answer: where they are and the JSON values they hold.

``scan`` splits an answer (``agent.text_calls`` decides whether it is a call) into the prose
around its blocks and the blocks' values: a fence with no language or a JSON-ish one whose
content is JSON or call elements; a ``<tool_call>``/``<tools>``/``<tool_calls>`` element (its
closing tag may be missing at the end); a ``<function name="…" arguments='{…}'/>`` element (or
with the arguments as its body); a JSON value starting a line or following a colon. A fence
of code, or a block holding anything but those, raises ``NotCalls``: the answer is showing
something. A line that opens with ``{`` but is no JSON is prose.

Repairs, each seen from Qwen2.5-Coder-1.5B: JSON strings may hold raw newlines
(``strict=False``, a file's lines written out); an object in one extra pair of braces
(``{{…}}}``) is the object; in a fence or tag, whose end is known before parsing, single-quoted
strings are read as JSON strings (``"content": '{"port": 9000}'``). Other Python literals
(``True``, ``None``, tuples) are not read: that would need a second, far wider parser
(``ast.literal_eval``). Pure; JSON through ``minicode.jsonsafe`` (bounded nesting); hostile
text (huge, deeply nested, endless openers) ends in ``NotCalls``, never another error.
"""

from __future__ import annotations

import json
import re
from typing import Any

from minicode.jsonsafe import loads_prefix

__all__ = ["MAX_VALUES", "NotCalls", "scan"]

MAX_VALUES = 16
"""More values than this in one answer is not a batch a model means."""

_MAX_OPENERS = 64
"""Openers tried (lines starting with ``{``/``[`` that may be JSON) before giving up."""
_MAX_NESTING = 3
"""How deep call elements may wrap each other (a fence in ``<tool_call>`` in a fence)."""
_JSON_FENCES = frozenset({"", "json", "json5", "jsonc", "tool_call", "tool_calls", "tool", "tools", "xml"})

_OPENER = re.compile(
    r"^[ \t]*(?P<fence>`{3,}|~{3,})"
    r"|<(?P<tag>tool_calls?|tools|function_call|json|response)\s*>"
    r"|(?P<function><function)(?=[\s/>])"
    r"|(?:^|(?<=:))[ \t]*(?P<bare>[{\[])",
    re.MULTILINE | re.IGNORECASE,
)
_INNER = re.compile(
    r"(?P<fence>`{3,}|~{3,})|<(?P<tag>tool_calls?|tools|function_call|json|response)\s*>"
    r"|(?P<function><function)(?=[\s/>])",
    re.IGNORECASE,
)
"""The same elements inside a block, where no line start is needed."""
_LANGUAGE = re.compile(r"[ \t]*([\w.+-]*)[^\n`{\[<]*\n?")
_SPACE = re.compile(r"\s*")
_ATTRIBUTE = re.compile(r"\s+([A-Za-z_][\w-]*)\s*=\s*([\"'])")
_ELEMENT_END = re.compile(r"\s*(/?)>")
_QUOTE = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|\'', re.DOTALL)
"""A whole JSON string, or a single quote outside one."""
_SINGLE = re.compile(r"'((?:[^'\\]|\\.)*)'", re.DOTALL)
_BARE_DOUBLE = re.compile(r'(?<!\\)((?:\\\\)*)"')
_TAG_END = re.compile(r"</\s*(?:tool_calls?|tools|function_call|json|response)\s*>", re.IGNORECASE)
_TRIPLE = re.compile(r'"""(.*?)"""', re.DOTALL)
"""A Python triple-quoted string, as the 1.5B model writes a file's content inside its JSON."""
_FUNCTION_END = re.compile(r"\s*</\s*function\s*>", re.IGNORECASE)


class NotCalls(Exception):
    """The answer quotes something other than calls (or too much): it is text."""


class _NotJson(Exception):
    """A bare opener that does not start JSON: it is prose."""


def scan(text: str) -> tuple[list[str], list[Any]]:
    """(the prose pieces around the blocks — one more than the blocks —, the blocks' JSON
    values in order); raises ``NotCalls``."""
    prose: list[str] = []
    values: list[Any] = []
    kept = searched = 0
    tried = 0
    while (opener := _OPENER.search(text, searched)) is not None:
        if opener.group("fence") and not text[opener.end() :].strip():
            break  # a closing fence left over after a bare call ends the reply: prose, not a block
        try:
            found, end = _element(text, opener, 0)
        except _NotJson:
            tried += 1
            if tried > _MAX_OPENERS:
                raise NotCalls from None
            searched = opener.end()
            continue
        prose.append(text[kept : opener.start()])
        values += found
        if len(values) > MAX_VALUES:
            raise NotCalls
        kept = searched = end
    prose.append(text[kept:])
    return prose, values


def _element(text: str, opener: re.Match[str], depth: int) -> tuple[list[Any], int]:
    """The values of the block ``opener`` starts and where it ends."""
    if depth > _MAX_NESTING:
        raise NotCalls
    if opener.group("fence"):
        return _fence(text, opener, depth)
    if opener.group("tag"):
        return _tag(text, opener, depth)
    if opener.group("function"):
        return _function(text, opener.end())
    start = opener.start("bare")  # only the top level finds bare JSON by its opener
    try:
        value, end = _value_at(text, start)
    except ValueError:
        raise _NotJson from None
    return [value], end


def _fence(text: str, opener: re.Match[str], depth: int) -> tuple[list[Any], int]:
    """A fenced block: calls when its language is JSON-ish and its content call elements."""
    fence = opener.group("fence")
    language = _LANGUAGE.match(text, opener.end())
    assert language is not None  # every part of it may be empty
    closing = re.compile(rf"[ \t]*{re.escape(fence[0])}{{{len(fence)},}}")
    if language.group(1).lower() not in _JSON_FENCES:
        raise NotCalls  # code: shown, not called
    try:
        values, end = _items(text, language.end(), depth, fence)
    except NotCalls:
        fence_line = re.compile(rf"^[ \t]*{re.escape(fence[0])}{{{len(fence)},}}[ \t]*$", re.MULTILINE)
        values, end = _requoted_items(text, language.end(), fence_line)
    end = _skip_space(text, end)
    if end == len(text):
        return values, end  # the reply ended before its fence closed
    if (closed := closing.match(text, end)) is None:
        raise NotCalls  # more than calls inside
    return values, closed.end()


def _tag(text: str, opener: re.Match[str], depth: int) -> tuple[list[Any], int]:
    """``<tool_call>…</tool_call>`` (or tools, tool_calls, function_call); the closing tag may
    be missing at the end of the reply."""
    try:
        values, end = _items(text, opener.end(), depth)
    except NotCalls:
        values, end = _requoted_items(text, opener.end(), _TAG_END)
    end = _skip_space(text, end)
    if end == len(text):
        return values, end
    if (closed := _TAG_END.match(text, end)) is None:
        raise NotCalls
    return values, closed.end()


def _items(text: str, pos: int, depth: int, fence: str = "") -> tuple[list[Any], int]:
    """One or more call elements (JSON values, tags, fences, functions) separated by space,
    up to ``fence`` (the closing fence of the block they are in, if any)."""
    values: list[Any] = []
    while True:
        pos = _skip_space(text, pos)
        if fence and text.startswith(fence, pos):
            break
        if text.startswith(("{", "["), pos):
            try:
                value, pos = _value_at(text, pos)
            except ValueError:
                raise NotCalls from None  # a block that holds broken JSON is not a call
            values.append(value)
        elif (inner := _INNER.match(text, pos)) is not None:
            found, pos = _element(text, inner, depth + 1)
            values += found
        else:
            break
        if len(values) > MAX_VALUES:
            raise NotCalls
    if not values:
        raise NotCalls
    return values, pos


def _requoted_items(text: str, pos: int, closing: re.Pattern[str]) -> tuple[list[Any], int]:
    """The JSON values of a block's body up to ``closing`` (or the end) once its single-quoted
    strings are JSON strings: the 1.5B model quotes a value holding double quotes that way
    (``"content": '{"port": 9000}'``). The body must be nothing but those values."""
    found = closing.search(text, pos)
    end = len(text) if found is None else found.start()
    body = _requoted(text[pos:end])
    if body is None:
        raise NotCalls
    values: list[Any] = []
    at = _skip_space(body, 0)
    while at < len(body):
        try:
            value, at = _value_at(body, at)
        except ValueError:
            raise NotCalls from None
        values.append(value)
        at = _skip_space(body, at)
    if not values or len(values) > MAX_VALUES:
        raise NotCalls
    return values, end


def _requoted(body: str) -> str | None:
    """``body`` with every single-quoted string outside JSON strings written as a JSON string
    (``\\'`` inside becomes ``'``, a bare ``"`` is escaped, other escapes are kept), or None
    when it has none or one never closes."""
    out: list[str] = []
    at = 0
    body, triples = _TRIPLE.subn(lambda m: json.dumps(m.group(1).replace("\\n", "\n")), body)
    changed = triples > 0
    while (quote := _QUOTE.search(body, at)) is not None:
        out.append(body[at : quote.start()])
        if quote.group() != "'":
            out.append(quote.group())  # a whole JSON string: kept as it is
            at = quote.end()
            continue
        single = _SINGLE.match(body, quote.start())
        if single is None:
            return None
        inner = single.group(1).replace("\\'", "'")
        out.append('"' + _BARE_DOUBLE.sub(r'\1\\"', inner) + '"')
        at = single.end()
        changed = True
    out.append(body[at:])
    return "".join(out) if changed else None


def _function(text: str, pos: int) -> tuple[list[Any], int]:
    """``<function name="write" arguments='{…}'/>``, or ``<function name="write">{…}</function>``:
    the attributes as a call object. A JSON attribute value is read as JSON (its strings may
    hold the attribute's own quote), then its closing quote must follow."""
    call: dict[str, Any] = {}
    while (attribute := _ATTRIBUTE.match(text, pos)) is not None:
        key, quote = attribute.group(1), attribute.group(2)
        pos = attribute.end()
        if text.startswith(("{", "["), pos):
            try:
                value, pos = _json_at(text, pos)
            except ValueError:
                raise NotCalls from None
        else:
            close = text.find(quote, pos)
            if close < 0:
                raise NotCalls
            value, pos = text[pos:close], close
        if not text.startswith(quote, pos) or key in call:
            raise NotCalls
        call[key] = value
        pos += 1
    end = _ELEMENT_END.match(text, pos)
    if end is None:
        raise NotCalls
    pos = end.end()
    if not end.group(1):  # <function …>body</function>
        body = _skip_space(text, pos)
        if text.startswith("{", body):
            if "arguments" in call:
                raise NotCalls  # arguments twice: which ones?
            try:
                call["arguments"], pos = _json_at(text, body)
            except ValueError:
                raise NotCalls from None
        if (closing := _FUNCTION_END.match(text, pos)) is None:
            raise NotCalls
        pos = closing.end()
    return [call], pos


def _skip_space(text: str, pos: int) -> int:
    space = _SPACE.match(text, pos)
    return pos if space is None else space.end()


def _value_at(text: str, start: int) -> tuple[Any, int]:
    """The JSON value of a block at ``text[start]``; also an object in one extra pair of
    braces (``{{"name": …}}}``, doubled as a format string would: the 1.5B model wrote it)."""
    try:
        return _json_at(text, start)
    except ValueError:
        inner = _skip_space(text, start + 1)
        if not (text.startswith("{", start) and text.startswith("{", inner)):
            raise
    value, end = _json_at(text, inner)
    end = _skip_space(text, end)
    if not text.startswith("}", end):
        raise ValueError("an object in braces that do not close")
    return value, end + 1


def _json_at(text: str, start: int) -> tuple[Any, int]:
    """The JSON value at ``text[start]``: bounded nesting, raw newlines in strings allowed,
    NaN/Infinity refused. Raises ``ValueError`` when there is none."""
    return loads_prefix(text, start, strict=False, parse_constant=_no_constant)


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")
