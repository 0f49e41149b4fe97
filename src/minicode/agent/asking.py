"""The Asker protocol: how the loop puts the model's question (the ``ask_user`` tool) to a person.

Beside the ``Approver``: the loop never shows anything itself; each frontend implements
``Asker`` (the full screen's panel, the line question of pipe mode on a terminal) or answers
at once that nobody can be asked (``UnattendedAsker``: no terminal, JSON mode, ``--yes``), so
an unattended run never waits. ``result_text`` is what the model is told, clearly marked.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Protocol

__all__ = ["NO_ANSWER", "Answer", "AnswerKind", "Asker", "Question", "UnattendedAsker", "result_text", "summary"]

NO_ANSWER = "nobody can be asked here (no terminal)"


@dataclass(frozen=True, slots=True)
class Question:
    """One ``ask_user`` call, already checked by the tool (bounded, no empty or repeated options)."""

    call_id: str
    text: str
    options: tuple[str, ...] = ()


class AnswerKind(enum.Enum):
    ANSWERED = "answered"  # typed an answer
    CHOSE = "chose"  # picked one of the options
    DECLINED = "declined"  # a person was asked and chose not to answer (Esc, an empty line)
    UNAVAILABLE = "unavailable"  # nobody can be asked (no terminal, JSON mode, --yes, end of input)


@dataclass(frozen=True, slots=True)
class Answer:
    kind: AnswerKind
    text: str = ""  # the answer typed or the option chosen; for UNAVAILABLE why nobody answered

    @property
    def answered(self) -> bool:
        return self.kind in (AnswerKind.ANSWERED, AnswerKind.CHOSE)


class Asker(Protocol):
    """Answers the model's questions.

    Contract: ``ask`` may wait as long as a person needs (the task timeout still runs) and is
    cancellable; it never raises otherwise. An asker that cannot reach anybody returns
    ``AnswerKind.UNAVAILABLE`` at once."""

    async def ask(self, question: Question) -> Answer: ...


class UnattendedAsker:
    """Nobody can be asked: every question is answered at once with ``reason``."""

    def __init__(self, reason: str = NO_ANSWER) -> None:
        self.reason = reason

    async def ask(self, question: Question) -> Answer:
        return Answer(AnswerKind.UNAVAILABLE, self.reason)


def _option_number(question: Question, answer: Answer) -> int:
    """The chosen option's number (from 1); 0 when the text is none of them."""
    return question.options.index(answer.text) + 1 if answer.text in question.options else 0


def summary(question: Question, answer: Answer) -> str:
    """The one-line outcome a tool line shows: "chose option 2", "answered", "declined", "no answer"."""
    if answer.kind is AnswerKind.CHOSE:
        number = _option_number(question, answer)
        return f"chose option {number}" if number else "chose an option"
    return "no answer" if answer.kind is AnswerKind.UNAVAILABLE else answer.kind.value


def result_text(question: Question, answer: Answer) -> str:
    """What the model is told: the answer between markers, so it cannot be mistaken for more
    of the question or for an instruction of minicode's."""
    match answer.kind:
        case AnswerKind.CHOSE:
            number = _option_number(question, answer)
            which = f"option {number}" if number else "an option"
            return f"The user chose {which}:\n<answer>\n{answer.text}\n</answer>"
        case AnswerKind.ANSWERED:
            return f"The user answered:\n<answer>\n{answer.text}\n</answer>"
        case AnswerKind.DECLINED:
            return "The user declined to answer. Go on without the answer: decide yourself and say what you assumed."
        case AnswerKind.UNAVAILABLE:
            return (f"No answer available: {answer.text}. Do not ask again in this task; decide yourself "
                    "and say what you assumed.")
