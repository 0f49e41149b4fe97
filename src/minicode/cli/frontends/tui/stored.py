"""Finished answers kept as a place in the session file instead of their text (issue 16 item 4).

A long run's screen would otherwise hold every answer it showed, long after the conversation
let go of it (a compaction drops summarised messages from memory; the screen was their last
holder). So once a turn is ``KEEP_TURNS`` turns old, ``Offload`` finds each of its finished
answers among the session's messages (the same text at a known record place, ``MessageLog
.where``) and the transcript swaps the entry for a ``StoredAnswer``: the record's place, a
checksum of the text, the block heights of each width it was laid out at (2 bytes a block)
and three numbers for estimates. When a frame, the idle re-wrap after a resize, the exit
printout or a search needs the entry, it reads the record back (``MessageLog.read_at``) and
makes the answer again with its heights as they were — nothing moves on screen — and keeps it
while it is among the ``RESIDENT`` stored entries used last (``Residency``): what is near the
viewport stays rendered, the rest lets go again. A record that cannot be read back (the file
was cut or rewritten underneath) shows one line saying so, never a crash. Answers not found
in the file (cut off, or a file that could not be written) stay as they were. Finished
reasoning goes the same way (``StoredReasoning``): collapsed it is one line that needs only
its length, and Ctrl+T reads the text back. The way the resumed history already shows what
it never loaded (``lazy_history.py``). Pure: no prompt_toolkit, no rich.
"""

from __future__ import annotations

import zlib
from array import array
from collections import OrderedDict, deque
from typing import Callable, Protocol, Sequence, TypeVar

from minicode.cli.frontends.tui.answer import AnswerItem, Kept, kept_height, kept_rendered
from minicode.cli.frontends.tui.items import Item, Line, ReasoningItem, RenderMarkdown, TextItem
from minicode.cli.frontends.tui.text import cut_cells, neutralise
from minicode.errors import MinicodeError
from minicode.provider.types import Message

__all__ = ["KEEP_TURNS", "RESIDENT", "Offload", "RecordLog", "Residency", "StoredAnswer", "StoredReasoning",
           "record_log"]

KEEP_TURNS = 3
"""The answers of the last turns stay as they are (the ones a user reads back most)."""
RESIDENT = 8
"""Stored answers kept made at once: a screen or two around the viewport."""

Slot = tuple[int, int, int]
_E = TypeVar("_E", AnswerItem, ReasoningItem)


class RecordLog(Protocol):
    """What is needed of the session's messages (``session.log.MessageLog`` has it all)."""

    def __len__(self) -> int: ...

    def role(self, index: int) -> str: ...

    def peek(self, index: int) -> Message: ...

    def where(self, index: int) -> Slot | None: ...

    def raw_id(self, index: int) -> int:
        """The message's place among all message records ever written (never reused)."""

    raw_count: int

    def read_at(self, slot: Slot) -> Message: ...


def record_log(messages: Sequence[Message]) -> RecordLog | None:
    """``messages`` when its records can be read back by place (a plain list cannot)."""
    if all(hasattr(messages, name) for name in ("role", "peek", "where", "read_at", "raw_id", "raw_count")):
        return messages  # type: ignore[return-value]
    return None


def checksum(text: str) -> int:
    return zlib.crc32(text.encode("utf-8", "surrogatepass"))


class Residency:
    """The stored entries made now, least recently used first; past ``limit`` the oldest
    lets go of what it made."""

    def __init__(self, limit: int = RESIDENT) -> None:
        self.limit = limit
        self._made: OrderedDict[StoredAnswer, None] = OrderedDict()

    def __len__(self) -> int:
        return len(self._made)

    def touch(self, entry: StoredAnswer) -> None:
        self._made[entry] = None
        self._made.move_to_end(entry)
        while len(self._made) > self.limit:
            oldest, _ = self._made.popitem(last=False)
            oldest.release()

    def forget(self, entry: StoredAnswer) -> None:
        self._made.pop(entry, None)


