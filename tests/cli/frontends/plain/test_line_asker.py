"""The model's question on stderr, answered by the next line typed: a number or an option
chooses, text answers, an empty line declines, end of input is no answer."""

from __future__ import annotations

import asyncio
import io

import pytest

from minicode.agent.asking import Answer, AnswerKind, Question
from minicode.cli.frontends.plain.line_asker import LineAsker, answer_from_line
from minicode.cli.frontends.plain.line_reader import LineReader

OPTIONS = ("Postgres", "SQLite")


@pytest.mark.parametrize("line, answer", [
    ("2", Answer(AnswerKind.CHOSE, "SQLite")),
    (" sqlite ", Answer(AnswerKind.CHOSE, "SQLite")),
    ("3", Answer(AnswerKind.ANSWERED, "3")),  # no third option: the text is the answer
    ("MariaDB please", Answer(AnswerKind.ANSWERED, "MariaDB please")),
    ("   ", Answer(AnswerKind.DECLINED)),
])
def test_a_line_as_an_answer(line: str, answer: Answer) -> None:
    assert answer_from_line(line, OPTIONS) == answer


def _reader(text: str) -> LineReader:
    return LineReader(io.StringIO(text))


async def test_the_question_is_shown_inert_with_numbered_options_and_the_line_answers() -> None:
    err = io.StringIO()
    reader = _reader("1\n")
    answer = await LineAsker(reader, err).ask(Question("c1", "Which\x1b[2J database?\nSay it.", OPTIONS))
    assert answer == Answer(AnswerKind.CHOSE, "Postgres")
    shown = err.getvalue()
    assert "\x1b" not in shown
    assert shown.startswith("minicode: the model asks:\n    Which␛[2J database?\n    Say it.\n"
                            "    1) Postgres\n    2) SQLite\n"
                            "minicode: a number or your own answer (empty line: no answer): ")
    assert shown.endswith("1\n")  # not typed on a terminal: the answer is echoed, the next line starts clean


async def test_end_of_input_is_no_answer_and_says_so() -> None:
    err = io.StringIO()
    answer = await LineAsker(_reader(""), err).ask(Question("c1", "Port?"))
    assert answer.kind is AnswerKind.UNAVAILABLE and "the input ended" in answer.text
    assert "minicode: your answer (empty line: no answer): " in err.getvalue()
    assert err.getvalue().endswith("minicode: no answer (end of input)\n")


async def test_a_long_question_is_cut_to_forty_lines() -> None:
    err = io.StringIO()
    await LineAsker(_reader("x\n"), err).ask(Question("c1", "\n".join(f"line {i}" for i in range(100))))
    assert "    line 39\n    … 60 more lines\n" in err.getvalue() and "line 40" not in err.getvalue()


async def test_lines_typed_ahead_stay_tasks_and_the_next_line_answers() -> None:
    reader = _reader("next task\n")
    while reader._queue.empty():  # noqa: SLF001 - until the reader thread has read the line typed ahead
        await asyncio.sleep(0.01)
    err = io.StringIO()
    asking = asyncio.ensure_future(LineAsker(reader, err).ask(Question("c1", "Port?")))
    answer = await asyncio.wait_for(asking, 5)
    assert "1 line typed ahead kept as the next task" in err.getvalue()
    assert answer.kind is AnswerKind.UNAVAILABLE  # the input ended after it: nothing answered
    assert await reader.next_line() == "next task"
