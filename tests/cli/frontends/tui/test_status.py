"""The status bar (state first, elapsed time, scrolled-up hint) and the queued strip's size."""

from __future__ import annotations

import asyncio

from prompt_toolkit.layout import FormattedTextControl

from minicode.agent.events import TextChunk
from tests.cli.frontends.tui.conftest import Harness
from tests.cli.frontends.tui.fake_session import held


def _status(h: Harness) -> str:
    from minicode.cli.frontends.tui.layout import status_line

    return "".join(t for _, t in status_line(h.controller, 120))


def _queued_window(h: Harness):  # type: ignore[no-untyped-def]
    return next(w for w in h.controller.app.layout.find_all_windows()  # type: ignore[union-attr]
                if isinstance(w.content, FormattedTextControl) and "queued" in str(w.content.text()))


async def test_status_puts_the_state_first_and_counts_seconds_while_a_task_runs(harness: Harness) -> None:
    assert _status(harness).startswith(" idle · context 12%")
    assert harness.controller._ticker is None  # no periodic redraw while idle
    harness.session.scripts.append(held(asyncio.Event()))
    await harness.send("go")
    await harness.until(lambda: "working" in harness.screen_text())
    harness.clock.advance(1.2)
    status = _status(harness)
    assert status.index("streaming 1s") < status.index("fake-model")
    harness.clock.advance(60)
    assert "streaming 1m 01s" in _status(harness)
    assert harness.controller._ticker is not None and not harness.controller._ticker.done()
    ticker = harness.controller._ticker
    await harness.key("esc")
    await harness.until(lambda: harness.controller.task is None)
    await harness.until(ticker.done)
    assert harness.controller._ticker is None
    assert _status(harness).startswith(" idle")


async def test_scrolled_up_is_shown_even_without_new_lines(harness: Harness) -> None:
    for i in range(200):
        harness.controller.transcript.note(f"filler {i}")
    await harness.redrawn()
    assert "scrolled" not in _status(harness)
    await harness.key("pageup")
    assert "↑ scrolled · End to follow" in _status(harness)


async def test_the_queued_strip_takes_one_row_for_one_short_line(harness: Harness) -> None:
    harness.session.scripts.append(held(asyncio.Event()))
    await harness.send("go")
    await harness.until(lambda: harness.controller.busy)
    await harness.send("next one")
    await harness.redrawn()
    window = _queued_window(harness)
    assert window.render_info is not None and window.render_info.window_height == 1
    harness.controller.queue[0] = type(harness.controller.queue[0])("x" * 150, "x" * 150)
    await harness.redrawn()
    assert window.render_info.window_height == 3  # 80 columns: the text needs more rows


async def test_a_flash_message_takes_the_state_for_a_while(harness: Harness) -> None:
    await harness.type("some draft")
    await harness.key("c-c")
    assert _status(harness).startswith(" draft cleared — Up brings it back")
    harness.clock.advance(5)
    assert _status(harness).startswith(" idle")


async def test_a_flash_message_ends_at_the_next_key(harness: Harness) -> None:
    await harness.type("some draft")
    await harness.key("c-c")
    assert _status(harness).startswith(" draft cleared — Up brings it back")
    await harness.type("x")  # no time has passed: the key alone ends it
    assert _status(harness).startswith(" idle")
    assert harness.controller.draft.text == "x"


async def test_a_later_task_shows_its_own_state_not_an_old_message(harness: Harness) -> None:
    await harness.type("some draft")
    await harness.key("c-c")
    harness.controller.flash("a message from before")  # e.g. set while no key followed
    harness.session.scripts.append(held(asyncio.Event()))
    harness.controller.dispatch("go")  # a queued message starting by itself: no key
    await harness.until(lambda: "working" in harness.screen_text())
    assert "streaming" in _status(harness) and "message from before" not in _status(harness)
    await harness.key("esc")
    await harness.until(lambda: harness.controller.task is None)


