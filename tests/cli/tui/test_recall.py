"""Up/Down on an empty draft recall this run's submissions; Home/Ctrl+Home jump to the top."""

from __future__ import annotations

import asyncio

from tests.cli.tui.conftest import Harness

UP, DOWN, HOME, CTRL_HOME = "\x1b[A", "\x1b[B", "\x1b[H", "\x1b[1;5H"


async def _send(h: Harness, *texts: str) -> None:
    for text in texts:
        await h.type(text + "\r", 0.1)
        await h.until(lambda: h.controller.task is None)


async def test_up_and_down_on_an_empty_draft_walk_the_submissions(harness: Harness) -> None:
    h = harness
    await _send(h, "first", "second")
    d = h.controller.draft
    await h.type(UP)
    assert d.text == "second" and d.cursor_position == len("second")
    await h.type(UP)
    assert d.text == "first"
    await h.type(UP)  # the oldest stays
    assert d.text == "first"
    await h.type(DOWN)
    assert d.text == "second"
    await h.type(DOWN)  # past the newest: the empty draft again
    assert d.text == ""
    await h.type(UP + "\r", 0.2)
    await h.until(lambda: h.controller.task is None)
    assert h.session.turns == ["first", "second", "second"]


async def test_up_in_a_draft_with_text_moves_the_cursor_not_the_history(harness: Harness) -> None:
    h = harness
    await _send(h, "sent before")
    d = h.controller.draft
    await h.type("line one\nline two")  # \n from a pipe is Ctrl+J: a newline
    assert d.text == "line one\nline two"
    await h.type(UP)
    assert d.text == "line one\nline two" and d.document.cursor_position_row == 0
    await h.type(UP)  # an edited recall is a draft too
    assert d.text == "line one\nline two"


async def test_an_edited_recall_is_not_replaced_by_down(harness: Harness) -> None:
    h = harness
    await _send(h, "one")
    await h.type(UP + " more")
    await h.type(DOWN)
    assert h.controller.draft.text == "one more"


async def test_home_with_an_empty_draft_and_ctrl_home_jump_to_the_top(harness: Harness) -> None:
    h = harness
    for i in range(200):
        h.controller.transcript.note(f"old line {i}")
    h.controller.invalidate()
    await asyncio.sleep(0.1)
    c = h.controller
    await h.type(HOME)
    assert not c.scroll.follow and c.scroll.top == 0
    await h.type("\x1b[F")  # End: back to the bottom
    assert c.scroll.follow
    await h.type("typing")
    await h.type(HOME)  # with text, Home is the draft's own
    assert c.scroll.follow and c.draft.cursor_position == 0
    await h.type(CTRL_HOME)
    assert not c.scroll.follow and c.scroll.top == 0 and c.draft.text == "typing"
