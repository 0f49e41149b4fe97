"""Runaway output: a streamed answer that repeats the same span over and over (pure).

A small model can fall into a loop and generate thousands of tokens of one paragraph, line
or phrase repeated until the output limit (issue 25: 6,000+ tokens once). ``RepetitionGuard``
is fed the streamed deltas and says when the text's tail is *exactly* periodic for long
enough that no real answer looks like it: the last ``MIN_REPEATED_CHARS`` characters or more
are copies of one span (period 1 to ``MAX_PERIOD`` characters), at least ``MIN_COPIES`` of
them. Exactness is what keeps legitimate repetitive output safe: similar code lines, table
rows, numbered lists and generated rows all differ somewhere within a period; an 80-column
``====`` rule is far below the length.

Cheap per delta: the text is checked at most once every ``CHECK_EVERY`` new characters, and
a check looks only at the last ``WINDOW`` characters (a few ``rfind`` and slice compares in
C), never the whole text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = [
    "CHECK_EVERY",
    "GROWING_LINES",
    "MAX_PERIOD",
    "MIN_COPIES",
    "MIN_REPEATED_CHARS",
    "Repetition",
    "RepetitionGuard",
    "SMALL_MODEL_COPIES",
    "SMALL_MODEL_REPEATED_CHARS",
    "one_copy",
]

MIN_REPEATED_CHARS = 2000
"""How long the repeated tail must be (~500 tokens): a 25-line block of one 80-column line,
500 copies of a 4-character phrase. Shorter exact repetition happens in real answers."""
MIN_COPIES = 4
"""Copies of the span at least: a 600-character paragraph must come 4 times (2,400 characters)."""
MAX_PERIOD = 1500
"""The longest span looked for; longer loops are caught by the output limit."""
CHECK_EVERY = 64
"""New characters between two checks (a check costs a few microseconds)."""
_KEY = 24
"""The tail characters whose earlier occurrences are the candidate periods."""
_CANDIDATES = 12
"""Earlier occurrences of the key tried per check (the nearest ones)."""
WINDOW = MAX_PERIOD * MIN_COPIES + CHECK_EVERY
"""The characters of the tail a check looks at (what the guard keeps)."""


@dataclass(frozen=True, slots=True)
class Repetition:
    """What was found: the repeated span's length and how much of the tail repeats it."""

    period: int
    repeated: int
    """Characters at the end that are copies of the span (at least ``MIN_REPEATED_CHARS``)."""
    growing: bool = False
    """Not copies: lines of one shape, each longer than the last (``GROWING_LINES``); ``period``
    is the first line's length, ``repeated`` the run's."""

    @property
    def copies(self) -> int:
        return self.repeated // self.period


SMALL_MODEL_REPEATED_CHARS = 600
"""``MIN_REPEATED_CHARS`` for a small model (the assists on): its loops are a short line over
and over ("- No changes were made to textkit/slug.py", 90 s of it on 2 cores before the
2,000 characters were reached), and its answers are short. So that a box or a ruled table
still never trips it, such a tail must also be ``SMALL_MODEL_COPIES`` copies of a span that
holds a letter or a digit."""
SMALL_MODEL_COPIES = 10


GROWING_LINES = 12
"""For a small model: this many lines in a row of one shape, each longer than the one before, are
a counting loop — ``('a b c d', 'd c b a'),`` then ``('a b c d e', 'e d c b a'),`` and on, 2,000
tokens of test cases in one forced write (200 s on 2 cores). No exact span repeats, so the
periodic check never sees it; a real file does not grow by one step a line for this long."""
_LINE_BREAK = re.compile(r"\n|\\n")  # a real newline, or one escaped in a JSON string being streamed
_WORDS = re.compile(r"[A-Za-z0-9_]+(?:[ ,]+[A-Za-z0-9_]+)*")


