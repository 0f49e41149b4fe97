"""Which command a mistyped slash word meant: shared by the full screen and pipe mode.

A first word within ``MAX_DISTANCE`` edits of a command's name (``/exti``), or the start of one
(``/ex``), is a near miss: it gets "did you mean" and is never sent to the model. A path (a
second "/") never is, and a word of three letters or fewer must be one edit away or the start
of a name (``/dev`` is not ``/new``). Standard library only.
"""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["MAX_DISTANCE", "edit_distance", "nearest"]

MAX_DISTANCE = 2
"""A first word this many edits (or fewer) from a command name is a typo, not text."""


def nearest(word: str, names: Iterable[str]) -> str | None:
    """The command name (with its "/") ``word`` is a typo or an unfinished start of, if any."""
    name = word[1:].lower()
    if not word.startswith("/") or not name or "/" in name:
        return None
    candidates = list(names)
    started = next((c for c in candidates if c[1:].startswith(name)), None)
    if started is not None:
        return started
    limit = MAX_DISTANCE if len(name) > 3 else 1
    best: tuple[int, str] | None = None
    for candidate in candidates:
        distance = edit_distance(name, candidate[1:])
        if distance <= limit and (best is None or distance < best[0]):
            best = (distance, candidate)
    return best[1] if best is not None else None


def edit_distance(a: str, b: str) -> int:
    """Optimal string alignment distance: insertions, deletions, substitutions and swaps of
    two neighbours each cost one (``exti`` → ``exit`` is one edit)."""
    if abs(len(a) - len(b)) > MAX_DISTANCE:
        return MAX_DISTANCE + 1  # too far for any suggestion; no need to count exactly
    previous2: list[int] = []
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, start=1):
        row = [i] + [0] * len(b)
        for j, cb in enumerate(b, start=1):
            row[j] = min(previous[j] + 1, row[j - 1] + 1, previous[j - 1] + (ca != cb))
            if i > 1 and j > 1 and ca == b[j - 2] and a[i - 2] == cb:
                row[j] = min(row[j], previous2[j - 2] + 1)
        previous2, previous = previous, row
    return previous[-1]
