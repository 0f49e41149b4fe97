"""The one local token estimate minicode uses (pure, no I/O).

The estimate is deliberately simple and conservative: ASCII characters count a quarter
token each (rounded up), any other character counts two tokens (CJK text tokenises at
roughly one token per character, so this over-estimates rather than under-estimates).

It is used only for budget decisions (compaction trigger, cut point, chunk sizes, memory
limits) — never for the token figures of the task statistics, which come from responses.

The module-level functions are pure and uncached. A ``TokenCounter`` memoises per-message
and per-tool-list estimates for one session (bounded), so that checking the budget before
every request costs the same however long the history has grown. Must not import anything
beyond the standard library and ``minicode.provider.types``.
"""

from __future__ import annotations

import json
from typing import Sequence, TypeVar

from minicode.provider.types import Message, ToolSpec

__all__ = [
    "CALL_OVERHEAD",
    "DEFAULT_MESSAGE_MEMO",
    "MESSAGE_OVERHEAD",
    "TOOL_OVERHEAD",
    "TokenCounter",
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

_T = TypeVar("_T")

DEFAULT_MESSAGE_MEMO = 1 << 16
"""Messages a ``TokenCounter`` remembers: far more than any realistic session history."""
_TOOLS_MEMO = 8
"""Tool lists a ``TokenCounter`` remembers; a session offers one or two (all tools / none)."""


def estimate_text(text: str) -> int:
    """Tokens of ``text``: ceil(ASCII characters / 4) + 2 per non-ASCII character."""
    if text.isascii():
        return (len(text) + 3) // 4
    # encode(..., "ignore") drops every non-ASCII code point in C, without a Python loop.
    ascii_chars = len(text.encode("ascii", "ignore"))
    return (ascii_chars + 3) // 4 + 2 * (len(text) - ascii_chars)


def estimate_message(message: Message) -> int:
    """Tokens ``message`` costs in a request: content, tool calls, call id, overhead.

    Reasoning is not counted: it is kept for the transcript and never sent back.
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
    """Tokens the tool declarations cost in a request."""
    return sum(_estimate_spec(spec) for spec in specs)


def _estimate_spec(spec: ToolSpec) -> int:
    schema = json.dumps(spec.parameters, sort_keys=True, ensure_ascii=False)
    return (
        TOOL_OVERHEAD
        + estimate_text(spec.name)
        + estimate_text(spec.description)
        + estimate_text(schema)
    )


class TokenCounter:
    """The estimates above, memoised for one session; bounded, never shared between sessions.

    Entries are keyed by object identity and hold a reference to their object, so an id
    cannot be reused while its entry lives and a hit costs one dict lookup (no hashing of
    long message texts). The history reuses its message objects from request to request,
    which is exactly what makes the hits; an equal but distinct object is simply estimated
    again. When full, the oldest entry goes first (messages are appended, rarely revisited
    once compacted away).
    """

    __slots__ = ("_max_messages", "_messages", "_tools")

    def __init__(self, max_messages: int = DEFAULT_MESSAGE_MEMO) -> None:
        if max_messages < 1:
            raise ValueError(f"max_messages must be positive, not {max_messages}")
        self._max_messages = max_messages
        self._messages: dict[int, tuple[Message, int]] = {}
        self._tools: dict[int, tuple[Sequence[ToolSpec], int]] = {}

    def __len__(self) -> int:
        """How many message estimates are remembered."""
        return len(self._messages)

    def estimate_message(self, message: Message) -> int:
        """``estimate_message(message)``, computed once per message object."""
        entry = self._messages.get(id(message))
        if entry is not None and entry[0] is message:
            return entry[1]
        tokens = estimate_message(message)
        _remember(self._messages, message, tokens, self._max_messages)
        return tokens

    def estimate_messages(self, messages: Sequence[Message]) -> int:
        """Sum of ``estimate_message`` over ``messages``."""
        return sum(map(self.estimate_message, messages))

    def estimate_tools(self, specs: Sequence[ToolSpec]) -> int:
        """``estimate_tools(specs)``, computed once per tool-list object.

        Pass the same (immutable) tuple each time to benefit; tool schemas are dicts, so
        the list cannot be hashed by value anyway.
        """
        entry = self._tools.get(id(specs))
        if entry is not None and entry[0] is specs:
            return entry[1]
        tokens = estimate_tools(specs)
        _remember(self._tools, specs, tokens, _TOOLS_MEMO)
        return tokens


def _remember(memo: dict[int, tuple[_T, int]], key: _T, tokens: int, limit: int) -> None:
    if len(memo) >= limit:
        memo.pop(next(iter(memo)))
    memo[id(key)] = (key, tokens)
