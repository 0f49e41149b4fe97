"""The model's question (ask_user) in the full screen: rows chosen with ↑/↓ or a digit and
Enter, "Other…" opens the answer line, Esc declines; typed text never answers it."""

from __future__ import annotations

import pytest

from minicode.agent.asking import Answer, AnswerKind
from minicode.cli.frontends.tui.approval import ANSWER_GRACE
from minicode.cli.frontends.tui.layout import question_panel
from tests.cli.frontends.tui.conftest import Harness
from tests.cli.frontends.tui.fake_session import question_steps, text_steps


def _panel(h: Harness, width: int = 100) -> str:
    return "".join(t for _, t in question_panel(h.controller, width))


async def _ask(harness: Harness, *, settle: bool = True, text: str = "Which database?",
               options: tuple[str, ...] = ("Postgres", "SQLite")) -> None:
    harness.session.scripts.append([*question_steps(text, options), *text_steps("ok")])
    await harness.send("set it up")
    await harness.until(lambda: harness.controller.question is not None)
    assert harness.controller.state() == "awaiting your answer"
    if settle:
        harness.clock.advance(ANSWER_GRACE)  # a person reads the question before answering


async def _answered(harness: Harness) -> Answer:
    await harness.until(lambda: harness.session.answers != [])
    return harness.session.answers[0]


async def test_the_panel_shows_the_question_and_numbered_rows_and_enter_chooses(harness: Harness) -> None:
    await _ask(harness)
    panel = _panel(harness)
    assert "the model asks:" in panel and "Which database?" in panel
    assert "❯ 1. Postgres" in panel and "  2. SQLite" in panel and "3. Other… (type an answer)" in panel
    assert "↑↓ or 1-9 choose · Enter answers · Esc: no answer" in panel
    await harness.key("enter")
    assert await _answered(harness) == Answer(AnswerKind.CHOSE, "Postgres")
    await harness.until(lambda: harness.controller.task is None)
    assert "→ Postgres" in harness.screen_text()


async def test_arrows_then_enter_and_a_digit_then_enter(harness: Harness) -> None:
    await _ask(harness)
    await harness.key("down")
    assert "❯ 2. SQLite" in _panel(harness)
    await harness.key("down", "down", "down")  # stops on the last row, never wraps to the first
    assert "❯ 3. Other…" in _panel(harness)
    await harness.key("2")  # a digit only highlights: nothing is answered yet
    assert "❯ 2. SQLite" in _panel(harness) and harness.session.answers == []
    assert harness.controller.draft.text == ""
    await harness.key("9")  # no such row: said, nothing changes
    assert "there are only 3 to choose from" in (harness.controller.editor.flash_text() or "")
    await harness.key("enter")
    assert await _answered(harness) == Answer(AnswerKind.CHOSE, "SQLite")


async def test_other_opens_the_answer_line_where_enter_sends_the_text(harness: Harness) -> None:
    await _ask(harness)
    await harness.key("3", "enter")
    c = harness.controller
    assert c.question is not None and c.question.typing and "type your answer below" in _panel(harness)
    await harness.key("enter")  # nothing typed: nothing sent
    assert harness.session.answers == [] and "type an answer first" in (c.editor.flash_text() or "")
    await harness.type("MariaDB, version 11")
    await harness.key("esc")  # back to the rows: nothing sent, the line emptied
    assert c.question is not None and not c.question.typing and harness.session.answers == []
    await harness.key("enter")  # still on Other…
    await harness.type("MariaDB")
    await harness.key("enter")
    assert await _answered(harness) == Answer(AnswerKind.ANSWERED, "MariaDB")


async def test_a_question_without_options_is_answered_on_the_answer_line(harness: Harness) -> None:
    await _ask(harness, text="Which port should it listen on?", options=())
    assert "❯ 1. Type an answer…" in _panel(harness)
    await harness.key("enter")
    await harness.type("8080")
    await harness.key("enter")
    assert await _answered(harness) == Answer(AnswerKind.ANSWERED, "8080")


