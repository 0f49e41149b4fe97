"""The repaint shortcuts (``repaint.py``, ``transcript_window.py``): whatever the frames do,
the terminal shows exactly what prompt_toolkit's screen holds — checked by feeding the real
VT100 output into a terminal model after every frame — while a streaming answer scrolls the
terminal instead of repainting, and unchanged rows are not compared cell by cell."""

from __future__ import annotations

import asyncio
import io
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass

import pytest
from prompt_toolkit.application import Application
from prompt_toolkit.application.current import set_app
from prompt_toolkit.data_structures import Point, Size
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.layout.screen import Char, Screen
from prompt_toolkit.output import DummyOutput
from prompt_toolkit.output.vt100 import Vt100_Output

from minicode.agent.events import AssistantDone, TextChunk
from minicode.cli.frontends.tui.app import create_application, run_controller
from minicode.cli.frontends.tui.controller import Controller
from minicode.cli.frontends.tui.markdown import MarkdownRenderer
from minicode.cli.frontends.tui.repaint import RepaintRenderer, ScrollHint, changed_rows, scroll_rows
from minicode.cli.frontends.tui.transcript_window import RowCache, line_row
from tests.cli.frontends.tui.fake_session import FakeSession
from tests.pty.screen import Screen as Terminal

COLUMNS, ROWS = 60, 16


def answer(paragraphs: int) -> str:
    parts = []
    for i in range(paragraphs):
        parts.append(f"## Part {i}\n\nThe *module* `part_{i}.py` owns **one concept**; it keeps functions short.")
        parts.append(f"- item {i}a\n- item {i}b")
        parts.append(f"```python\ndef f{i}(x):\n    return x + {i}\n```")
    return "\n\n".join(parts)


@dataclass
class Rig:
    controller: Controller
    app: Application[int]
    sink: io.StringIO
    terminal: Terminal
    size: list[Size]

    @property
    def renderer(self) -> RepaintRenderer:
        assert isinstance(self.app.renderer, RepaintRenderer)
        return self.app.renderer

    def frame(self) -> str:
        """Draw a frame now; what it wrote to the terminal."""
        start = self.sink.tell()
        self.app._redraw()
        self.sink.seek(start)
        written = self.sink.read()
        self.terminal.feed(written)
        return written

    def expected(self) -> list[str]:
        """What prompt_toolkit believes the terminal shows."""
        screen = self.renderer._last_screen
        assert screen is not None
        size = self.size[0]
        return ["".join(screen.data_buffer[y][x].char for x in range(size.columns)).rstrip()
                for y in range(size.rows)]

    def check(self) -> None:
        assert self.terminal.lines() == self.expected()


@pytest.fixture
async def rig() -> AsyncIterator[Rig]:
    sink = io.StringIO()
    size = [Size(rows=ROWS, columns=COLUMNS)]
    out = Vt100_Output(sink, lambda: size[0], term="xterm-256color")
    with create_pipe_input() as pipe:
        c = Controller(FakeSession(), MarkdownRenderer())
        c.start()
        app = create_application(c, input=pipe, output=out)
        runner = asyncio.ensure_future(run_controller(c, app))
        while app.render_counter == 0:
            await asyncio.sleep(0.01)
        terminal = Terminal(COLUMNS, ROWS)
        terminal.feed(sink.getvalue())
        yield Rig(c, app, sink, terminal, size)
        c.exit(0)
        await asyncio.wait_for(runner, 5)


def stream(rig: Rig, text: str, step: int, after: Callable[[], None] | None = None) -> None:
    for i in range(0, len(text), step):
        rig.controller.on_event(TextChunk(text[i: i + step]))
        rig.frame()
        rig.check()
        if after is not None:
            after()


async def test_a_streaming_answer_scrolls_the_terminal_and_the_screen_stays_true(rig: Rig) -> None:
    rig.controller.echo("explain")
    rig.frame()
    before = len(rig.sink.getvalue())
    stream(rig, answer(6), 23)
    assert rig.renderer.scrolled > 10
    assert "\x1b[1;" in rig.sink.getvalue()[before:]  # a scroll region over the transcript rows
    assert "return x + 5" in "\n".join(rig.terminal.lines())


