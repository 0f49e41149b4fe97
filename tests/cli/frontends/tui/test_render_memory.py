"""Rendered lines are kept for what is near the viewport only: answers keep their text and
their blocks' heights, the styled lines live in one bounded cache (``rendered.py``) and come
back from the text when shown again; the exit printout of a very long run is bounded too."""

from __future__ import annotations

from minicode.agent.events import AssistantDone, TaskStatus, TextChunk, TurnFinished
from minicode.agent.stats import TaskStats
from minicode.cli.frontends.tui.answer import AnswerItem
from minicode.cli.frontends.tui.items import Line, TextItem, wrap_plain
from minicode.cli.frontends.tui.rendered import RenderedBlocks
from minicode.cli.frontends.tui.view import Transcript, exit_lines, plain_text

ROWS = 20


class CountingMarkdown:
    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, text: str, width: int) -> list[Line]:
        self.calls += 1
        return wrap_plain(text, width)


def answer(n: int, blocks: int = 30) -> str:
    return "\n\n".join(f"Answer {n} paragraph {i}: " + "word " * (i % 11 + 2) for i in range(blocks))


def texts(lines: list[Line]) -> list[str]:
    return ["".join(t for _, t in line) for line in lines]


def test_the_cache_drops_the_least_recently_used_blocks_beyond_its_lines() -> None:
    cache = RenderedBlocks(max_lines=5)
    cache.put("a", [()] * 2)
    cache.put("b", [()] * 2)
    assert cache.get("a") is not None  # "a" is now the most recent
    cache.put("c", [()] * 2)
    assert cache.get("b") is None and cache.get("a") is not None and cache.lines == 4
    cache.put("d", [()] * 9)  # bigger than the budget: it alone stays (a frame needs it)
    assert len(cache) == 1 and cache.get("d") is not None and cache.lines == 9
    cache.put("d", [()])  # replaced, counted once
    assert cache.lines == 1


def test_lines_come_back_the_same_after_they_left_the_cache() -> None:
    md = CountingMarkdown()
    small = AnswerItem(answer(1, 60), finished=True, cache=RenderedBlocks(max_lines=25))
    whole = AnswerItem(answer(1, 60), finished=True, cache=RenderedBlocks(max_lines=100_000)).lines(37, md)
    for top in list(range(0, len(whole), 9)) + [0, len(whole) - ROWS, 5]:
        assert small.slice(37, md, top, ROWS) == whole[top: top + ROWS], top
    assert small.height(37, md) == len(whole)
    assert small.lines(37, md) == whole


def test_measured_blocks_keep_their_height_and_are_not_rendered_again_to_settle() -> None:
    md = CountingMarkdown()
    cache = RenderedBlocks(max_lines=10)
    item = AnswerItem(answer(2, 40), finished=True, cache=cache)
    assert item.settle(50, md, lambda: True)
    calls, height = md.calls, item.height(50, md)
    assert calls == 40 and cache.lines <= 10 + 3  # every block measured once, few lines kept
    assert item.settle(50, md, lambda: True) and md.calls == calls  # nothing left to measure
    assert item.height(50, md) == height == len(item.lines(50, md))


def test_a_finished_streaming_answer_keeps_its_last_block_rendered_in_the_cache() -> None:
    md = CountingMarkdown()
    cache = RenderedBlocks()
    item = AnswerItem(cache=cache)
    item.append("first block\n\nthe last one, still streaming")
    shown = item.lines(40, md)
    calls = md.calls
    item.finish()
    assert item.lines(40, md) == shown and md.calls == calls  # the tail's lines moved, not re-rendered
    assert item.text == "first block\n\nthe last one, still streaming"
    item.finish()  # twice is harmless
    assert item.lines(40, md) == shown


def test_a_long_run_holds_rendered_lines_for_the_screen_not_the_transcript() -> None:
    md = CountingMarkdown()
    t = Transcript(md)
    from minicode.cli.frontends.tui import rendered

    for n in range(60):
        t.note(f"question {n}", prefix="› ")
        text = answer(n)
        for i in range(0, len(text), 300):
            t.apply(TextChunk(text[i: i + 300]))
            total = t.total_lines(80)
            t.visible(80, max(0, total - ROWS), ROWS)  # a frame at the bottom
        t.apply(AssistantDone(text, "", 0))
        t.apply(TurnFinished(TaskStatus.DONE, text, TaskStats()))
        assert t.settle(80, lambda: True)
    assert rendered.shared.lines <= rendered.MAX_LINES + 60  # bounded (plus one block at most)
    total = t.total_lines(80)
    bottom = texts(t.visible(80, total - ROWS, ROWS))
    assert any("Answer 59 paragraph 29" in line for line in bottom)
    top = texts(t.visible(80, 0, ROWS))  # far above: rendered again from the text
    assert top[0].startswith("› question 0") and any("Answer 0 paragraph 0" in line for line in top)


def test_the_exit_printout_of_a_very_long_run_ends_with_its_last_lines() -> None:
    t = Transcript(CountingMarkdown())
    for n in range(40):
        t.add(TextItem(f"entry {n}\nsecond line"))
    everything = plain_text(t, 60).split("\n")
    assert everything[0] == "entry 0" and len(everything) == 40 * 3 - 1  # under the bound: whole
    lines = texts(exit_lines(t, 200, max_lines=30))
    assert lines[0] == "… 30 earlier entries of this run not printed (the session keeps them: --export prints it whole)"
    assert lines[1] == "" and lines[2] == "entry 30" and lines[-1] == "second line" and len(lines) == 2 + 10 * 3 - 1
    one = texts(exit_lines(t, 200, max_lines=117))
    assert one[0].startswith("… 1 earlier entry of this run not printed") and one[2] == "entry 1"
    narrow = texts(exit_lines(t, 30, max_lines=30))
    assert narrow[0].startswith("… 30 earlier") and max(len(line) for line in narrow) <= 30  # wrapped


def test_a_finished_answer_keeps_the_conversation_s_string_not_a_copy() -> None:
    t = Transcript(CountingMarkdown())
    text = "".join(["first block\n\n", "second block, the last\n"])  # built, like the provider's
    for i in range(0, len(text), 5):
        t.apply(TextChunk(text[i: i + 5]))
    t.apply(AssistantDone(text, "", 0))
    item = t.items[-1]
    assert isinstance(item, AnswerItem) and item.text is text
    assert texts(item.lines(40, t.md)) == ["first block", "", "second block, the last"]
    raw = "shown \x1b[31m safely"  # the entry shows control characters neutralised: its own text
    t.apply(TextChunk(raw))
    t.apply(AssistantDone(raw, "", 0))
    assert t.items[-1].text == "shown ␛[31m safely"  # type: ignore[attr-defined]