def _growing_tail(tail: str) -> Repetition | None:
    """The run of whole lines at the end of ``tail`` of one shape (words and numbers alike), each
    longer than the last, when it is ``GROWING_LINES`` long or more."""
    lines = _LINE_BREAK.split(tail)[1:-1]  # whole lines: the first may be cut, the last unfinished
    if len(lines) < GROWING_LINES:
        return None
    shape = _WORDS.sub("W", lines[-1])
    run = 1
    while run < len(lines):
        line, after = lines[-run - 1], lines[-run]
        if len(line) >= len(after) or _WORDS.sub("W", line) != shape or "W" not in shape:
            break
        run += 1
    if run < GROWING_LINES:
        return None
    start = tail.rfind(lines[-run], 0, len(tail) - sum(len(line) for line in lines[-run + 1 :]))
    return Repetition(len(lines[-run]), len(tail) - start, growing=True)


def _needed(period: int, min_repeated: int) -> int:
    copies = MIN_COPIES if min_repeated >= MIN_REPEATED_CHARS else SMALL_MODEL_COPIES
    return max(min_repeated, copies * period)


class RepetitionGuard:
    """Fed one stream's text deltas (one guard for the answer, one for the reasoning).
    ``min_repeated``: how long the exactly repeated tail must be (``MIN_REPEATED_CHARS``, or
    ``SMALL_MODEL_REPEATED_CHARS`` with its extra conditions)."""

    __slots__ = ("_min", "_tail", "_unchecked", "total")

    def __init__(self, min_repeated: int = MIN_REPEATED_CHARS) -> None:
        self._min = min_repeated
        self._tail = ""
        self._unchecked = 0
        self.total = 0
        """Characters fed so far."""

    def feed(self, text: str) -> Repetition | None:
        """Add a delta; the repetition its tail now ends in, if it is a runaway."""
        if not text:
            return None
        self.total += len(text)
        self._tail = (self._tail + text)[-WINDOW:]
        self._unchecked += len(text)
        if self._unchecked < CHECK_EVERY or len(self._tail) < self._min:
            return None
        self._unchecked = 0
        found = _periodic_tail(self._tail, self._min)
        if found is None and self._min < MIN_REPEATED_CHARS:
            found = _growing_tail(self._tail)
        return found


def _periodic_tail(tail: str, min_repeated: int = MIN_REPEATED_CHARS) -> Repetition | None:
    """The smallest period p whose copies make up the last ``_needed(p)`` characters or more."""
    size = len(tail)
    key = tail[-_KEY:]
    limit = size - 1  # occurrences that start before the key itself
    for _ in range(_CANDIDATES):
        found = tail.rfind(key, 0, limit)
        if found < 0:
            return None
        period = size - _KEY - found
        if period > MAX_PERIOD:
            return None
        need = _needed(period, min_repeated)
        if need <= size and tail[size - need + period :] == tail[size - need : size - period]:
            if min_repeated < MIN_REPEATED_CHARS and not any(c.isalnum() for c in tail[size - period :]):
                return None  # a small model's box or rule: only words looping count at this length
            return Repetition(period, _extent(tail, period, need))
        limit = found + _KEY - 1  # the next one starts before this one
    return None


def _extent(tail: str, period: int, known: int) -> int:
    """How many characters at the end repeat with ``period`` (at least ``known``), in the tail."""
    size = len(tail)
    start = size - known
    while start - period >= 0 and tail[start - period : start] == tail[start : start + period]:
        start -= period
    return size - start


def one_copy(text: str, found: Repetition) -> str:
    """``text`` (whose tail ``found`` was found in) with one copy of the repeated span left:
    the copies would only teach the model to repeat itself in the next request. Runs once,
    at the cut; the repetition may reach back beyond what the guard kept. A growing run keeps
    its first line."""
    if found.growing:
        return text[: len(text) - found.repeated + found.period]
    return text[: len(text) - _extent(text, found.period, found.repeated) + found.period]
