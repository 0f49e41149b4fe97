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

A bracketed paste is text from its start marker to the end of the input that arrives with it:
everything read after its end marker in the same read, and in reads within ``BURST_GAP``, is
part of it — an Enter that came with the paste, and the rest of a paste whose text contains
the end marker ``ESC[201~`` (a clipboard can hold one; the terminal passes it through, and
prompt_toolkit ends the paste there). That text goes into the draft as received (the markers
the terminal added removed, an inner one kept), never as keys, so nothing in a paste can
submit, interrupt or answer. A read that ends with a stray end marker is the tail of such a
paste and is text too. A lone Enter within ``ENTER_GUARD`` after any paste belongs to it.

``BurstInput`` wraps the real ``Input`` and applies ``Bursts`` to what it reads; keys that are
not text (arrows, mouse, Esc sequences) pass through in order. Time comes
from the injected clock.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import Callable, Sequence

from prompt_toolkit.input import Input
from prompt_toolkit.key_binding import KeyPress
from prompt_toolkit.keys import Keys

__all__ = ["BURST_GAP", "ENTER_GUARD", "PASTE_END", "PASTE_START", "BurstInput", "Bursts", "paste_text"]

BURST_GAP = 0.05
"""Reads this close to a held burst continue it (a paste split across reads)."""
ENTER_GUARD = 0.1
"""A lone Enter this soon after a detected paste belongs to it: nobody reacts that fast."""

PASTE_START = "\x1b[200~"
PASTE_END = "\x1b[201~"

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


def _raw(keys: Sequence[KeyPress]) -> str:
    """The bytes ``keys`` were parsed from (a multi-key match carries them on its first key)."""
    return "".join(PASTE_START + k.data + PASTE_END if k.key == Keys.BracketedPaste else k.data
                   for k in keys)


def paste_text(raw: str) -> str:
    """A paste's text from the raw input it arrived as (see the module docstring): the
    terminal's start marker and final end marker dropped; when the input after the paste did
    not end with an end marker, the paste's own end marker was the real one and what followed
    was typed into it. Two pastes read together join without their markers."""
    if raw.startswith(PASTE_START):
        raw = raw[len(PASTE_START):]
    if raw.endswith(PASTE_END):
        raw = raw[:-len(PASTE_END)]
    elif PASTE_END in raw:
        raw = raw.replace(PASTE_END, "", 1)
    return raw.replace(PASTE_END + PASTE_START, "")


class Bursts:
    """The burst rule over reads of key presses (see the module docstring)."""

    def __init__(self, clock: Callable[[], float]) -> None:
        self._clock = clock
        self._held: list[str | KeyPress] = []
        """A held burst: runs of text (joined) and the other keys between them, in order."""
        self._paste: str | None = None
        """A held bracketed paste (raw, after the held burst): all input until quiet joins it."""
        self._last_read = float("-inf")
        self._pasted_at = float("-inf")
        self.pastes = 0
        """How many bursts became pastes (for tests and the status of the input layer)."""

    @property
    def holding(self) -> bool:
        return bool(self._held) or self._paste is not None

    def feed(self, keys: list[KeyPress]) -> list[KeyPress]:
        """One read's keys; returns what to process now (held keys come out of ``flush``)."""
        now = self._clock()
        out: list[KeyPress] = []
        if self.holding and now - self._last_read > BURST_GAP:
            out.extend(self.flush())  # the input paused (the loop was busy): that burst is over
        self._last_read = now
        if self._paste is not None:
            self._paste += _raw(keys)
            return out
        start = next((i for i, k in enumerate(keys) if k.key == Keys.BracketedPaste), None)
        if start is None and _raw(keys).endswith(PASTE_END):
            start = 0  # the tail of a paste that an end marker in its text cut short
        if start is not None:
            out.extend(self._plain(keys[:start], now))
            self._paste = _raw(keys[start:])
            return out
        out.extend(self._plain(keys, now))
        return out

    def _plain(self, keys: list[KeyPress], now: float) -> list[KeyPress]:
        """The burst rule for keys that hold no paste."""
        out: list[KeyPress] = []
        if not keys:
            return out
        if self._held or _starts_burst(keys):
            self._hold(keys)
        elif (len(keys) == 1 and keys[0].key in _ENTER and now - self._pasted_at <= ENTER_GUARD):
            out.append(KeyPress(Keys.BracketedPaste, "\n"))  # the tail of the paste just inserted
            self._pasted_at = now
        else:
            out.extend(keys)
        return out

    def flush(self, late: Sequence[KeyPress] = ()) -> list[KeyPress]:
        """The held burst as key presses: each text run one paste, other keys as they were,
        then the held bracketed paste. ``late`` are the keys the parser gave up at the same
        time (e.g. a lone Esc): part of a held paste, else after the burst."""
        held, self._held = self._held, []
        paste, self._paste = self._paste, None
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
        if paste is None:
            return [*out, *late]
        text = paste_text(paste + _raw(late))
        if text:
            out.append(KeyPress(Keys.BracketedPaste, text))
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
        return self.bursts.flush(self.inner.flush_keys())

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
