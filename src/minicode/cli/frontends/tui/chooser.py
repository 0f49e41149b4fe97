"""The open picker of the full screen, if any, and the answer someone is waiting for.

``choose(picker)`` shows ``picker`` in place of the draft (its filter line takes the focus)
and returns a future: the chosen ``Choice`` on Enter, None on Esc, cancelled with the task that
waits for it. The keys call ``move``, ``pick`` and ``cancel``; the layout shows ``picker``.

A ``question`` picker (its answer changes files) follows the approval's rule: typed text never
answers it — Enter with text on its line is refused, and Enter is ignored for ``ANSWER_GRACE``
after it opens and after the last keystroke (``AnswerGate``); what was typed goes back into the
draft when it closes.
"""

from __future__ import annotations

import asyncio
from typing import Callable

from prompt_toolkit.buffer import Buffer

from minicode.cli.frontends.tui.approval import AnswerGate
from minicode.cli.frontends.tui.picker import Choice, Picker

__all__ = ["Chooser"]


class Chooser:
    def __init__(self, changed: Callable[[], None], focus: Callable[[str], None], *,
                 clock: Callable[[], float] = lambda: 0.0, flash: Callable[[str], None] = lambda _t: None,
                 keep_typed: Callable[[str], None] = lambda _t: None) -> None:
        self.picker: Picker | None = None
        self._gate = AnswerGate(clock)
        self._flash = flash
        self._keep_typed = keep_typed
        self.filter = Buffer(multiline=False, name="picker")
        self.filter.on_text_changed += self._filtered
        self._answer: asyncio.Future[Choice | None] | None = None
        self._changed = changed
        self._focus = focus

    @property
    def open(self) -> bool:
        return self.picker is not None

    def attach(self, focus: Callable[[str], None]) -> None:
        self._focus = focus

    def choose(self, picker: Picker) -> asyncio.Future[Choice | None]:
        """Show ``picker``; the future resolves when the user chooses (or cancels: None)."""
        self.close(None)
        self.picker = picker
        self.filter.reset()
        self._gate.asked()
        answer: asyncio.Future[Choice | None] = asyncio.get_running_loop().create_future()
        answer.add_done_callback(lambda _f: self._closed(answer))
        self._answer = answer
        self._focus("picker")
        self._changed()
        return answer

    def move(self, delta: int) -> None:
        if self.picker is not None:
            self.picker.move(delta)
            self._changed()

    def pick(self) -> None:
        picker = self.picker
        if picker is None or picker.selected is None:
            return
        if picker.question:
            if self.filter.text.strip():
                self._flash("typed text does not answer this question: ↑↓ choose, Enter answers, Esc cancels")
                return
            why = self._gate.too_soon()
            if why is not None:
                self._flash(f"Enter ignored: {why} — press Enter again to answer")
                return
        self.close(picker.selected)

    def cancel(self) -> None:
        self.close(None)

    def close(self, choice: Choice | None) -> None:
        answer = self._answer
        if answer is not None and not answer.done():
            answer.set_result(choice)

    def _closed(self, answer: asyncio.Future[Choice | None]) -> None:
        """The answer is in (or its waiter was cancelled): the picker goes, the draft comes back."""
        if self._answer is answer:
            typed = self.filter.text if self.picker is not None and self.picker.question else ""
            self._answer = None
            self.picker = None
            self._focus("draft")
            if typed.strip():
                self._keep_typed(typed)  # what was typed at the question is the user's text
            self._changed()

    def _filtered(self, _buffer: Buffer) -> None:
        if self.picker is not None:
            self._gate.edited()
            self.picker.set_filter(self.filter.text)
            self._changed()
