"""The draft's pure rules: paste placeholders and the input-height rule.

A paste of more than ``PASTE_PLACEHOLDER_LINES`` lines is shown in the draft as one
placeholder (``[pasted 5,000 lines]``); the full text is kept here and always sent.
Ctrl+O expands the placeholders in place, or collapses expanded pastes back. (Slash
commands: ``commands.py``.)
"""

from __future__ import annotations

from dataclasses import dataclass

from minicode.cli.frontends.tui.text import cell_width

__all__ = ["PASTE_PLACEHOLDER_LINES", "Pastes", "Queued", "input_height", "normalise_paste", "wrapped_line_count"]

PASTE_PLACEHOLDER_LINES = 20
INPUT_MAX_LINES = 6


@dataclass(frozen=True, slots=True)
class Queued:
    """A message as sent (or queued, or kept in the input history): ``text`` is sent,
    ``shown`` (with paste placeholders) is what the transcript, the queued strip and a recall
    show."""

    text: str
    shown: str
    pastes: tuple[tuple[str, str], ...] = ()
    """The placeholders in ``shown`` and their texts, so a recall puts the draft back as it was."""


def input_height(draft_lines: int, rows: int) -> int:
    """Rows for the input: as many as the draft needs, at most min(6, a third), at least one."""
    return max(1, min(draft_lines, INPUT_MAX_LINES, rows // 3))


def wrapped_line_count(text: str, width: int) -> int:
    """Screen lines ``text`` takes with soft wrap at ``width`` cells (a CJK character is two)."""
    width = max(1, width)
    return sum(max(1, -(-cell_width(line) // width)) for line in text.split("\n"))


def normalise_paste(data: str) -> str:
    # Terminals send pasted line breaks as CR; the draft and the model want LF.
    return data.replace("\r\n", "\n").replace("\r", "\n")


class Pastes:
    """Large pastes behind placeholders, for one draft."""

    def __init__(self) -> None:
        self._texts: dict[str, str] = {}
        self._expanded: set[str] = set()

    def text_to_insert(self, data: str) -> str:
        """What a bracketed paste puts into the draft: the text, or a placeholder for it."""
        text = normalise_paste(data)
        lines = text.rstrip("\n").count("\n") + 1
        if lines <= PASTE_PLACEHOLDER_LINES:
            return text
        label = f"[pasted {lines:,} lines]"
        n = 2
        while label in self._texts:
            label = f"[pasted {lines:,} lines #{n}]"
            n += 1
        self._texts[label] = text
        return label

    def expand(self, draft: str) -> str:
        """The draft with every placeholder replaced by its full text (what is sent)."""
        for label, text in self._texts.items():
            if label not in self._expanded:
                draft = draft.replace(label, text, 1)
        return draft

    def toggle(self, draft: str) -> str:
        """Ctrl+O: expand collapsed placeholders if any are present, else collapse expanded ones."""
        collapsed = [label for label in self._texts if label in draft and label not in self._expanded]
        if collapsed:
            for label in collapsed:
                draft = draft.replace(label, self._texts[label], 1)
                self._expanded.add(label)
            return draft
        for label in list(self._expanded):
            if self._texts[label] in draft:
                draft = draft.replace(self._texts[label], label, 1)
                self._expanded.discard(label)
        return draft

    def held(self, draft: str) -> tuple[tuple[str, str], ...]:
        """The collapsed placeholders in ``draft`` with their texts (kept with a queued message)."""
        return tuple((label, text) for label, text in self._texts.items()
                     if label in draft and label not in self._expanded)

    def adopt(self, shown: str, held: tuple[tuple[str, str], ...]) -> str:
        """Take back placeholders of a message returned to the draft; a label already in use
        for another text is renumbered, and ``shown`` is returned with the labels it now has."""
        for label, text in held:
            new = label
            n = 2
            while self._texts.get(new, text) != text:
                new = f"{label[:-1]} #{n}]"
                n += 1
            self._texts[new] = text
            shown = shown.replace(label, new, 1)
        return shown

    def clear(self) -> None:
        self._texts.clear()
        self._expanded.clear()

    def __bool__(self) -> bool:
        return bool(self._texts)
