"""What to compact and how to feed it to the summariser (pure, no I/O).

- *Units*: a message, or an assistant tool-call message together with all its results.
  A cut never falls inside a unit, so the kept part is always a valid conversation.
- ``find_cut``: the first kept message, walking back over whole units (SPEC 6).
- ``serialize``: the complete text of the older part — never truncated.
- ``split_utf8`` / ``chunk_messages``: pieces within a token budget whose concatenation is
  exactly the serialised text (CJK-heavy text and single huge tool results included).
"""

from __future__ import annotations

from typing import Sequence

from minicode.provider.types import Message
from minicode.tokens import TokenCounter, estimate_messages, estimate_text

__all__ = [
    "chunk_messages",
    "find_cut",
    "serialize",
    "serialize_message",
    "split_utf8",
    "unit_start",
]

# The cheapest character costs 1/4 token, so a chunk of max_tokens never has more than
# 4 * max_tokens characters; this bounds the binary search in split_utf8.
_CHARS_PER_TOKEN_MAX = 4
# A chunk may end early at a newline if that keeps at least this share of it, so pieces
# of a serialised conversation tend to break between lines rather than inside words.
_NEWLINE_SEARCH_SHARE = 4


def unit_start(history: Sequence[Message], end: int, start: int = 0) -> int:
    """Index of the first message of the unit that ends just before ``end``.

    Tool results belong to the assistant tool-call message before them. Results without
    such a message (a broken history) form a unit of their own.
    """
    i = end - 1
    while i > start and history[i].role == "tool":
        i -= 1
    first = history[i]
    if first.role == "assistant" and first.tool_calls:
        return i
    if history[end - 1].role == "tool" and first.role != "tool":
        return i + 1  # orphaned results: keep them together, without the message before
    return i


def find_cut(
    history: Sequence[Message], start: int, keep_tokens: int, counter: TokenCounter | None = None
) -> int:
    """Index of the first message to keep verbatim; ``start`` means nothing to compact.

    Walks back from the end over whole units while the kept part stays within
    ``keep_tokens``; the newest unit is always kept, even when it alone is larger.
    Costs time proportional to the kept part only (memoised with a session's ``counter``).
    """
    estimate = counter.estimate_messages if counter is not None else estimate_messages
    cut = len(history)
    kept = 0
    while cut > start:
        first = unit_start(history, cut, start)
        size = estimate(history[first:cut])
        if cut < len(history) and kept + size > keep_tokens:
            break
        kept += size
        cut = first
    return cut


def serialize_message(message: Message) -> str:
    """One message as summariser input: role, text, tool names, arguments, call ids, results."""
    if message.role == "tool":
        header = f"[tool result for call {message.tool_call_id or '?'}]"
    else:
        header = f"[{message.role}]"
    parts = [header]
    if message.content:
        parts.append(message.content)
    for call in message.tool_calls:
        parts.append(f"[tool call {call.name} id={call.id}] {call.arguments}")
    return "\n".join(parts) + "\n\n"


def serialize(messages: Sequence[Message]) -> str:
    """The complete text of ``messages`` for the summariser; nothing is ever truncated."""
    return "".join(serialize_message(m) for m in messages)


def split_utf8(text: str, max_tokens: int) -> list[str]:
    """Split ``text`` at character boundaries into pieces of at most ``max_tokens`` each.

    ``"".join(result) == text`` always holds; empty text gives no pieces. A piece ends at
    a newline when one is near its end. Raises ``ValueError`` when ``max_tokens`` is below
    2, the cost of a single non-ASCII character.
    """
    if max_tokens < 2:
        raise ValueError(f"max_tokens must be at least 2, got {max_tokens}")
    pieces: list[str] = []
    pos = 0
    while pos < len(text):
        length = _fitting_prefix(text, pos, max_tokens)
        newline = text.rfind("\n", pos, pos + length)
        if pos + length < len(text) and newline >= pos + length - length // _NEWLINE_SEARCH_SHARE:
            length = newline + 1 - pos
        pieces.append(text[pos : pos + length])
        pos += length
    return pieces


def _fitting_prefix(text: str, pos: int, max_tokens: int) -> int:
    """The longest length L with estimate_text(text[pos:pos+L]) <= max_tokens (L >= 1)."""
    hi = min(len(text) - pos, _CHARS_PER_TOKEN_MAX * max_tokens)
    if estimate_text(text[pos : pos + hi]) <= max_tokens:
        return hi
    lo = 1  # invariant: a prefix of lo fits (one character costs at most 2 <= max_tokens)
    while hi - lo > 1:  # invariant: a prefix of hi does not fit
        mid = (lo + hi) // 2
        if estimate_text(text[pos : pos + mid]) <= max_tokens:
            lo = mid
        else:
            hi = mid
    return lo


def chunk_messages(messages: Sequence[Message], max_tokens: int) -> list[str]:
    """Serialise ``messages`` into pieces of at most ``max_tokens`` estimated tokens.

    Whole messages are packed together while they fit; a message larger than a piece is
    split with ``split_utf8``. ``"".join(result) == serialize(messages)``.
    """
    pieces: list[str] = []
    current: list[str] = []
    current_tokens = 0
    for message in messages:
        text = serialize_message(message)
        tokens = estimate_text(text)
        if current and current_tokens + tokens > max_tokens:
            pieces.append("".join(current))
            current, current_tokens = [], 0
        if tokens > max_tokens:
            pieces.extend(split_utf8(text, max_tokens))
            continue
        current.append(text)
        current_tokens += tokens
    if current:
        pieces.append("".join(current))
    return pieces