async def test_a_message_a_key_sets_outlives_that_key(harness: Harness) -> None:
    await harness.type("y")
    harness.controller.flash("first")
    await harness.key("c-c")  # this key's own message replaces the old one and stays
    assert _status(harness).startswith(" draft cleared — Up brings it back")


def _line(width: int, new: int) -> str:
    from minicode.cli.frontends.tui.layout import status_line
    from minicode.cli.frontends.tui.markdown import MarkdownRenderer
    from minicode.cli.frontends.tui.controller import Controller
    from tests.cli.frontends.tui.fake_session import FakeSession

    c = Controller(FakeSession(), MarkdownRenderer())
    c.start()
    c.total_lines = 2_000
    if new:
        c.scroll.scroll(-10, 2_000 - new, 20)  # left the bottom, then ``new`` lines arrived
    return "".join(t for _, t in status_line(c, width))


def test_a_narrow_status_bar_drops_the_model_and_id_first_and_keeps_the_new_lines() -> None:
    wide = _line(120, 1_234)
    assert "idle · context 12%" in wide and "1,234 new lines ↓ (End)" in wide and "fake-model · 0b7e1c2a" in wide
    narrow = _line(50, 1_234)
    assert len(narrow) <= 50 and "fake-model" not in narrow
    assert narrow.startswith(" idle") and "1,234 new lines ↓" in narrow
    tiny = _line(28, 1_234)
    assert tiny == " idle  1,234 new lines ↓ "


def test_a_status_bar_that_fits_keeps_everything() -> None:
    line = _line(80, 0)
    assert line == " idle · context 12% of 100k (llama.cpp /props)  fake-model · 0b7e1c2a "


def test_the_windows_source_goes_first_when_narrow() -> None:
    assert _line(50, 0) == " idle · context 12%  fake-model · 0b7e1c2a "


def test_window_sizes_are_shown_short() -> None:
    from minicode.cli.frontends.tui.layout import _tokens_short

    assert [_tokens_short(n) for n in (32768, 262144, 100_000, 900, 131072)] == ["32k", "256k", "100k", "900", "128k"]


async def test_a_retry_shows_in_the_status_bar_counting_down_until_anything_else_arrives() -> None:
    from minicode.agent.events import Retrying
    from minicode.cli.frontends.tui.controller import Controller
    from minicode.cli.frontends.tui.layout import status_line
    from minicode.cli.frontends.tui.markdown import MarkdownRenderer
    from tests.cli.frontends.tui.fake_session import FakeSession

    now = [100.0]
    c = Controller(FakeSession(), MarkdownRenderer(), clock=lambda: now[0])
    c.task = asyncio.Future()  # a task runs (the state is only shown then)
    c.task_started = now[0]
    c.on_event(Retrying(2, 4, 2.0, "HTTP 429 rate limited"))

    def text() -> str:
        return "".join(t for _, t in status_line(c, 200))

    assert "retrying in 2 s (attempt 2 of 4): HTTP 429 rate limited" in text()
    now[0] += 1.0
    assert "retrying in 1 s (attempt 2 of 4)" in text()
    now[0] += 5.0
    assert "retrying now (attempt 2 of 4): HTTP 429 rate limited" in text()
    c.on_event(TextChunk("at last"))
    assert "retrying" not in text() and "streaming" in text()
    c.task.cancel()


def test_the_status_bar_redraws_when_the_server_tells_its_window() -> None:
    from minicode.cli.frontends.tui.controller import Controller
    from minicode.cli.frontends.tui.markdown import MarkdownRenderer
    from tests.cli.frontends.tui.fake_session import FakeSession

    session = FakeSession()
    c = Controller(session, MarkdownRenderer())
    c.start()
    assert c.context_source == "llama.cpp /props"
    session.context_source = "ollama num_ctx"  # the answer came
    session.learning()
    assert c.context_source == "ollama num_ctx"