class StoredAnswer(Item):
    """A finished answer by its record's place; made again when used (module docstring)."""

    __slots__ = ("_log", "_slot", "_check", "_residency", "_live", "_kept", "_basis", "failed")

    def __init__(self, log: RecordLog, slot: Slot, check: int, live: AnswerItem, residency: Residency) -> None:
        super().__init__()
        self._log = log
        self._slot = slot
        self._check = check
        self._residency = residency
        self._live: Item | None = live
        live.watch(self._resized)
        self._kept: Kept = ()
        """Per width laid out: the blocks' heights, and which were rendered (``answer.Kept``)."""
        self._basis = live.basis()
        self.failed = ""
        """Why the record could not be read back (then a line says so, for good)."""

    @property
    def resident(self) -> bool:
        """Whether the answer is made now (its text in memory)."""
        return self._live is not None

    def release(self) -> None:
        """Let go of the made answer, keeping its heights (a failed read-back's line stays)."""
        live = self._live
        if live is None or self.failed or not isinstance(live, AnswerItem):
            return
        self._kept = live.kept_layouts()
        self._live = None
        self._residency.forget(self)

    def _use(self) -> Item:
        live = self._live
        if live is None:
            live = self._live = self._read_back()
            live.watch(self._resized)
        if not self.failed:
            self._residency.touch(self)
        return live

    def _read_back(self) -> Item:
        try:
            message = self._log.read_at(self._slot)
            answer = AnswerItem(message.content or "", finished=True)
            if checksum(answer.text) != self._check:
                raise MinicodeError("its record in the session file holds other text now")
        except (MinicodeError, OSError) as e:
            self.failed = str(e) or type(e).__name__
            self._resized()  # one line now, whatever it was
            return TextItem(f"this answer can no longer be shown: {self.failed}", "class:error", "✗ ")
        answer.restore_layouts(self._kept)
        self._kept = ()
        return answer

    # --- the Item API -----------------------------------------------------------------------
    def height(self, width: int, md: RenderMarkdown) -> int:
        if self._live is not None:
            return self._live.height(width, md)
        codes = self._codes(width)
        return kept_height(codes) if codes is not None else self.estimate(width)

    def _codes(self, width: int) -> array[int] | None:
        for kept_width, codes in self._kept:
            if kept_width == width:
                return codes
        return None

    def estimate(self, width: int) -> int:
        if self._live is not None:
            return self._live.estimate(width)
        lines, cells, blocks = self._basis
        return lines + cells // max(1, width) + max(0, blocks - 1)

    def cached(self, width: int) -> bool:
        return self._live.cached(width) if self._live is not None else self._codes(width) is not None

    def lines(self, width: int, md: RenderMarkdown) -> list[Line]:
        return self._use().lines(width, md)

    def slice(self, width: int, md: RenderMarkdown, start: int, count: int) -> list[Line]:
        return self._use().slice(width, md, start, count)

    def settle(self, width: int, md: RenderMarkdown, more: Callable[[], bool]) -> bool:
        """Re-wrap at ``width`` (after a resize): a stored answer is read back, measured and
        let go again at once, so the re-wrap never pushes the ones on screen out."""
        if self._live is not None:
            return self._live.settle(width, md, more)
        codes = self._codes(width)
        if codes is not None and kept_rendered(codes):
            return True  # every block's real height is known: nothing to re-wrap
        if not more():
            return False
        live = self._live = self._read_back()
        live.watch(self._resized)
        done = live.settle(width, md, more)
        if done:
            self.release()  # its heights are kept; its text goes again
        elif not self.failed:
            self._residency.touch(self)  # cut short: resident until the next slice, or let go
        return done

    def _render(self, width: int, md: RenderMarkdown) -> list[Line]:
        return self.lines(width, md)


