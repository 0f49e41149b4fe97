"""Pastes without bracketed paste: a burst of input faster than typing becomes one paste.

A terminal that does not mark a paste (no bracketed paste, or bracketed paste switched off
for a moment) delivers it as plain keys, and every line break in it would be an Enter that
submits. A person cannot type two keys in one read of the terminal, so a read that holds two
or more text keys (printable characters, Enter, Tab) and no lone Esc is a *burst*: it is held, joined with
the reads that follow within ``BURST_GAP`` (a large paste arrives in several reads), and when
the input goes quiet (prompt_toolkit's ``flush_keys``, ``ttimeoutlen`` after the last read) its
text is handed on as one ``Keys.BracketedPaste`` key press — one edit of the draft, never a
submission. A lone Enter within ``ENTER_GUARD`` after such a paste is still part of it (the
tail of a paste split by a slow terminal), not the user's Enter.

``BurstInput`` wraps the real ``Input`` and applies ``Bursts`` to what it reads; keys that are
not text (arrows, mouse, Esc sequences, bracketed pastes) pass through in order. Time comes
from the injected clock.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import Callable

from prompt_toolkit.input import Input
from prompt_toolkit.key_binding import KeyPress
from prompt_toolkit.keys import Keys

__all__ = ["BURST_GAP", "ENTER_GUARD", "BurstInput", "Bursts"]

BURST_GAP = 0.05
"""Reads this close to a held burst continue it (a paste split across reads)."""
ENTER_GUARD = 0.1
"""A lone Enter this soon after a detected paste belongs to it: nobody reacts that fast."""

_ENTER = (Keys.ControlM, Keys.ControlJ)
_TEXT_KEYS = (Keys.ControlM, Keys.ControlJ, Keys.ControlI)


def _is_text(key: KeyPress) -> bool:
    """Printable characters, Enter and Tab: what a paste is made of."""
    if key.key in _TEXT_KEYS:
        return True
    return len(key.key) == 1 and key.key.isprintable()


def _starts_burst(keys: list[KeyPress]) -> bool:
    """Two text keys in one read, and no lone Esc: an Esc followed by characters is a key
    sequence prompt_toolkit does not know (e.g. Shift+Enter as ``ESC[13;2u``), not text."""
    return sum(_is_text(k) for k in keys) >= 2 and not any(k.key == Keys.Escape for k in keys)


class Bursts:
    """The burst rule over reads of key presses (see the module docstring)."""

    def __init__(self, clock: Callable[[], float]) -> None:
        self._clock = clock
        self._held: list[str | KeyPress] = []
        """A held burst: runs of text (joined) and the other keys between them, in order."""
        self._last_read = float("-inf")
        self._pasted_at = float("-inf")
        self.pastes = 0
        """How many bursts became pastes (for tests and the status of the input layer)."""

    @property
    def holding(self) -> bool:
        return bool(self._held)

    def feed(self, keys: list[KeyPress]) -> list[KeyPress]:
        """One read's keys; returns what to process now (held keys come out of ``flush``)."""
        now = self._clock()
        out: list[KeyPress] = []
        if self._held and now - self._last_read > BURST_GAP:
            out.extend(self.flush())  # the input paused (the loop was busy): that burst is over
        self._last_read = now
        if self._held or _starts_burst(keys):
            self._hold(keys)
        elif (len(keys) == 1 and keys[0].key in _ENTER and now - self._pasted_at <= ENTER_GUARD):
            out.append(KeyPress(Keys.BracketedPaste, "\n"))  # the tail of the paste just inserted
            self._pasted_at = now
        else:
            out.extend(keys)
        return out

    def flush(self) -> list[KeyPress]:
        """The held burst as key presses: each text run one paste, other keys as they were."""
        held, self._held = self._held, []
        out: list[KeyPress] = []
        for part in held:
            if isinstance(part, KeyPress):
                out.append(part)
            elif len(part) == 1 and part not in "\r\n\t":
                out.append(KeyPress(part, part))  # one character: just a key
            else:
                out.append(KeyPress(Keys.BracketedPaste, part))
                self.pastes += 1
                self._pasted_at = self._clock()
        return out

    def _hold(self, keys: list[KeyPress]) -> None:
        for key in keys:
            if not _is_text(key):
                self._held.append(key)
            elif self._held and isinstance(self._held[-1], str):
                self._held[-1] += key.data
            else:
                self._held.append(key.data)


class BurstInput(Input):
    """``inner`` with bursts of plain keys turned into pastes (see ``Bursts``)."""

    def __init__(self, inner: Input, clock: Callable[[], float]) -> None:
        self.inner = inner
        self.bursts = Bursts(clock)
        self.unflushed = False
        """Read since the last flush (prompt_toolkit flushes ``ttimeoutlen`` after a read):
        keys may still be held here or in the parser."""

    def read_keys(self) -> list[KeyPress]:
        self.unflushed = True
        return self.bursts.feed(self.inner.read_keys())

    def flush_keys(self) -> list[KeyPress]:
        self.unflushed = False
        # the held burst, then what the parser still held after it (e.g. a lone Esc)
        return [*self.bursts.flush(), *self.inner.flush_keys()]

    def fileno(self) -> int:
        return self.inner.fileno()

    def typeahead_hash(self) -> str:
        return self.inner.typeahead_hash()

    @property
    def closed(self) -> bool:
        return self.inner.closed

    def raw_mode(self) -> AbstractContextManager[None]:
        return self.inner.raw_mode()

    def cooked_mode(self) -> AbstractContextManager[None]:
        return self.inner.cooked_mode()

    def attach(self, input_ready_callback: Callable[[], None]) -> AbstractContextManager[None]:
        return self.inner.attach(input_ready_callback)

    def detach(self) -> AbstractContextManager[None]:
        return self.inner.detach()

    def flush(self) -> None:
        self.inner.flush()

    def close(self) -> None:
        self.inner.close()
