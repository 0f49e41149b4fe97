"""The messages of a session as a lazily parsed sequence: ``MessageLog``.

A resumed session may hold 60 MB of history, most of it tool output the next request never
carries (it lies before the compaction checkpoint). Loading therefore keeps only where each
message record is in the file (it checks each one, ``session.reader``, without keeping it); a
message is read (``pread``) and parsed the first time it is needed, and kept from then on. Frontends that only show or export a message use ``peek``,
which parses without keeping, so showing the whole history costs no lasting memory.

Besides the message itself the log knows, without parsing, each message's role (from the
record's first bytes: records start ``{"type":"message","role":…``) and its *raw id*: its
position among all message records ever written to the file. Raw ids never repeat, also
after a rewind drops messages from the conversation (``truncate``), so they name a task for
good (undo snapshots are filed under the raw id of the task's user message).

The log also remembers where each message's record is (also for messages appended in this
run, as the store reports it), so ``release`` can turn the messages a compaction summarised
back into unparsed slots: a long session keeps in memory only what the next request carries
and what was read since, whatever the length of its history.
"""

from __future__ import annotations

import errno
import os
import weakref
from array import array
from typing import Callable, Iterator, Sequence, overload

from minicode.agent.deps import ToolOutcome
from minicode.errors import SessionError
from minicode.provider.types import Message
from minicode.session import records
from minicode.session.turn_ends import TurnEnd, TurnEnds

__all__ = ["FileReader", "MessageLog", "ROLE_CODES", "Slot"]

ROLE_CODES = {"user": ord("u"), "assistant": ord("a"), "tool": ord("t"), "system": ord("s")}
"""One byte per message for its role, so the roles of a long history cost a bytearray."""
_ROLE_NAMES = {code: role for role, code in ROLE_CODES.items()}

Slot = tuple[int, int, int]
"""Where an unparsed message record is: (offset, length, line number)."""
Reader = Callable[[int, int], bytes]


