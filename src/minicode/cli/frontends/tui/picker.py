"""A list to choose from in the full screen: sessions (/resume), earlier messages (/rewind),
and the yes/no of /undo. Typing filters it, Up/Down move, Enter chooses, Esc cancels.

Pure (no prompt_toolkit): ``Picker`` holds the choices, the filter and the selection, and lays
out the lines to show — group headings (Today, Yesterday, a date), the selected row marked —
within a height, scrolled so the selection stays visible. The layout and the keys drive it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from minicode.cli.frontends.tui.text import Line, cell_width, fit_cells, neutralise

__all__ = ["Choice", "Picker"]


@dataclass(frozen=True, slots=True)
class Choice:
    key: str
    """What choosing it returns (a session id, a message index, "yes")."""
    label: str
    detail: str = ""
    """Shown dim after the label (e.g. "5 min ago · 42 msgs")."""
    group: str = ""
    """A heading above the first choice of each group (kept in the given order)."""
    search: str = ""
    """What the filter matches besides the label (e.g. the whole id)."""


@dataclass
class Picker:
    title: str
    choices: list[Choice]
    hint: str = "type to filter · ↑↓ move · Enter choose · Esc cancel"
    filter_text: str = ""
    index: int = 0
    empty: str = "nothing matches"
    question: bool = False
    """Its answers change files (/undo, /rewind's restore): typing never filters or answers
    it, and Enter waits out the approval's grace (``Chooser.pick``)."""
    _shown: list[Choice] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._shown = list(self.choices)

    def set_filter(self, text: str) -> None:
        """Keep the choices whose label, detail or search text hold every word of ``text``."""
        self.filter_text = text
        if self.question:
            return  # typed text is not an answer: the choices stay as they are
        words = text.lower().split()
        self._shown = [c for c in self.choices
                       if all(w in f"{c.label} {c.detail} {c.search} {c.key}".lower() for w in words)]
        self.index = 0

    @property
    def shown(self) -> list[Choice]:
        return self._shown

    def move(self, delta: int) -> None:
        if self._shown:
            self.index = max(0, min(len(self._shown) - 1, self.index + delta))

    @property
    def selected(self) -> Choice | None:
        return self._shown[self.index] if self._shown else None

    def needed_rows(self) -> int:
        """Rows to show everything: title, hint, the choices and their group headings."""
        groups = len({c.group for c in self._shown if c.group})
        return 2 + max(1, len(self._shown) + groups)

    def lines(self, width: int, height: int) -> list[Line]:
        """The title and hint, then the visible rows (headings included) around the selection."""
        head: list[Line] = [(("class:picker.title", fit_cells(neutralise(self.title), width)),),
                            (("class:picker.hint", fit_cells(self.hint, width)),)]
        rows, selected_row = self._rows(width)
        room = max(1, height - len(head))
        if not rows:
            return head + [(("class:picker.hint", self.empty),)]
        top = max(0, min(selected_row - room // 2, len(rows) - room))
        return head + rows[top : top + room]

    def _rows(self, width: int) -> tuple[list[Line], int]:
        rows: list[Line] = []
        selected_row = 0
        group = None
        for i, choice in enumerate(self._shown):
            if choice.group and choice.group != group:
                rows.append((("class:picker.group", fit_cells(choice.group, width)),))
                group = choice.group
            if i == self.index:
                selected_row = len(rows)
            rows.append(self._row(choice, width, i == self.index))
        return rows, selected_row

    def _row(self, choice: Choice, width: int, selected: bool) -> Line:
        mark = "› " if selected else "  "
        label = neutralise(" ".join(choice.label.split()))
        detail = f"  {choice.detail}" if choice.detail else ""
        room = max(1, width - len(mark) - cell_width(detail))
        text = fit_cells(label, room)
        style = "class:picker.selected" if selected else "class:picker.item"
        line: Line = ((style, mark + text),)
        if detail and cell_width(mark + text + detail) <= width:
            line += (("class:picker.detail", detail),)
        return line
