"""The input side of the full-screen session: the draft with its pastes, the input history
(Up/Down, Ctrl+R search, kept per workspace), the denial reason, the answer typed to the
model's question, the answer gate of approvals and questions
and short status messages ("flash").

The controller owns the task and the transcript; this owns what the user is writing. Key
bindings (``keys.py``) call the controller, which calls these. Time comes from the clock the
controller was given.
"""

from __future__ import annotations

from typing import Callable

from prompt_toolkit.buffer import Buffer

from minicode.cli.frontends.tui.approval import AnswerGate
from minicode.cli.frontends.tui.completion import SlashCompleter
from minicode.cli.frontends.tui.draft import Pastes, Queued
from minicode.cli.frontends.tui.inputlog import InputLog
from minicode.cli.frontends.tui.recall import Recall

__all__ = ["FLASH_SECONDS", "Editor"]

FLASH_SECONDS = 4.0


class Editor:
    """Draft, pastes, history, reason and search buffers (see the module docstring)."""

    def __init__(self, clock: Callable[[], float], log: InputLog | None = None) -> None:
        self.clock = clock
        self.draft = Buffer(multiline=True, name="draft", completer=SlashCompleter(), complete_while_typing=True)
        self.reason = Buffer(multiline=False, name="reason")
        self.answer = Buffer(multiline=False, name="answer")
        """The answer typed to the model's question (after "Other…")."""
        self.search = Buffer(multiline=False, name="search")
        self.pastes = Pastes()
        self.log = log
        self.recall = Recall(log.load() if log is not None else [])
        self.gate = AnswerGate(clock)
        self.searching = False
        self._saved: tuple[str, int, tuple[tuple[str, str], ...]] | None = None
        """The draft before a search replaced it: text, cursor, its pastes."""
        self._flash: tuple[str, float] | None = None
        self.draft.on_text_changed += lambda _buffer: self.gate.edited()
        self.search.on_text_changed += lambda _buffer: self._show_match(self.recall.search(self.search.text))

    # --- the draft ------------------------------------------------------------------------
    def take(self) -> Queued | None:
        """The draft as a message (None when blank), kept in the history; the draft is emptied."""
        text = self.draft.text
        if not text.strip():
            return None
        entry = Queued(self.pastes.expand(text), text, self.pastes.held(text))
        if self.recall.add(entry) and self.log is not None:
            self.log.append(entry)
        self._empty_draft()
        self.pastes.clear()
        return entry

    def set_draft(self, shown: str, pastes: tuple[tuple[str, str], ...] = ()) -> None:
        """Replace the draft (its placeholders taken back), cursor at the end."""
        self.pastes.clear()
        self.draft.text = self.pastes.adopt(shown, pastes)
        self.draft.cursor_position = len(self.draft.text)

    def prepend(self, shown: str, pastes: tuple[tuple[str, str], ...] = ()) -> None:
        """Put ``shown`` before what the draft holds (queued messages coming back on Esc)."""
        text = self.pastes.adopt(shown, pastes)
        self.draft.text = text + ("\n" + self.draft.text if self.draft.text else "")
        self.draft.cursor_position = len(self.draft.text)

    def paste(self, data: str) -> None:
        self.draft.insert_text(self.pastes.text_to_insert(data))

    def toggle_paste(self) -> None:
        text = self.pastes.toggle(self.draft.text)
        if text != self.draft.text:
            self.draft.text = text
            self.draft.cursor_position = len(text)

    def clear(self) -> bool:
        """Ctrl+C on a draft with text: empty it (Up brings it back); False if it was empty."""
        text = self.draft.text
        if not text:
            return False
        self.recall.add(Queued(self.pastes.expand(text), text, self.pastes.held(text)))
        self._empty_draft()
        self.pastes.clear()
        return True

    def _empty_draft(self) -> None:
        """Empty the draft; that is an edit too (``Buffer.reset`` fires no change event), so
        an Enter right after it is not an answer."""
        self.draft.reset()
        self.gate.edited()

    # --- Up/Down ----------------------------------------------------------------------------
    def recalling(self) -> bool:
        """Whether Up/Down walk the history: the draft is empty, or is still exactly the entry
        they recalled (an edit makes it a draft again, where Up/Down move the cursor)."""
        if not self.draft.text:
            return bool(self.recall.entries)
        return self.recall.holds(self.pastes.expand(self.draft.text))

    def recall_step(self, step: int) -> None:
        entry = self.recall.step(step)
        index = self.recall.index
        if entry is None:
            self.pastes.clear()
            self._empty_draft()
        else:
            self.set_draft(entry.shown, entry.pastes)
        self.recall.index = index  # the draft's change did not end the walk

    # --- Ctrl+R -------------------------------------------------------------------------------
    def start_search(self) -> None:
        self.searching = True
        text = self.draft.text
        self._saved = (text, self.draft.cursor_position, self.pastes.held(text))
        self.search.reset()
        self._show_match(self.recall.search(""))

    def search_older(self) -> None:
        if self.recall.hit is not None:
            self._show_match(self.recall.search(self.search.text, before=self.recall.hit), keep=True)

    def search_newer(self) -> None:
        self._show_match(self.recall.search_newer(self.search.text), keep=True)

    def end_search(self, accept: bool) -> None:
        """Enter keeps the match in the draft; Esc/Ctrl+G/Ctrl+C put the draft back."""
        self.searching = False
        saved, self._saved = self._saved, None
        if not accept and saved is not None:
            text, cursor, held = saved
            self.set_draft(text, held)
            self.draft.cursor_position = min(cursor, len(self.draft.text))
        self.search.reset()

    def _show_match(self, entry: Queued | None, keep: bool = False) -> None:
        if entry is not None:
            self.set_draft(entry.shown, entry.pastes)
        elif not keep and self._saved is not None:
            self.pastes.clear()
            self.draft.text = ""

    # --- flash ----------------------------------------------------------------------------
    def flash(self, text: str, seconds: float = FLASH_SECONDS) -> None:
        """A short message in the status bar for ``seconds``."""
        self._flash = (text, self.clock() + seconds)

    def end_flash(self) -> None:
        """The message has been seen: the next key or a new task takes the status bar back."""
        self._flash = None

    def flash_text(self) -> str | None:
        if self._flash is None:
            return None
        text, until = self._flash
        if self.clock() >= until:
            self._flash = None
            return None
        return text
