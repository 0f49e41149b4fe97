"""The keys of a waiting ``ask_user`` question: choose a row, confirm it, type an answer, decline.

A mixin of ``Controller`` (``controller.py``), beside ``approval_keys.py``; the question itself
(rows, highlight, the answer handed back to the agent) is ``question.TuiAsker``, and an Enter too
soon after the question or an edit of the draft is not an answer (``editor``'s gate, shared
with approvals). The state the Controller shares with it is declared below.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable

from prompt_toolkit.buffer import Buffer

from minicode.agent.asking import Answer, Question
from minicode.cli.frontends.tui.editor import Editor
from minicode.cli.frontends.tui.question import PendingQuestion, TuiAsker
from minicode.cli.frontends.tui.view import Transcript

__all__ = ["QuestionKeys"]


class QuestionKeys:
    """What the keys do while the model's question waits (the Controller sets this state up)."""

    tui_asker: TuiAsker
    _asked_question: Question | None
    # the Controller's own
    editor: Editor
    transcript: Transcript
    _on_focus: Callable[[str], None]

    if TYPE_CHECKING:
        @property
        def draft(self) -> Buffer: ...

        def invalidate(self) -> None: ...

        def flash(self, text: str) -> None: ...

    @property
    def question(self) -> PendingQuestion | None:
        return self.tui_asker.pending

    def _question_changed(self, pending: PendingQuestion | None, answer: Answer | None) -> None:
        if pending is not None and pending.question is not self._asked_question:
            self.editor.gate.asked()  # a new question: its grace starts now
            # all of it in the transcript (the panel shows a few lines; PageUp reads the rest)
            self.transcript.note(pending.question.text, "class:notice", "? ")
        if pending is None or not pending.typing:
            self.editor.answer.reset()
        self._asked_question = pending.question if pending is not None else None
        self._on_focus("answer" if pending is not None and pending.typing else "draft")
        self.invalidate()

    def question_choosing(self) -> bool:
        """Whether ↑/↓, the digits and Enter go to the question's rows (not the draft)."""
        p = self.question
        return p is not None and not p.typing and self.editor.gate.owns_keys(not self.draft.text)

    def question_move(self, step: int) -> None:
        self.tui_asker.move(step)

    def question_digit(self, key: str) -> None:
        """1-9 highlight that row (Enter then answers); a digit past the rows says so."""
        if not (key.isdigit() and self.tui_asker.highlight(int(key))):
            p = self.question
            self.flash(f"there {'is' if p is not None and len(p.rows) == 1 else 'are'} only "
                       f"{len(p.rows) if p is not None else 0} to choose from")

    def question_confirm(self) -> None:
        why = self.editor.gate.too_soon()
        if why is not None:
            self.flash(f"Enter ignored: {why} — press Enter again to answer")
            return
        self.tui_asker.confirm()

    def question_decline(self) -> None:
        """Esc: no answer; the model is told the user declined (the task goes on)."""
        if self.tui_asker.decline():
            self.flash("question declined — Esc again stops the task")

    def send_answer(self) -> None:
        if not self.tui_asker.submit(self.editor.answer.text):
            self.flash("type an answer first (Esc goes back to the choices)")

    def answer_back(self) -> None:
        self.editor.answer.reset()
        self.tui_asker.back()
