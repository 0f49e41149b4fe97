"""Walking and searching the input history: Up/Down through earlier messages, Ctrl+R search.

``Recall`` holds the entries (the workspace's stored history first, then this run's
submissions and cleared drafts), where Up/Down stand, and the state of a Ctrl+R search
(the query and the entry it matched). Pure: the file is ``inputlog.py``, the keys ``keys.py``.
"""

from __future__ import annotations

from minicode.cli.frontends.tui.draft import Queued
from minicode.cli.frontends.tui.inputlog import MAX_BYTES, MAX_ENTRIES

__all__ = ["Recall"]


class Recall:
    """Entries oldest first; ``index`` is the one the draft holds while Up/Down walk them."""

    def __init__(self, entries: list[Queued] | None = None) -> None:
        self.entries: list[Queued] = list(entries or [])
        self._bytes = sum(len(e.text) for e in self.entries)
        """Characters of the entries' texts (capped like the file: ``inputlog.MAX_BYTES``)."""
        self.index: int | None = None
        self.hit: int | None = None
        """The entry the search matched (None: nothing matches the query)."""

    def add(self, entry: Queued) -> bool:
        """Keep ``entry`` as the newest; False (not added) when it repeats the newest."""
        self.index = None
        if self.entries and self.entries[-1].text == entry.text:
            return False
        self.entries.append(entry)
        self._bytes += len(entry.text)
        drop = 0  # a day of submissions: the newest that the history file keeps too
        while len(self.entries) - drop > MAX_ENTRIES or (self._bytes > MAX_BYTES and len(self.entries) - drop > 1):
            self._bytes -= len(self.entries[drop].text)
            drop += 1
        if drop:
            del self.entries[:drop]
            self.hit = None
        return True

    def step(self, step: int) -> Queued | None:
        """Up (-1) / Down (+1) from where the walk stands; None past the newest (the empty
        draft). The oldest entry stays at the oldest."""
        newest = len(self.entries)
        index = (newest if self.index is None else self.index) + step
        index = max(0, min(newest, index))
        self.index = None if index == newest else index
        return None if self.index is None else self.entries[self.index]

    def holds(self, text: str) -> bool:
        """Whether ``text`` (the expanded draft) is still exactly the entry the walk stands on."""
        return self.index is not None and self.entries[self.index].text == text

    def search(self, query: str, before: int | None = None) -> Queued | None:
        """The newest entry older than ``before`` whose text contains ``query`` (any case);
        sets ``hit``. An empty query matches the newest entry."""
        needle = query.casefold()
        start = len(self.entries) if before is None else before
        for i in range(min(start, len(self.entries)) - 1, -1, -1):
            if needle in self.entries[i].text.casefold():
                self.hit = i
                return self.entries[i]
        self.hit = None if before is None else self.hit
        return None

    def search_newer(self, query: str) -> Queued | None:
        """The next newer match than ``hit`` (Down while searching); keeps ``hit`` if none."""
        if self.hit is None:
            return None
        needle = query.casefold()
        for i in range(self.hit + 1, len(self.entries)):
            if needle in self.entries[i].text.casefold():
                self.hit = i
                return self.entries[i]
        return None
