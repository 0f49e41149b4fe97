"""A long Markdown answer is laid out block by block: a new width renders only the blocks on
screen (the first frame after a resize costs the screen, not the answer), the rest is
re-wrapped in the background, and every slice agrees with the whole layout."""

from __future__ import annotations

from minicode.agent.events import AssistantDone, TextChunk, TurnFinished, TaskStatus
from minicode.agent.stats import TaskStats
from minicode.cli.frontends.tui.answer import AnswerItem, split_blocks
from minicode.cli.frontends.tui.history import HistoryItem
from minicode.cli.frontends.tui.items import Line, TextItem, wrap_plain
from minicode.cli.frontends.tui.view import Transcript
from tests.cli.frontends.tui.conftest import Harness

ROWS = 30


class CountingMarkdown:
    """Plain wrapping that counts the blocks it was asked to render."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, text: str, width: int) -> list[Line]:
        self.calls += 1
        return wrap_plain(text, width)


def long_answer(blocks: int = 600) -> str:
    return "\n\n".join(f"Paragraph {i}: " + "word " * (i % 17 + 3) for i in range(blocks))


def texts(lines: list[Line]) -> list[str]:
    return ["".join(t for _, t in line) for line in lines]


def test_split_blocks_finds_every_finished_block_outside_fences() -> None:
    text = "one\n\ntwo\n\n```\na\n\nb\n```\n\nthree\n\n  indented\n\nfour"
    cuts = split_blocks(text)
    assert [text[c:].split("\n", 1)[0] for c in cuts] == ["two", "```", "three", "four"]
    assert split_blocks("no blocks yet") == [] and split_blocks("a\n\n") == []


def test_a_new_width_renders_only_the_blocks_on_screen() -> None:
    md = CountingMarkdown()
    t = Transcript(md)
    t.add(AnswerItem(long_answer()))
    for width in (100, 60, 43):
        md.calls = 0
        total = t.total_lines(width)  # the whole answer by estimate: nothing rendered
        assert md.calls == 0
        t.visible(width, max(0, total - ROWS), ROWS)
        assert 0 < md.calls <= ROWS  # the blocks at the bottom, not 600
        total = t.total_lines(width)  # the shown blocks' real heights replaced their estimates
        shown = t.visible(width, max(0, total - ROWS), ROWS)
        assert texts(shown)[-1].startswith("word") or "Paragraph 599" in " ".join(texts(shown))


def test_slices_agree_with_the_whole_layout_once_shown() -> None:
    md = CountingMarkdown()
    item = AnswerItem(long_answer(80))
    fresh = AnswerItem(long_answer(80))
    for width in (30, 71):
        whole = fresh.lines(width, md)
        for start in range(0, len(whole) + 2, 7):
            assert item.slice(width, md, start, ROWS) == whole[start : start + ROWS], (width, start)
        assert item.height(width, md) == len(whole)


def test_settle_re_wraps_the_rest_in_slices_and_reports_when_done() -> None:
    md = CountingMarkdown()
    t = Transcript(md)
    t.add(TextItem("question"))
    t.add(AnswerItem(long_answer(100)))
    budget = [10]

    def more() -> bool:
        budget[0] -= 1
        return budget[0] >= 0

    # stopped by the budget (the question is plain text, laid out when shown: it takes none)
    assert t.settle(50, more) is False and md.calls == 10
    assert t.settle(50, lambda: True) is True and md.calls == 100  # every block (and the tail) once
    calls = md.calls
    full = [line for item in t.items for line in item.lines(50, md)]
    assert md.calls == calls  # the exit printout finds it all done
    assert t.total_lines(50) == len(full) + len(t.items) - 1


def test_a_resumed_history_answer_is_sliced_lazily_too() -> None:
    md = CountingMarkdown()
    history = HistoryItem([TextItem("› old question"), AnswerItem(long_answer(400))])
    t = Transcript(md)
    t.add(history)
    total = t.total_lines(80)
    t.visible(80, max(0, total - ROWS), ROWS)
    assert md.calls <= ROWS
    assert t.settle(80, lambda: True) is True  # a history is not re-wrapped in the background
    assert md.calls <= ROWS


async def test_after_a_turn_the_blocks_a_fast_stream_scrolled_past_are_settled(harness: Harness) -> None:
    c = harness.controller
    text = long_answer(300)
    for i in range(0, len(text), 4000):  # a fast stream: few frames for many blocks
        c.on_event(TextChunk(text[i : i + 4000]))
    c.on_event(AssistantDone(text, "", 0))
    await harness.redrawn()
    answer = c.transcript.items[-1]
    assert isinstance(answer, AnswerItem)
    c.on_event(TurnFinished(TaskStatus.DONE, text, TaskStats()))
    width = c.view_size[0]
    await harness.until(lambda: c.transcript.settle(width, lambda: False))
    assert answer.height(width, c.transcript.md) == len(answer.lines(width, c.transcript.md))


async def test_a_resize_switches_bracketed_paste_back_on_before_drawing() -> None:
    import asyncio
    import io

    from prompt_toolkit.data_structures import Size
    from prompt_toolkit.input import create_pipe_input
    from prompt_toolkit.output.vt100 import Vt100_Output

    from minicode.cli.frontends.tui.app import create_application, run_controller
    from minicode.cli.frontends.tui.controller import Controller
    from minicode.cli.frontends.tui.markdown import MarkdownRenderer
    from tests.cli.frontends.tui.fake_session import FakeSession

    stream = io.StringIO()
    size = [Size(rows=30, columns=100)]
    out = Vt100_Output(stream, lambda: size[0], term="xterm-256color")
    with create_pipe_input() as pipe:
        c = Controller(FakeSession(), MarkdownRenderer())
        c.start()
        c.on_event(TextChunk(long_answer(50)))
        app = create_application(c, input=pipe, output=out)
        runner = asyncio.ensure_future(run_controller(c, app))
        while app.render_counter == 0:
            await asyncio.sleep(0.01)
        stream.seek(0)
        stream.truncate()
        size[0] = Size(rows=30, columns=70)
        app._on_resize()
        written = stream.getvalue()
        off, on = written.find("\x1b[?2004l"), written.find("\x1b[?2004h")
        assert 0 <= off < on < written.find("Paragraph")  # on again before the frame
        assert written.find("\x1b[?1000h") < written.find("Paragraph")  # and the mouse wheel
        c.exit(0)
        await asyncio.wait_for(runner, 5)
