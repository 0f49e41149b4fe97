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

Finding the blocks, and the few repairs of broken JSON the 1.5B model needs, is
``agent.call_blocks``'s. Pure: no I/O; hostile input (huge, deeply nested, endless openers)
ends in "not a call", never an error.
"""

from __future__ import annotations

import json
import re
from typing import Any, Mapping, Sequence

from dataclasses import dataclass
from minicode.agent.call_blocks import MAX_VALUES, NotCalls, scan
from minicode.provider.types import Message, ToolCall, ToolSpec
from minicode.tools.arguments import parse_arguments
from minicode.tools.validate import validate_arguments

__all__ = ["MAX_CALLS", "MAX_TEXT_CHARS", "Recovered", "TextCall", "leading_call", "recover_calls", "recovered_message"]

MAX_TEXT_CHARS = 200_000
"""A longer reply is not scanned: the output limit (8,192 tokens) keeps real ones far below."""
MAX_CALLS = MAX_VALUES
"""More calls than this in one reply is not a batch a model means."""
_SHORT_LEAD, _SHORT_GAP, _SHORT_TRAIL, _MAX_PROSE = 200, 100, 300, 1200

_NAME_KEYS = ("name", "tool", "tool_name", "function")
_ARGUMENT_KEYS = ("arguments", "parameters", "args", "input")
_EXTRA_KEYS = frozenset({"type", "id"})

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


def recover_calls(text: str, tools: Sequence[ToolSpec]) -> Recovered | None:
    """The calls ``text`` consists of (see the module's rule), or None when it is text."""
    if not tools or "{" not in text or len(text) > MAX_TEXT_CHARS:
        return None
    try:
        prose, values = scan(text)
    except NotCalls:
        return None
    if not values or not _narration([piece.strip() for piece in prose]):
        return None
    calls = _calls(values, {spec.name: spec for spec in tools})
    if calls is None:
        return None
    return Recovered(prose[0].strip(), tuple(calls))


_LEADING_BLOCK = re.compile(r"```[^\n]*\n.*?```|<(tool_call|tools)>.*?</(?:tool_call|tools)>", re.DOTALL)


def leading_call(text: str) -> str | None:
    """The reply up to the end of its first block, when that block opens it (after at most a
    short lead-in): what a small model means as its call, before it goes on imagining the
    result in more blocks. Only the small-model assists read a reply this way."""
    match = _LEADING_BLOCK.search(text)
    if match is None or match.end() == len(text.rstrip()) or len(text[: match.start()].strip()) > _SHORT_LEAD:
        return None
    return text[: match.end()]


def recovered_message(message: Message, tools: Sequence[ToolSpec], id_prefix: str,
                      *, leading: bool = False) -> Message | None:
    """``message`` (an assistant answer without tool calls) as the calls its text is, or None.

    Each call's id is ``{id_prefix}_{n}`` (n from 1): the caller derives the prefix from the
    conversation (the message's place in it), so ids never depend on time or chance and a
    resumed session's requests are the bytes they were."""
    found = recover_calls(message.content or "", tools)
    if found is None and leading:
        head = leading_call(message.content or "")
        found = recover_calls(head, tools) if head is not None else None
    if found is None:
        return None
    calls = tuple(
        ToolCall(f"{id_prefix}_{n}", call.name, call.arguments, from_text=True)
        for n, call in enumerate(found.calls, 1)
    )
    return Message(role="assistant", content=found.lead or None, tool_calls=calls, reasoning=message.reasoning)


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
