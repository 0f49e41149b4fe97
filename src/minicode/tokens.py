"""The one local token estimate minicode uses (pure, no I/O).

The estimate is deliberately simple and conservative: ASCII characters count a quarter
token each (rounded up), any other character counts two tokens (CJK text tokenises at
roughly one token per character, so this over-estimates rather than under-estimates).

It is used only for budget decisions (compaction trigger, cut point, chunk sizes, memory
limits) — never for the token figures of the task statistics, which come from responses.

Per-message and per-tool-list estimates are memoised so that checking the budget before
every request costs the same however long the history has grown. Must not import anything
beyond the standard library and ``minicode.provider.types``.
"""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Sequence

from minicode.provider.types import Message, ToolSpec

__all__ = [
    "CALL_OVERHEAD",
    "MESSAGE_OVERHEAD",
    "TOOL_OVERHEAD",
    "estimate_message",
    "estimate_messages",
    "estimate_text",
    "estimate_tools",
]

MESSAGE_OVERHEAD = 4
"""Tokens a chat template spends around each message (role markers, separators)."""
CALL_OVERHEAD = 8
"""Tokens spent around each tool call (id, type, JSON framing)."""
TOOL_OVERHEAD = 8
"""Tokens spent around each tool declaration."""

# Big enough for any realistic session history; bounded so a long-lived process cannot
# grow without limit (messages are frozen and hashable, the cache keys on them directly).
_MESSAGE_CACHE_SIZE = 1 << 16
# Tool lists are unhashable (their schemas are dicts), so they are cached by identity;
# a session offers one or two distinct tuples (all tools / none).
_TOOLS_CACHE_SIZE = 8
_tools_cache: dict[int, tuple[Sequence[ToolSpec], int]] = {}


def estimate_text(text: str) -> int:
    """Tokens of ``text``: ceil(ASCII characters / 4) + 2 per non-ASCII character."""
    if text.isascii():
        return (len(text) + 3) // 4
    # encode(..., "ignore") drops every non-ASCII code point in C, without a Python loop.
    ascii_chars = len(text.encode("ascii", "ignore"))
    return (ascii_chars + 3) // 4 + 2 * (len(text) - ascii_chars)


@lru_cache(maxsize=_MESSAGE_CACHE_SIZE)
def estimate_message(message: Message) -> int:
    """Tokens ``message`` costs in a request: content, tool calls, call id, overhead.

    Reasoning is not counted: it is kept for the transcript and never sent back.
    Memoised per message (messages are immutable).
    """
    tokens = MESSAGE_OVERHEAD
    if message.content:
        tokens += estimate_text(message.content)
    if message.tool_call_id:
        tokens += estimate_text(message.tool_call_id)
    for call in message.tool_calls:
        tokens += CALL_OVERHEAD + estimate_text(call.id)
        tokens += estimate_text(call.name) + estimate_text(call.arguments)
    return tokens


def estimate_messages(messages: Sequence[Message]) -> int:
    """Sum of ``estimate_message`` over ``messages``."""
    return sum(map(estimate_message, messages))


def estimate_tools(specs: Sequence[ToolSpec]) -> int:
    """Tokens the tool declarations cost in a request; memoised by the identity of ``specs``.

    Pass the same (immutable) tuple each time to benefit from the cache; a different
    object with the same content is simply estimated again.
    """
    cached = _tools_cache.get(id(specs))
    # The stored reference keeps the object alive, so its id cannot be reused meanwhile.
    if cached is not None and cached[0] is specs:
        return cached[1]
    tokens = sum(_estimate_spec(spec) for spec in specs)
    if len(_tools_cache) >= _TOOLS_CACHE_SIZE:
        _tools_cache.pop(next(iter(_tools_cache)))
    _tools_cache[id(specs)] = (specs, tokens)
    return tokens


def _estimate_spec(spec: ToolSpec) -> int:
    schema = json.dumps(spec.parameters, sort_keys=True, ensure_ascii=False)
    return (
        TOOL_OVERHEAD
        + estimate_text(spec.name)
        + estimate_text(spec.description)
        + estimate_text(schema)
    )
