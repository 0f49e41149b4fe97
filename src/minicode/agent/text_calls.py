"""Tool calls a model wrote as text instead of the server's tool-call format (issue 25).

Small local models (Qwen2.5-Coder-1.5B on llama.cpp, measured) often answer with the call
written out: a JSON object in a Markdown fence or bare, inside Qwen's ``<tool_call>`` tags or
the ``<tools>`` tags of its own prompt template, or as ``<function name="…" arguments='{…}'/>``.
``recover_calls`` finds such calls; ``recovered_message`` turns the reply into an assistant
message with real tool calls (flagged ``from_text``) that the loop runs like any other.

The rule: a reply (that carried no native tool call — the loop asks only then) IS a call when

1. its text holds one or more call blocks and no other code block or JSON: a fence with no
   language or a JSON-ish one (json, tool_call, xml) whose content is JSON or call elements;
   a ``<tool_call>``/``<tools>`` element; a ``<function …>`` element; a JSON value starting a
   line or following a colon. A fence of code (python, bash, diff …) or JSON that is not a
   call makes the whole reply text: it is showing something, not calling;
2. every block is a call, or a list of calls: an object naming a declared tool (``name``,
   ``tool``, ``tool_name``) with its arguments (``arguments``, ``parameters``, ``args``,
   ``input``: an object or the JSON text of one), or ``{"function": {…}}``, with no other
   keys than ``type`` and ``id``; and the arguments validate against that tool's schema
   (``tools.validate``, the registry's own check);
3. the prose around the blocks narrates, it does not explain: no piece of it presents the
   JSON as an example or a format ("for example", "e.g.", "looks like", "like this", "the
   format of", "how to", "you can call" …).
   A short lead-in (≤ 200 characters: "Let me read the file:"), short gaps between calls
   (≤ 100) and a short closing remark (≤ 300) always pass; longer prose, up to 1,200
   characters in all, only when the model speaks of what it is about to do ("I'll", "Let me",
   "I will" …) — small models narrate their steps at length; documentation and explanations
   do not speak in the first person future.

Anything else stays text, and the reply is a final answer exactly as before. The prose before
the first call is kept as the message's content; the rest (the calls' text, a closing
remark) is not sent back: the calls themselves are.

Repairs, each seen from the 1.5B model: JSON strings may hold raw newlines (``strict=False``,
a file's lines written out); an object in one extra pair of braces (``{{…}}}``) is the object;
in a fence or tag, whose end is known before parsing, single-quoted strings are read as JSON
strings (``"content": '{"port": 9000}'``). Other Python literals (``True``, ``None``, tuples)
are not read: that would need a second, far wider parser (``ast.literal_eval``). Pure: no I/O; JSON through ``minicode.jsonsafe`` (bounded nesting);
hostile input (huge, deeply nested, endless openers) ends in "not a call", never an error.
"""

from __future__ import annotations

import json
import re
from typing import Any, Mapping, Sequence

from dataclasses import dataclass
from minicode.jsonsafe import loads_prefix
from minicode.provider.types import Message, ToolCall, ToolSpec
from minicode.tools.arguments import parse_arguments
from minicode.tools.validate import validate_arguments

__all__ = ["MAX_CALLS", "MAX_TEXT_CHARS", "Recovered", "TextCall", "recover_calls", "recovered_message"]

MAX_TEXT_CHARS = 200_000
"""A longer reply is not scanned: the output limit (8,192 tokens) keeps real ones far below."""
MAX_CALLS = 16
"""More calls than this in one reply is not a batch a model means."""
_MAX_OPENERS = 64
"""Openers tried (lines starting with ``{``/``[`` that may be JSON) before giving up."""
_MAX_NESTING = 3
"""How deep call elements may wrap each other (a fence in ``<tool_call>`` in a fence)."""
_SHORT_LEAD, _SHORT_GAP, _SHORT_TRAIL, _MAX_PROSE = 200, 100, 300, 1200

_JSON_FENCES = frozenset({"", "json", "json5", "jsonc", "tool_call", "tool_calls", "tool", "tools", "xml"})
_NAME_KEYS = ("name", "tool", "tool_name", "function")
_ARGUMENT_KEYS = ("arguments", "parameters", "args", "input")
_EXTRA_KEYS = frozenset({"type", "id"})

