"""Long text that never repeats itself: a model answer's bulk in tests.

A long run of one character or one line ("A" * 80_000) is what a runaway model streams, and
the loop cuts it (agent/runaway.py); a test that only needs a large answer uses this instead.
"""

from __future__ import annotations

import random

__all__ = ["prose"]

_WORDS = ("the", "model", "reads", "file", "then", "edits", "a", "function", "and", "runs", "tests", "again",
          "config", "value", "returns", "error", "path", "line", "check", "fixed")


def prose(chars: int, *, seed: int = 0, line: int = 0) -> str:
    """``chars`` characters of words in a seeded random order (lines of ``line`` words, if given)."""
    pick = random.Random(seed)
    out: list[str] = []
    size = 0
    count = 0
    while size < chars:
        word = pick.choice(_WORDS)
        count += 1
        sep = "\n" if line and count % line == 0 else " "
        out.append(word + sep)
        size += len(word) + 1
    return "".join(out)[:chars]
