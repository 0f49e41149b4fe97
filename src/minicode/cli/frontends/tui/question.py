"""The model's question (``ask_user``) in the full screen: a Future the agent awaits, and the
panel's state — the rows (the model's options, then "Other… (type an answer)"), the
highlighted one, and whether the answer line is open.

Like the approval's choices, nothing typed answers by itself: ↑/↓ or a digit only move the
highlight, Enter (under the approval's ``AnswerGate``: not right after the question appeared or
the draft changed) confirms it; "Other…" opens the answer line, where Enter sends what was
typed there. Esc declines (the model is told the user declined; the task goes on — a second
Esc stops it, as always). Cancelling the waiting task (Ctrl+C, the timeout) withdraws the
question. Nothing here draws: the controller is told of changes via ``on_change``. No prompt_toolkit.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Callable

from minicode.agent.asking import Answer, AnswerKind, Question

__all__ = ["OTHER", "PendingQuestion", "TuiAsker"]

OTHER = "Other… (type an answer)"
FREE = "Type an answer…"
"""The one row of a question without options."""


@dataclass(slots=True)
class PendingQuestion:
    question: Question
    future: asyncio.Future[Answer]
    selected: int = 0
    typing: bool = False
    """The answer line is open (Other… was chosen): Enter sends its text, Esc goes back."""

    @property
    def rows(self) -> tuple[str, ...]:
        return (*self.question.options, OTHER) if self.question.options else (FREE,)

    @property
    def on_other(self) -> bool:
        return self.selected == len(self.question.options)


class TuiAsker:
    """Asks in the UI. ``on_change(pending_or_None, answer_or_None)`` runs on every transition."""

    def __init__(self, on_change: Callable[[PendingQuestion | None, Answer | None], None]) -> None:
        self.pending: PendingQuestion | None = None
        self._on_change = on_change

    async def ask(self, question: Question) -> Answer:
        future: asyncio.Future[Answer] = asyncio.get_running_loop().create_future()
        self.pending = PendingQuestion(question, future)
        self._on_change(self.pending, None)
        answer: Answer | None = None
        try:
            answer = await future
        finally:
            self.pending = None
            self._on_change(None, answer)
        return answer

    def move(self, step: int) -> bool:
        """Up/Down: the highlight moves, stopping at the ends (no wrap: "Down until the bottom,
        Enter" is always Other…, never the first option)."""
        p = self.pending
        if p is None or p.typing:
            return False
        p.selected = min(max(p.selected + step, 0), len(p.rows) - 1)
        self._on_change(p, None)
        return True

    def highlight(self, number: int) -> bool:
        """A digit: highlight row ``number`` (from 1); False when there is no such row."""
        p = self.pending
        if p is None or p.typing or not 1 <= number <= len(p.rows):
            return False
        p.selected = number - 1
        self._on_change(p, None)
        return True

    def confirm(self) -> bool:
        """Enter on the highlighted row: an option answers; Other… (or the free row) opens the answer line."""
        p = self.pending
        if p is None or p.typing:
            return False
        if p.on_other:
            p.typing = True
            self._on_change(p, None)
        else:
            self._resolve(Answer(AnswerKind.CHOSE, p.question.options[p.selected]))
        return True

    def submit(self, text: str) -> bool:
        """Enter on the answer line: False (nothing sent) while it is blank."""
        p = self.pending
        if p is None or not p.typing or not text.strip():
            return False
        self._resolve(Answer(AnswerKind.ANSWERED, text.strip()))
        return True

    def back(self) -> bool:
        """Esc on the answer line: back to the rows (nothing is sent)."""
        p = self.pending
        if p is None or not p.typing:
            return False
        p.typing = False
        self._on_change(p, None)
        return True

    def decline(self) -> bool:
        """Esc on the rows: the user does not answer."""
        if self.pending is None:
            return False
        self._resolve(Answer(AnswerKind.DECLINED))
        return True

    def _resolve(self, answer: Answer) -> None:
        if self.pending is not None and not self.pending.future.done():
            self.pending.future.set_result(answer)