async def test_esc_declines_and_the_task_goes_on(harness: Harness) -> None:
    await _ask(harness)
    await harness.key("esc")
    assert await _answered(harness) == Answer(AnswerKind.DECLINED)
    await harness.until(lambda: harness.controller.task is None)
    assert harness.session.interrupted == 0  # declining is an answer, not a stop
    assert "→ no answer (declined)" in harness.screen_text()


@pytest.mark.parametrize("sentence", ["also check x", "Postgres and more", "  leading spaces!"])
async def test_typed_text_never_answers_and_lands_whole_in_the_draft(harness: Harness, sentence: str) -> None:
    await _ask(harness, settle=False)
    await harness.key(*sentence, pause=0.12)  # typed key by key, as a person does
    assert harness.controller.question is not None and harness.session.answers == []
    assert harness.controller.draft.text == sentence
    assert "the draft has text: Tab moves to the choices" in _panel(harness)
    await harness.key("enter")  # the Enter that ends the sentence queues it, answers nothing
    assert [q.text for q in harness.controller.queue] == [sentence]
    assert harness.session.answers == []


@pytest.mark.parametrize("word", ["yes", "postgres", "SQLite"])
async def test_an_answer_typed_into_the_draft_is_neither_the_answer_nor_a_task(harness: Harness, word: str) -> None:
    await _ask(harness)
    await harness.key(*word, pause=0.12)
    await harness.key("enter")
    assert harness.session.answers == [] and harness.controller.queue == []
    assert harness.controller.draft.text == word  # kept: the panel says how to answer
    assert "is not an answer: empty the draft, choose with ↑↓ or 1-9" in (harness.controller.editor.flash_text() or "")


async def test_enter_as_the_question_appears_is_ignored_and_a_paste_goes_to_the_draft(harness: Harness) -> None:
    await _ask(harness, settle=False)
    await harness.key("enter", pause=0.1)
    assert harness.session.answers == []
    assert "Enter ignored: the question just appeared" in (harness.controller.editor.flash_text() or "")
    await harness.type("1\r2\r")  # typed ahead as a burst: a paste into the draft, not keys
    assert harness.controller.draft.text == "1\n2\n" and harness.session.answers == []


async def test_a_hostile_question_is_shown_inert_and_cut_to_the_panel(harness: Harness) -> None:
    await _ask(harness, text="\x1b]0;PWNED\x07\x1b[2J" + "line\n" * 50, options=("\x1b[31mred",))
    panel = _panel(harness, 60)
    assert "\x1b" not in panel and "␛]0;PWNED" in panel and "␛[31mred" in panel
    assert "more lines: PageUp shows it all" in panel
    assert panel.count("\n") <= 8 + 4  # the head, at most 8 lines of question, the rows, the hint


async def test_a_low_window_shows_fewer_question_lines_and_every_row(harness: Harness) -> None:
    options = tuple(f"choice {i}" for i in range(1, 10))
    await _ask(harness, text="\n".join(f"context line {i}" for i in range(30)), options=options)
    lines = "".join(t for _, t in question_panel(harness.controller, 80, 24)).split("\n")
    assert len(lines) == 1 + 6 + 10 + 1  # the head, 24 - 10 rows - 8 = 6 lines of question, the rows, the hint
    assert "  … 25 more lines: PageUp shows it all" in lines and "    10. Other… (type an answer)" in lines


def test_a_replayed_question_shows_what_was_asked() -> None:
    from minicode.cli.frontends.shared.replay_text import call_target

    assert call_target('{"question": "Which database?\\nSay why.", "options": ["a"]}') == "Which database?"


async def test_the_whole_question_is_in_the_transcript_while_it_waits(harness: Harness) -> None:
    question = "\n".join(f"context line {i}" for i in range(30)) + "\nWhich one?"
    await _ask(harness, text=question)
    shown = harness.screen_text()
    assert "context line 0" in shown and "context line 29" in shown and "Which one?" in shown
    await harness.key("esc")
    await harness.until(lambda: harness.controller.task is None)
    assert "→ no answer (declined)" in harness.screen_text()