class StoredReasoning(Item):
    """Finished reasoning by its record's place. Collapsed (as it is stored) it is one line
    that needs only its length; Ctrl+T reads the text back to show it in full, and
    collapsing it again lets the text go."""

    __slots__ = ("_log", "_slot", "_check", "_chars", "_live")

    def __init__(self, log: RecordLog, slot: Slot, check: int, chars: int) -> None:
        super().__init__()
        self._log = log
        self._slot = slot
        self._check = check
        self._chars = chars
        self._live: Item | None = None

    @property
    def expanded(self) -> bool:
        return self._live is not None

    def toggle(self) -> None:
        self._live = self._read_back() if self._live is None else None
        self._resized()

    def _read_back(self) -> Item:
        try:
            text = neutralise(self._log.read_at(self._slot).reasoning or "")
            if checksum(text) != self._check:
                raise MinicodeError("its record in the session file holds other text now")
        except (MinicodeError, OSError) as e:
            return TextItem(f"this reasoning can no longer be shown: {e or type(e).__name__}", "class:error", "✗ ")
        item = ReasoningItem()
        item.append(text)
        item.finish()
        item.toggle()
        return item

    def lines(self, width: int, md: RenderMarkdown) -> list[Line]:
        if self._live is not None:
            return self._live.lines(width, md)
        # ReasoningItem's collapsed line of finished reasoning (tests compare the two)
        return [(("class:reasoning", cut_cells(f"∴ thought ({self._chars:,} chars)", width)[0]),)]

    def height(self, width: int, md: RenderMarkdown) -> int:
        return len(self.lines(width, md))

    def cached(self, width: int) -> bool:
        return self._live is None or self._live.cached(width)

    def settle(self, width: int, md: RenderMarkdown, more: Callable[[], bool]) -> bool:
        return self._live is None or self._live.settle(width, md, more)

    def _render(self, width: int, md: RenderMarkdown) -> list[Line]:
        return self.lines(width, md)


Found = tuple[int, Item, Slot, int]
"""An entry found in the file: its index, the entry, its record's place, its text's checksum."""


class Offload:
    """Finds the finished answers of each turn in the session file and, ``KEEP_TURNS`` turns
    later, has the transcript swap them for ``StoredAnswer`` entries (``swap``)."""

    def __init__(self, log: RecordLog, swap: Callable[[int, Item], None], residency: Residency | None = None) -> None:
        self._log = log
        self._swap = swap
        self.residency = residency if residency is not None else Residency()
        self._scanned = log.raw_count
        """Message records looked at so far, by raw id (those before this run are the
        replayed history's; a rewind drops messages, never their raw ids)."""
        self._seen = 0
        """Transcript entries looked at so far."""
        self._turns: deque[list[Found]] = deque()

    def turn_finished(self, items: Sequence[Item], shown: Callable[[int], bool]) -> None:
        """A turn ended: find its answers; store those of the turn ``KEEP_TURNS`` back (an
        entry ``shown`` on screen now stays made until the viewport leaves it)."""
        self._turns.append(self._locate(items))
        while len(self._turns) > KEEP_TURNS:
            for index, item, slot, check in self._turns.popleft():
                if index >= len(items) or items[index] is not item:
                    continue  # the transcript was changed meanwhile: leave it
                if isinstance(item, ReasoningItem):
                    if not item.expanded:  # shown in full now: stays as it is
                        self._swap(index, StoredReasoning(self._log, slot, check, len(item.text)))
                    continue
                assert isinstance(item, AnswerItem)
                stored = StoredAnswer(self._log, slot, check, item, self.residency)
                self._swap(index, stored)
                if shown(index):
                    self.residency.touch(stored)
                else:
                    stored.release()

    def _locate(self, items: Sequence[Item]) -> list[Found]:
        """The new complete answers and finished reasoning, paired with the new assistant
        messages of the same text."""
        answers = [(i, item) for i in range(self._seen, len(items))
                   if isinstance(item := items[i], AnswerItem) and item.complete]
        thoughts = [(i, item) for i in range(self._seen, len(items))
                    if isinstance(item := items[i], ReasoningItem) and item.finished and item.text]
        self._seen = len(items)
        log = self._log
        start = len(log)
        while start > 0 and log.raw_id(start - 1) >= self._scanned:
            start -= 1
        found: list[Found] = []
        for index in range(start, len(log)):
            if not (answers or thoughts) or log.role(index) != "assistant":
                continue
            slot = log.where(index)
            if slot is None:
                continue
            try:
                message = log.peek(index)
            except MinicodeError:
                continue
            if message.content:
                text = neutralise(message.content)
                _pair(answers, text, slot, found, lambda a: a.same_blocks(AnswerItem(text, finished=True)))
            if message.reasoning:
                _pair(thoughts, neutralise(message.reasoning), slot, found, lambda r: True)
        self._scanned = log.raw_count
        return found


def _pair(entries: list[tuple[int, _E]], text: str, slot: Slot, found: list[Found],
          same: Callable[[_E], bool]) -> None:
    """The first of ``entries`` showing ``text`` is found at ``slot`` (and leaves ``entries``)."""
    for k, (at, entry) in enumerate(entries):
        if entry.text == text and same(entry):
            found.append((at, entry, slot, checksum(text)))
            del entries[k]
            return