async def test_scrolling_up_and_down_through_the_transcript_stays_true(rig: Rig) -> None:
    rig.controller.on_event(TextChunk(answer(8)))
    rig.controller.on_event(AssistantDone(answer(8), "", 0))
    rig.frame()
    rig.check()
    scrolled = rig.renderer.scrolled
    for delta in (-1, -3, -5, 2, -14, 7, 30, -2):
        rig.controller.scroll_lines(delta)
        rig.frame()
        rig.check()
    assert rig.renderer.scrolled > scrolled  # up (reverse index) as well as down
    assert "\x1bM" in rig.sink.getvalue()


async def test_a_strip_appearing_and_a_resize_while_streaming_stay_true(rig: Rig) -> None:
    text = answer(5)
    events = iter(range(10_000))

    def meanwhile() -> None:
        n = next(events)
        if n == 12:
            rig.controller.queue.append(_queued("a queued message that takes a row"))
        elif n == 20:
            rig.controller.queue.clear()
        elif n == 30:
            rig.size[0] = Size(rows=ROWS - 3, columns=COLUMNS - 7)
            rig.terminal.resize(COLUMNS - 7, ROWS - 3)
            start = rig.sink.tell()
            rig.app._on_resize()
            rig.sink.seek(start)
            rig.terminal.feed(rig.sink.read())
            rig.check()

    stream(rig, text, 31, meanwhile)
    assert rig.renderer.scrolled > 5


def _queued(text: str) -> object:
    from minicode.cli.frontends.tui.draft import Queued

    return Queued(text, text, ())


def test_scroll_rows_moves_the_last_screen_like_the_terminal() -> None:
    previous = Screen()
    for y in range(6):
        previous.data_buffer[y][0] = Char(str(y), "")
    out = Vt100_Output(io.StringIO(), lambda: Size(rows=6, columns=10), term="xterm")
    assert scroll_rows(out, previous, ScrollHint(top=1, rows=4, shift=2), 6)
    assert [previous.data_buffer[y][0].char for y in range(6)] == ["0", "3", "4", " ", " ", "5"]
    assert scroll_rows(out, previous, ScrollHint(top=1, rows=4, shift=-1), 6)
    assert [previous.data_buffer[y][0].char for y in range(6)] == ["0", " ", "3", "4", " ", "5"]
    # a hint that would move everything out, or reach past the screen, does nothing
    assert not scroll_rows(out, previous, ScrollHint(top=1, rows=4, shift=4), 6)
    assert not scroll_rows(out, previous, ScrollHint(top=3, rows=4, shift=1), 6)


def test_changed_rows_leaves_out_equal_rows() -> None:
    new, old = Screen(), Screen()
    for screen in (new, old):
        for y in range(4):
            screen.data_buffer[y][0] = Char("x", "")
    new.data_buffer[2][1] = Char("y", "")
    old.zero_width_escapes[3][0] = "\x1b]8;;\x07"
    new.cursor_positions = {}
    view, old_view = changed_rows(new, old, 4)
    assert sorted(view.data_buffer) == [2, 3] and sorted(old_view.data_buffer) == [2, 3]
    assert view.data_buffer[0][0].char == " "  # a left-out row reads as blank in both views
    assert view.get_cursor_position(object()) == Point(0, 0)  # type: ignore[arg-type]


async def test_other_outputs_take_the_stock_path() -> None:
    calls: list[int] = []

    def hint() -> ScrollHint | None:
        calls.append(1)
        return ScrollHint(0, 5, 1)

    c = Controller(FakeSession(), MarkdownRenderer())
    app = create_application(c, output=DummyOutput())
    renderer = RepaintRenderer(app.renderer.style, DummyOutput(), full_screen=True, scroll_hint=hint)
    with set_app(app):
        renderer.render(app, app.layout)
    assert calls == [1] and renderer.scrolled == 0  # the hint is taken (never stale) but unused


def test_row_cache_holds_only_the_lines_on_screen() -> None:
    cache = RowCache()
    lines = [(("", f"line {i}"),) for i in range(100)]
    for top in range(0, 60):
        cache.rows(lines[top: top + 20], 40)
        assert len(cache) <= 20
    assert cache.converted == 79  # each line converted once while it stayed on screen
    cache.rows(lines[:20], 30)  # a new width converts again
    assert cache.converted == 99


def test_line_row_lays_out_wide_and_combining_characters_like_a_window() -> None:
    row = line_row((("class:a", "a界"), ("", "e\u0301b")), 10)
    assert [row[x].char for x in sorted(row)] == ["a", "界", "", "e\u0301", "b"]
    assert row[0].style == "class:a" and row[3].style == ""
    assert sorted(line_row((("", "界界界"),), 5)) == [0, 1, 2, 3]  # a wide character never half-shown