class MessageLog(Sequence[Message]):
    """The conversation (after rewinds): parsed messages and not yet parsed slots."""

    def __init__(self, reader: Reader | None = None, describe: str = "session file") -> None:
        self._items: list[Message | Slot | None] = []
        """A parsed message; a slot (located on load, never parsed); or None: released, its
        record's place is in ``_where`` (24 bytes, not a tuple of three ints)."""
        self._roles = bytearray()
        self._raw = array("q")
        self._where = array("q")
        """Three numbers a message: its record's offset, length and line, once known (an
        appended message's from the store, a slot's when it is parsed); length 0: unknown."""
        self._released = 0
        """Messages before this index were released (see ``release``)."""
        self.raw_count = 0
        """Message records ever written to the file (the next message's raw id)."""
        self.outcomes: dict[str, ToolOutcome] = {}
        self.turn_ends = TurnEnds()
        """How each task ended, by the number of messages before its turn_end record."""
        self._read = reader
        self._describe = describe

    # --- building ------------------------------------------------------------------------
    def append(self, message: Message, where: Slot | None = None) -> None:
        """Keep ``message``; ``where`` is its record in the file (lets ``release`` drop it)."""
        self._items.append(message)
        self._roles.append(ROLE_CODES[message.role])
        self._raw.append(self.raw_count)
        self._where.extend(where if where is not None and self._read is not None else (0, 0, 0))
        self.raw_count += 1

    def extend_slots(self, slots: list[Slot], roles: bytes | bytearray) -> None:
        """Messages located but not parsed, in file order; ``roles`` one ``ROLE_CODES`` byte each."""
        self._items.extend(slots)
        self._roles.extend(roles)
        self._where.frombytes(bytes(3 * self._where.itemsize * len(slots)))  # filled when parsed
        self._raw.extend(range(self.raw_count, self.raw_count + len(slots)))
        self.raw_count += len(slots)

    def truncate(self, keep: int) -> None:
        """Keep the first ``keep`` messages (a rewind); raw ids are not reused."""
        del self._items[keep:]
        del self._roles[keep:]
        del self._raw[keep:]
        del self._where[3 * keep :]
        self.turn_ends.truncate(keep)
        if keep < self._released:  # back before the summarised part: every message may be sent again
            self._released = 0

    def release(self, upto: int) -> int:
        """Drop the parsed messages before index ``upto`` from memory (a compaction summarised
        them): each becomes a slot again, read from the file when next needed — and from
        then on read without being kept, like ``peek``. A message whose record is unknown
        (appended without a file) stays. Returns how many were dropped; costs the messages
        not released before."""
        upto = min(upto, len(self._items))
        dropped = 0
        where = self._where
        kept_ids = {m.tool_call_id for m in self._items[upto:] if isinstance(m, Message) and m.tool_call_id}
        for i in range(self._released, upto):
            item = self._items[i]
            if isinstance(item, Message) and where[3 * i + 1] > 0:
                self._items[i] = None
                # its outcome is read back with the message (unless a kept result has its id)
                if item.tool_call_id is not None and item.tool_call_id not in kept_ids:
                    self.outcomes.pop(item.tool_call_id, None)
                dropped += 1
        self._released = max(self._released, upto)
        return dropped

    # --- reading -------------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self._items)

    @overload
    def __getitem__(self, index: int) -> Message: ...
    @overload
    def __getitem__(self, index: slice) -> list[Message]: ...
    def __getitem__(self, index: int | slice) -> Message | list[Message]:
        if isinstance(index, slice):
            return [self._get(i) for i in range(*index.indices(len(self._items)))]
        if index < 0:
            index += len(self._items)
        if not 0 <= index < len(self._items):
            raise IndexError("message index out of range")
        return self._get(index)

    def __iter__(self) -> Iterator[Message]:
        for i in range(len(self._items)):
            yield self._get(i)

    def __reversed__(self) -> Iterator[Message]:
        for i in range(len(self._items) - 1, -1, -1):
            yield self._get(i)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence) or isinstance(other, (str, bytes)):
            return NotImplemented
        return len(other) == len(self) and all(a == b for a, b in zip(self, other))

    __hash__ = None  # type: ignore[assignment]

    def peek(self, index: int) -> Message:
        """Message ``index``, parsed but not kept (for showing or exporting a long history)."""
        item = self._items[index]
        return item if isinstance(item, Message) else self._parse(self._slot(index))

    def role(self, index: int) -> str:
        """The role of message ``index`` without parsing it."""
        return _ROLE_NAMES[self._roles[index]]

    def user_indexes(self) -> list[int]:
        """Indexes of the user messages, oldest first, without parsing anything."""
        code = ROLE_CODES["user"]
        out: list[int] = []
        find = self._roles.find
        i = find(code)
        while i >= 0:
            out.append(i)
            i = find(code, i + 1)
        return out

    def is_parsed(self, index: int) -> bool:
        return isinstance(self._items[index], Message)

    def size_hint(self, index: int) -> int:
        """Roughly how large message ``index`` is (its record's bytes), without parsing it."""
        item = self._items[index]
        if isinstance(item, Message):
            return len(item.content or "") + sum(len(c.arguments) + 40 for c in item.tool_calls) + 40
        return self._slot(index)[1]

    def where(self, index: int) -> Slot | None:
        """Where message ``index``'s record is in the file (offset, length, line), when known
        (not for a message appended without a file): a frontend may drop what it shows of the
        message and read it back later with ``read_at`` (rewinds do not move records)."""
        item = self._items[index]
        if isinstance(item, tuple):
            return item
        at = 3 * index
        if self._where[at + 1] <= 0:
            return None
        return self._where[at], self._where[at + 1], self._where[at + 2]

    def read_at(self, slot: Slot) -> Message:
        """The message whose record is at ``slot`` (from ``where``), parsed and not kept;
        SessionError when the file no longer holds a message record there."""
        return self._parse(slot)

    def raw_id(self, index: int) -> int:
        return self._raw[index]

    def turn_end(self, count: int) -> TurnEnd | None:
        """How the task whose last message is message ``count - 1`` ended (None: no task
        ended there, or its record cannot be read)."""
        return self.turn_ends.get(count, self._read)

    def parsed_count(self) -> int:
        """How many messages are held parsed (the rest are only located)."""
        return sum(1 for item in self._items if isinstance(item, Message))

    def close(self) -> None:
        """Stop reading the file; later access to a message never parsed raises SessionError."""
        if isinstance(self._read, FileReader):
            self._read.close()
        self._read = None

    def verify(self) -> None:
        """Parse every message not parsed yet, without keeping it: raises SessionError for
        the first damaged record (with its line number)."""
        for i, item in enumerate(self._items):
            if not isinstance(item, Message):
                self._parse(self._slot(i))

    # --- parsing -------------------------------------------------------------------------
    def _get(self, index: int) -> Message:
        item = self._items[index]
        if isinstance(item, Message):
            return item
        slot = self._slot(index)
        message = self._parse(slot)
        if index >= self._released:  # a released (summarised) message is not kept again
            self._items[index] = message
            if item is not None:  # a slot of the load: remember where, for ``release``
                self._where[3 * index : 3 * index + 3] = array("q", slot)
        return message

    def _slot(self, index: int) -> Slot:
        item = self._items[index]
        if isinstance(item, tuple):
            return item
        at = 3 * index
        return self._where[at], self._where[at + 1], self._where[at + 2]

    def _parse(self, slot: Slot) -> Message:
        offset, length, line = slot
        if self._read is None:
            raise SessionError(f"{self._describe}: message at line {line} cannot be read (the file is closed)")
        try:
            raw = self._read(offset, length)
            if len(raw) != length:
                raise ValueError("the file is shorter than when it was opened")
            message, outcome = records.message_from_line(raw)
        except OSError as e:
            raise SessionError(f"cannot read {self._describe} at line {line}: {e.strerror or e}") from e
        except (ValueError, TypeError) as e:
            raise SessionError(f"{self._describe} is corrupt at line {line} ({e}); this message cannot be used") from e
        if outcome is not None and message.tool_call_id is not None:
            self.outcomes[message.tool_call_id] = outcome
        return message


class FileReader:
    """Reads a file by offset through a descriptor of its own (a duplicate of the one given),
    so the messages stay readable after the store closes its descriptor. The duplicate is
    closed by ``close`` or, at the latest, when the reader is garbage collected."""

    def __init__(self, fd: int) -> None:
        self._fd = os.dup(fd)
        self._finalizer = weakref.finalize(self, os.close, self._fd)

    def __call__(self, offset: int, length: int) -> bytes:
        if not self._finalizer.alive:
            raise OSError(errno.EBADF, "the session file is closed")
        return os.pread(self._fd, length, offset)

    def close(self) -> None:
        self._finalizer()
