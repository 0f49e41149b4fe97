"""A resumed conversation shown without reading it first: entries made when first on screen.

A 60 MB session must reach its first full screen as fast as a small one. So the replay makes
no entry up front: ``LazyEntries`` knows which messages get one (user and assistant messages;
tool results are shown on their call's line) from the roles the log holds without parsing,
and makes a ``MessageEntry`` only when the view first needs that position — the first frame
makes the few at the bottom, scrolling up makes more. Until an entry is made or rendered it
counts by an estimate from its record's size (``LazyEntries.sizes``: one pass, no objects);
``HistoryItem`` replaces an estimate with the real height when the entry is first drawn. A
made entry reads its message — and, for an answer that called tools, the results that follow
it — only when it is first rendered, with ``peek``: nothing of the history is kept beyond the
lines of the entries that were on screen. Pure: no prompt_toolkit.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Mapping, Protocol, Sequence

from minicode.agent.deps import ToolOutcome
from minicode.cli.frontends.tui.history import USER_MAX_LINES, message_items
from minicode.cli.frontends.tui.items import Item, Line, RenderMarkdown, TextItem
from minicode.errors import MinicodeError
from minicode.provider.types import Message

if TYPE_CHECKING:
    from minicode.session.turn_ends import TurnEnd

__all__ = ["HistorySource", "LazyEntries", "MessageEntry", "lazy_entries", "source_of"]

_BYTES_PER_LINE = 2  # a record's bytes per screen cell, roughly (JSON escapes, tool-call arguments)
_MAX_ESTIMATE = 40


class HistorySource(Protocol):
    """What the replay needs of a history (``session.log.MessageLog`` has it all)."""

    def __len__(self) -> int: ...

    def role(self, index: int) -> str: ...

    def peek(self, index: int) -> Message: ...

    def size_hint(self, index: int) -> int: ...

    def is_parsed(self, index: int) -> bool:
        """Whether reading message ``index`` costs nothing (it is in memory already)."""

    def turn_end(self, count: int) -> TurnEnd | None:
        """How the task whose last message is message ``count - 1`` ended, if one ended there."""


class _ListSource:
    """A plain list of messages as a ``HistorySource`` (tests, fake sessions)."""

    def __init__(self, messages: Sequence[Message]) -> None:
        self._messages = messages

    def __len__(self) -> int:
        return len(self._messages)

    def role(self, index: int) -> str:
        return self._messages[index].role

    def peek(self, index: int) -> Message:
        return self._messages[index]

    def size_hint(self, index: int) -> int:
        m = self._messages[index]
        return len(m.content or "") + sum(len(c.arguments) + 40 for c in m.tool_calls) + 40

    def is_parsed(self, index: int) -> bool:
        return True

    def turn_end(self, count: int) -> TurnEnd | None:
        return None


def source_of(messages: Sequence[Message]) -> HistorySource:
    if all(hasattr(messages, name) for name in ("role", "peek", "size_hint", "is_parsed", "turn_end")):
        return messages  # type: ignore[return-value]  # a MessageLog: read lazily
    return _ListSource(messages)


def lazy_entries(messages: Sequence[Message], outcomes: Mapping[str, ToolOutcome]) -> LazyEntries:
    """One entry per user or assistant message of ``messages`` (tool results are shown on their
    call's line), none of them made yet."""
    source = source_of(messages)
    return LazyEntries(source, [i for i in range(len(source)) if source.role(i) in _SHOWN], outcomes)


_SHOWN = ("user", "assistant")


class LazyEntries:
    """The entries of a resumed history by position; ``[k]`` makes entry ``k`` (once).
    Deliberately not iterable: walking it would make every entry."""

    def __init__(self, source: HistorySource, indexes: list[int], outcomes: Mapping[str, ToolOutcome]) -> None:
        self._source = source
        self._indexes = indexes
        """The message index of each entry, oldest first."""
        self._outcomes = outcomes
        self._made: dict[int, MessageEntry] = {}

    def __len__(self) -> int:
        return len(self._indexes)

    def __getitem__(self, position: int) -> MessageEntry:
        entry = self._made.get(position)
        if entry is None:
            entry = self._made[position] = MessageEntry(self._source, self._indexes[position], self._outcomes)
        return entry

    @property
    def made(self) -> int:
        """How many entries exist as objects (the rest are positions and estimates)."""
        return len(self._made)

    def sizes(self, width: int, md: RenderMarkdown) -> list[int]:
        """Each entry's height at ``width`` plus its separator line: the real height of an
        entry rendered at this width, else an estimate — without making entries, except for
        messages already in memory (their exact estimate costs nothing)."""
        return self._sizes(width, lambda e: e.height(width, md) if e.cached(width) else e.estimate(width))

    def estimate(self, width: int) -> int:
        """All entries' estimated lines with the separators between them."""
        return max(0, sum(self._sizes(width, lambda e: e.estimate(width))) - 1)

    def _sizes(self, width: int, size_of: Callable[[MessageEntry], int]) -> list[int]:
        source, made = self._source, self._made
        hint, role, parsed = source.size_hint, source.role, source.is_parsed
        out: list[int] = []
        for position, index in enumerate(self._indexes):
            entry = made.get(position)
            if entry is None and parsed(index):
                entry = self[position]
            if entry is not None:
                out.append(size_of(entry) + 1)
                continue
            out.append(_estimate(hint(index), role(index) == "user", width) + 1)
        return out


def _estimate(size_hint: int, user: bool, width: int) -> int:
    """Lines of a message never rendered, from its record's size (a user message is cut)."""
    lines = max(1, -(-(size_hint // _BYTES_PER_LINE) // max(1, width)))
    return min(lines, USER_MAX_LINES + 1 if user else _MAX_ESTIMATE)


class MessageEntry(Item):
    """One message of a resumed history, read and laid out when first rendered."""

    def __init__(self, source: HistorySource, index: int, outcomes: Mapping[str, ToolOutcome]) -> None:
        super().__init__()
        self._source = source
        self._index = index
        self._outcomes = outcomes
        self._items: list[Item] | None = None

    def estimate(self, width: int) -> int:
        if self._items is None and self._source.is_parsed(self._index):
            self._read()  # in memory already: an exact estimate costs nothing
        if self._items is not None:
            return sum(i.estimate(width) for i in self._items) + max(0, len(self._items) - 1)
        return _estimate(self._source.size_hint(self._index), self._source.role(self._index) == "user", width)

    def _render(self, width: int, md: RenderMarkdown) -> list[Line]:
        out: list[Line] = []
        for item in self._read():
            if out:
                out.append(())
            out.extend(item.lines(width, md))
        return out

    def _read(self) -> list[Item]:
        if self._items is None:
            try:
                self._items = self._build()
            except MinicodeError as e:  # a damaged record must not take the screen down
                self._items = [TextItem(f"this message cannot be shown: {e}", "class:error", "✗ ")]
        return self._items

    def _build(self) -> list[Item]:
        source, index = self._source, self._index
        message = source.peek(index)
        results: dict[str, str | None] = {}
        follow = index + 1
        if message.tool_calls:  # its results follow it: read them for the status of each call
            while follow < len(source) and source.role(follow) == "tool":
                result = source.peek(follow)
                if result.tool_call_id is not None:
                    results[result.tool_call_id] = result.content
                follow += 1
        items = message_items(message, results, self._outcomes)
        end = source.turn_end(follow)  # a task ended with this entry: its "■ done · …" line, as live
        if end is not None:
            items.append(TextItem(end.text, "class:stats" if end.done else "class:status.bad", "■ "))
        return items
