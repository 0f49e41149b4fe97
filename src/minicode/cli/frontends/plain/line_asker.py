"""The model's questions (``ask_user``) answered by a line of text (pipe and one-shot modes, on a terminal).

The question goes to stderr, indented and made visible (``shown_call.reveal``: escape
sequences and invisible characters shown, never obeyed), its options numbered; the answer is
the next line typed: a number or an option's text chooses it, other text is the answer, an
empty line declines. Lines typed before the question never answer it (kept as the next
tasks, or on /dev/tty discarded), like the line approver's. End of input: no answer.
No prompt_toolkit, no rich.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import TextIO

from minicode.agent.asking import Answer, AnswerKind, Question
from minicode.cli.frontends.plain.line_approver import LineSource
from minicode.cli.frontends.shared.shown_call import preview_lines, reveal

__all__ = ["QUESTION_LINES", "LineAsker", "answer_from_line"]

QUESTION_LINES = 40
"""Lines of a question shown at most (the tool bounds it to 2,000 characters)."""


def answer_from_line(line: str, options: tuple[str, ...]) -> Answer:
    """A typed line as an answer: "2" or an option's own text (any case) chooses it, ""
    declines, anything else is the answer."""
    text = line.strip()
    if not text:
        return Answer(AnswerKind.DECLINED)
    if text.isdigit() and 1 <= int(text) <= len(options):
        return Answer(AnswerKind.CHOSE, options[int(text) - 1])
    chosen = next((o for o in options if o.casefold() == text.casefold()), None)
    if chosen is not None:
        return Answer(AnswerKind.CHOSE, chosen)
    return Answer(AnswerKind.ANSWERED, text)


@dataclass
class LineAsker:
    """Asks on ``err`` and reads the answer from ``reader`` (see the module docstring)."""

    reader: LineSource
    err: TextIO
    discard_typed_ahead: bool = False  # on /dev/tty: keys pressed earlier don't answer

    async def ask(self, question: Question) -> Answer:
        if self.discard_typed_ahead:
            self.reader.discard_pending()
        elif kept := self.reader.set_aside_typed_ahead():
            self.err.write(f"minicode: {kept} line{'s' if kept > 1 else ''} typed ahead "
                           "kept as the next task (they do not answer this question)\n")
        self.err.write(_question_lines(question))
        self.err.flush()
        try:
            line = await self.reader.next_answer()
        except asyncio.CancelledError:
            self.err.write("\n")  # the status line that follows starts on its own line
            self.err.flush()
            raise
        if line is None:
            self.err.write(f"\nminicode: no answer (end of input{self.reader.failure_text()})\n")
            return Answer(AnswerKind.UNAVAILABLE, "the input ended before an answer")
        if not self.reader.interactive:
            self.err.write(reveal(line.strip()) + "\n")  # nobody typed it: show it, the next line starts clean
        return answer_from_line(line, question.options)


def _question_lines(question: Question) -> str:
    lines = preview_lines(question.text)
    if len(lines) > QUESTION_LINES:
        lines = [*lines[:QUESTION_LINES], f"… {len(lines) - QUESTION_LINES} more lines"]
    out = ["minicode: the model asks:\n", *(f"    {line}\n" for line in lines)]
    out += [f"    {number}) {reveal(option)}\n" for number, option in enumerate(question.options, start=1)]
    how = "a number or your own answer" if question.options else "your answer"
    out.append(f"minicode: {how} (empty line: no answer): ")
    return "".join(out)