_OPENER = re.compile(
    r"^[ \t]*(?P<fence>`{3,}|~{3,})"
    r"|<(?P<tag>tool_calls?|tools|function_call)\s*>"
    r"|(?P<function><function)(?=[\s/>])"
    r"|(?:^|(?<=:))[ \t]*(?P<bare>[{\[])",
    re.MULTILINE | re.IGNORECASE,
)
_INNER = re.compile(
    r"(?P<fence>`{3,}|~{3,})|<(?P<tag>tool_calls?|tools|function_call)\s*>|(?P<function><function)(?=[\s/>])",
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
_TAG_END = re.compile(r"</\s*(?:tool_calls?|tools|function_call)\s*>", re.IGNORECASE)
_FUNCTION_END = re.compile(r"\s*</\s*function\s*>", re.IGNORECASE)
_EXAMPLE = re.compile(
    r"\b(?:for example|for instance|e\.g\.|such as|an example|the example|this example"
    r"|examples? (?:of|call|calls|request|response|usage|output)|looks? like|would look|should look|like this"
    r"|like so|in (?:this|the following|a) (?:format|shape|form)|the (?:format|shape|structure|schema|syntax)"
    r" (?:of|is|for)|how to|here's how|here is how|you (?:can|could|would|might|may) (?:call|send|use|write|invoke"
    r"|pass)|hypothetical\w*|illustrat\w*|pseudo-?code)\b|^\s*examples?\s*:",
    re.IGNORECASE | re.MULTILINE,
)
"""Phrases that present the JSON as an example or a format, not topic words: "fix the syntax
error", "format the file" or "update the API docs" are things a model does with a call."""
_INTENT = re.compile(
    r"\b(?:I'll|I will|I'm going to|I am going to|let me|let's|I need to|I'd like to|I'm|we'll|we will"
    r"|we need to|now I)\b",
    re.IGNORECASE,
)


@dataclass(frozen=True, slots=True)
class TextCall:
    """One call found in the text: a declared tool and its arguments as JSON text."""

    name: str
    arguments: str


@dataclass(frozen=True, slots=True)
class Recovered:
    """The calls a reply's text is, and the prose before the first one (stripped, or "")."""

    lead: str
    calls: tuple[TextCall, ...]


class _Foreign(Exception):
    """A block that quotes something other than calls: the reply is text."""


class _NotJson(Exception):
    """A bare opener that does not start JSON: it is prose."""


def recover_calls(text: str, tools: Sequence[ToolSpec]) -> Recovered | None:
    """The calls ``text`` consists of (see the module's rule), or None when it is text."""
    if not tools or "{" not in text or len(text) > MAX_TEXT_CHARS:
        return None
    try:
        prose, values = _scan(text)
    except _Foreign:
        return None
    if not values or not _narration([piece.strip() for piece in prose]):
        return None
    calls = _calls(values, {spec.name: spec for spec in tools})
    if calls is None:
        return None
    return Recovered(prose[0].strip(), tuple(calls))


def recovered_message(message: Message, tools: Sequence[ToolSpec], id_prefix: str) -> Message | None:
    """``message`` (an assistant answer without tool calls) as the calls its text is, or None.

    Each call's id is ``{id_prefix}_{n}`` (n from 1): the caller derives the prefix from the
    conversation (the message's place in it), so ids never depend on time or chance and a
    resumed session's requests are the bytes they were."""
    found = recover_calls(message.content or "", tools)
    if found is None:
        return None
    calls = tuple(
        ToolCall(f"{id_prefix}_{n}", call.name, call.arguments, from_text=True)
        for n, call in enumerate(found.calls, 1)
    )
    return Message(role="assistant", content=found.lead or None, tool_calls=calls, reasoning=message.reasoning)


# --- finding the blocks -------------------------------------------------------------------


def _scan(text: str) -> tuple[list[str], list[Any]]:
    """(prose pieces around the blocks, the blocks' JSON values in order); raises ``_Foreign``."""
    prose: list[str] = []
    values: list[Any] = []
    kept = searched = 0
    tried = 0
    while (opener := _OPENER.search(text, searched)) is not None:
        try:
            found, end = _element(text, opener, 0)
        except _NotJson:
            tried += 1
            if tried > _MAX_OPENERS:
                raise _Foreign from None
            searched = opener.end()
            continue
        prose.append(text[kept : opener.start()])
        values += found
        if len(values) > MAX_CALLS:
            raise _Foreign
        kept = searched = end
    prose.append(text[kept:])
    return prose, values


def _element(text: str, opener: re.Match[str], depth: int) -> tuple[list[Any], int]:
    """The values of the block ``opener`` starts and where it ends."""
    if depth > _MAX_NESTING:
        raise _Foreign
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
        raise _Foreign  # code: shown, not called
    try:
        values, end = _items(text, language.end(), depth, fence)
    except _Foreign:
        fence_line = re.compile(rf"^[ \t]*{re.escape(fence[0])}{{{len(fence)},}}[ \t]*$", re.MULTILINE)
        values, end = _requoted_items(text, language.end(), fence_line)
    end = _skip_space(text, end)
    if end == len(text):
        return values, end  # the reply ended before its fence closed
    if (closed := closing.match(text, end)) is None:
        raise _Foreign  # more than calls inside
    return values, closed.end()


def _tag(text: str, opener: re.Match[str], depth: int) -> tuple[list[Any], int]:
    """``<tool_call>…</tool_call>`` (or tools, tool_calls, function_call); the closing tag may
    be missing at the end of the reply."""
    try:
        values, end = _items(text, opener.end(), depth)
    except _Foreign:
        values, end = _requoted_items(text, opener.end(), _TAG_END)
    end = _skip_space(text, end)
    if end == len(text):
        return values, end
    if (closed := _TAG_END.match(text, end)) is None:
        raise _Foreign
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
                raise _Foreign from None  # a block that holds broken JSON is not a call
            values.append(value)
        elif (inner := _INNER.match(text, pos)) is not None:
            found, pos = _element(text, inner, depth + 1)
            values += found
        else:
            break
        if len(values) > MAX_CALLS:
            raise _Foreign
    if not values:
        raise _Foreign
    return values, pos


def _requoted_items(text: str, pos: int, closing: re.Pattern[str]) -> tuple[list[Any], int]:
    """The JSON values of a block's body up to ``closing`` (or the end) once its single-quoted
    strings are JSON strings: the 1.5B model quotes a value holding double quotes that way
    (``"content": '{"port": 9000}'``). The body must be nothing but those values."""
    found = closing.search(text, pos)
    end = len(text) if found is None else found.start()
    body = _requoted(text[pos:end])
    if body is None:
        raise _Foreign
    values: list[Any] = []
    at = _skip_space(body, 0)
    while at < len(body):
        try:
            value, at = _value_at(body, at)
        except ValueError:
            raise _Foreign from None
        values.append(value)
        at = _skip_space(body, at)
    if not values or len(values) > MAX_CALLS:
        raise _Foreign
    return values, end


def _requoted(body: str) -> str | None:
    """``body`` with every single-quoted string outside JSON strings written as a JSON string
    (``\\'`` inside becomes ``'``, a bare ``"`` is escaped, other escapes are kept), or None
    when it has none or one never closes."""
    out: list[str] = []
    at = 0
    changed = False
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
                raise _Foreign from None
        else:
            close = text.find(quote, pos)
            if close < 0:
                raise _Foreign
            value, pos = text[pos:close], close
        if not text.startswith(quote, pos) or key in call:
            raise _Foreign
        call[key] = value
        pos += 1
    end = _ELEMENT_END.match(text, pos)
    if end is None:
        raise _Foreign
    pos = end.end()
    if not end.group(1):  # <function …>body</function>
        body = _skip_space(text, pos)
        if text.startswith("{", body):
            if "arguments" in call:
                raise _Foreign  # arguments twice: which ones?
            try:
                call["arguments"], pos = _json_at(text, body)
            except ValueError:
                raise _Foreign from None
        if (closing := _FUNCTION_END.match(text, pos)) is None:
            raise _Foreign
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


# --- what the blocks say ------------------------------------------------------------------


def _calls(values: Sequence[Any], tools: Mapping[str, ToolSpec]) -> list[TextCall] | None:
    """Every value as calls of declared tools with valid arguments, or None if one is not."""
    calls: list[TextCall] = []
    for value in values:
        if isinstance(value, dict) and set(value) == {"tool_calls"}:
            value = value["tool_calls"]
        items = value if isinstance(value, list) else [value]
        if not items:
            return None
        for item in items:
            call = _call(item, tools)
            if call is None:
                return None
            calls.append(call)
    return calls if len(calls) <= MAX_CALLS else None


def _call(item: object, tools: Mapping[str, ToolSpec]) -> TextCall | None:
    """One call object, or None when it is not one (any shape, name or argument problem)."""
    if not isinstance(item, dict):
        return None
    inner = item.get("function")
    if isinstance(inner, dict):  # OpenAI's shape: {"type": "function", "function": {...}}
        if set(item) - _EXTRA_KEYS - {"function"}:
            return None
        item = inner
    named = [key for key in _NAME_KEYS if isinstance(item.get(key), str)]
    given = [key for key in _ARGUMENT_KEYS if key in item]
    if len(named) != 1 or len(given) != 1 or set(item) - _EXTRA_KEYS - {named[0], given[0]}:
        return None
    spec = tools.get(item[named[0]])
    if spec is None:
        return None
    raw = item[given[0]]
    arguments = parse_arguments(spec.name, raw) if isinstance(raw, str) else raw
    if not isinstance(arguments, dict):
        return None
    problems, _ = validate_arguments(spec.parameters, arguments)
    if problems:
        return None
    return TextCall(spec.name, json.dumps(arguments, ensure_ascii=False))


def _narration(pieces: Sequence[str]) -> bool:
    """Whether the prose around the calls narrates them (rule 3 of the module docstring)."""
    if sum(len(piece) for piece in pieces) > _MAX_PROSE:
        return False
    words = [piece.replace("\u2019", "'") for piece in pieces]
    if any(_EXAMPLE.search(piece) for piece in words):
        return False
    lead, gaps, trail = words[0], words[1:-1], words[-1]
    if len(lead) <= _SHORT_LEAD and len(trail) <= _SHORT_TRAIL and all(len(gap) <= _SHORT_GAP for gap in gaps):
        return True
    return any(_INTENT.search(piece) for piece in words)
