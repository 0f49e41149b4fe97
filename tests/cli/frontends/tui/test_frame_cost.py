"""A frame costs the visible entries and the changed ones, not the whole transcript:
cumulative heights (``Heights``) kept per width, invalidated only by entries that change."""

from __future__ import annotations

import random

import pytest

from minicode.agent.events import ToolFinished, ToolStarted
from minicode.cli.frontends.tui.heights import Heights
from minicode.cli.frontends.tui.history import HistoryItem
from minicode.cli.frontends.tui.answer import AnswerItem
from minicode.cli.frontends.tui.items import Item, Line, RenderMarkdown, TextItem, wrap_plain
from minicode.cli.frontends.tui.view import Transcript

WIDTH, ROWS = 40, 10


def md(text: str, width: int) -> list[Line]:
    return wrap_plain(text, width)


class Counted(TextItem):
    """A plain entry that counts how often the view measures, slices or renders it."""

    def __init__(self, text: str) -> None:
        super().__init__(text)
        self.heights = self.slices = self.renders = 0

    def height(self, width: int, md: RenderMarkdown) -> int:
        self.heights += 1
        return super().height(width, md)

    def slice(self, width: int, md: RenderMarkdown, start: int, count: int) -> list[Line]:
        self.slices += 1
        return super().slice(width, md, start, count)

    def _render(self, width: int, md: RenderMarkdown) -> list[Line]:
        self.renders += 1
        return super()._render(width, md)


def frame(t: Transcript, width: int = WIDTH, top: int | None = None) -> list[str]:
    total = t.total_lines(width)
    start = max(0, total - ROWS) if top is None else top
    return ["".join(text for _, text in line) for line in t.visible(width, start, ROWS)]


def whole(t: Transcript, width: int) -> list[str]:
    """The transcript laid out the slow, obvious way: every entry, a blank line between."""
    out: list[str] = []
    for item in t.items:
        if out or item is not t.items[0]:
            out.append("")
        out.extend("".join(text for _, text in line) for line in item.lines(width, md))
    return out


def test_a_streaming_frame_touches_no_earlier_entry() -> None:
    t = Transcript(md)
    earlier = [Counted(f"entry {n} " + "word " * (n % 13)) for n in range(1000)]
    for item in earlier:
        t.add(item)
    answer = AnswerItem()
    t.add(answer)
    frame(t)  # the first frame measures every entry once
    assert all(item.heights == 1 and item.renders == 1 for item in earlier)
    for item in earlier:
        item.heights = item.slices = item.renders = 0
    for n in range(20):
        answer.append(f"streamed word {n} ")
        shown = frame(t)
        t.total_lines(WIDTH)  # the layout asks again after the slice: still free
    assert sum(i.heights for i in earlier) == 0 and sum(i.renders for i in earlier) == 0
    assert sum(i.slices for i in earlier) <= 20 * ROWS  # at most the entries on screen
    assert sum(1 for i in earlier if i.slices) <= ROWS
    assert "streamed word 19" in " ".join(shown)


def test_scrolled_up_frames_slice_only_the_entries_on_screen() -> None:
    t = Transcript(md)
    earlier = [Counted(f"entry {n}") for n in range(1000)]
    for item in earlier:
        t.add(item)
    frame(t)
    for item in earlier:
        item.slices = item.heights = 0
    shown = frame(t, top=1000)  # entry 500 starts at line 1000 (one line + one separator each)
    assert shown[0] == "entry 500" and shown[-1] == "" and shown[-2] == "entry 504"
    assert [n for n, i in enumerate(earlier) if i.slices] == [500, 501, 502, 503, 504]
    assert sum(i.heights for i in earlier) == 0


def test_a_changed_entry_in_the_middle_updates_the_total_and_the_lines_below_it() -> None:
    t = Transcript(md)
    for n in range(50):
        t.add(TextItem(f"entry {n}"))
    t.apply(ToolStarted("c1", "bash", "", "$ make", ""))
    for n in range(50, 100):
        t.add(TextItem(f"entry {n}"))
    before = t.total_lines(WIDTH)
    t.apply(ToolFinished("c1", "bash", True, "exit 2", 2, 1.0, output_tail="one\ntwo\nthree\n[exit code 2]"))
    assert t.total_lines(WIDTH) == before + 3  # the failed command's tail under its line
    assert frame(t, top=0) == whole(t, WIDTH)[:ROWS]
    assert frame(t, top=95) == whole(t, WIDTH)[95 : 95 + ROWS]


def test_visible_matches_the_whole_layout_at_every_top_and_width() -> None:
    rng = random.Random(7)
    t = Transcript(md)
    answers: list[AnswerItem] = []
    for n in range(60):
        if n % 7 == 0:
            answers.append(AnswerItem())
            t.add(answers[-1])
        else:
            t.add(TextItem(" ".join(["word"] * rng.randint(0, 30))))
    for width in (20, 33, 80, 20):
        t.total_lines(width)
        for answer in answers:  # changes after the heights were summed
            answer.append("grown " * rng.randint(1, 12))
        full = whole(t, width)
        assert t.total_lines(width) == len(full)
        for top in range(0, len(full) + 3):
            assert frame(t, width, top) == full[top : top + ROWS], (width, top)


def test_an_empty_transcript_and_a_top_past_the_end_show_nothing() -> None:
    t = Transcript(md)
    assert t.total_lines(WIDTH) == 0 and t.visible(WIDTH, 0, ROWS) == []
    t.add(TextItem("only"))
    assert t.total_lines(WIDTH) == 1
    assert t.visible(WIDTH, 5, ROWS) == [] and t.visible(WIDTH, -3, ROWS) == [(("", "only"),)]


def test_a_tool_line_whose_body_arrives_when_it_starts_grows() -> None:
    t = Transcript(md)
    t.apply(ToolStarted("c1", "write", "a.txt", "3 lines", ""))
    t.add(TextItem("below"))
    assert t.total_lines(WIDTH) == 3
    t.apply(ToolStarted("c1", "write", "a.txt", "3 lines", "x\ny\nz"))  # a repeat with the body
    assert frame(t, top=0) == whole(t, WIDTH)[:ROWS] and t.total_lines(WIDTH) == 6


def test_heights_prefix_find_and_set_agree_with_plain_sums() -> None:
    rng = random.Random(3)
    h = Heights()
    values: list[int] = []
    for _ in range(300):
        if values and rng.random() < 0.4:
            i = rng.randrange(len(values))
            values[i] = rng.randint(0, 9)
            h.set(i, values[i])
        else:
            values.append(rng.randint(0, 9))
            h.append(values[-1])
        assert h.total == sum(values) and len(h) == len(values)
        k = rng.randint(0, len(values))
        assert h.prefix(k) == sum(values[:k])
        line = rng.randint(0, sum(values) + 2)
        index, start = h.find(line)
        assert start == sum(values[:index]) and start <= line
        assert index == len(values) or line < start + values[index]


def test_heights_built_in_one_pass_agree_with_appends() -> None:
    rng = random.Random(5)
    for n in (0, 1, 2, 7, 64, 300):
        values = [rng.randint(0, 9) for _ in range(n)]
        bulk, one_by_one = Heights(), Heights()
        bulk.extend(values)
        for v in values:
            one_by_one.append(v)
        assert bulk.total == one_by_one.total == sum(values) and len(bulk) == n
        assert [bulk.prefix(k) for k in range(n + 1)] == [one_by_one.prefix(k) for k in range(n + 1)]
        bulk.extend([4, 0, 2])  # more after the bulk build: plain appends
        bulk.set(0, 9) if n else None
        values = ([9] + values[1:] if n else []) + [4, 0, 2]
        assert bulk.total == sum(values)
        assert [bulk.prefix(k) for k in range(len(values) + 1)] == [sum(values[:k]) for k in range(len(values) + 1)]


def test_heights_get_and_set_out_of_range_raise() -> None:
    h = Heights()
    h.append(2)
    assert h.get(0) == 2 and h.find(5) == (1, 2)
    with pytest.raises(IndexError):
        h.get(1)
    with pytest.raises(IndexError):
        h.set(3, 1)


def test_a_history_slice_matches_its_whole_layout_while_estimates_settle() -> None:
    children: list[Item] = [TextItem(f"child {n} " + "word " * (n * 7 % 23)) for n in range(40)]
    history = HistoryItem(children)
    for width in (15, 30, 15):
        for start in range(0, history.height(width, md) + 2, 3):
            fresh = HistoryItem([TextItem(c.text) for c in children])  # type: ignore[attr-defined]
            expected = fresh.lines(width, md)[start : start + ROWS]
            assert history.slice(width, md, start, ROWS) == expected, (width, start)
        assert history.height(width, md) == len(history.lines(width, md))


def test_a_history_reports_a_settled_estimate_and_survives_width_eviction() -> None:
    t = Transcript(md)
    history = HistoryItem([TextItem("x " * 60) for _ in range(30)])
    t.add(history)
    t.add(TextItem("after"))
    for width in (40, 50, 60, 70, 50):  # a fourth width evicts the first; 50 is still known
        assert t.total_lines(width) == history.height(width, md) + 2
    guessed = t.total_lines(13)  # estimates by cells: 10 lines each; words wrap to 9
    shown = frame(t, 13, top=0)
    assert t.total_lines(13) == guessed - 1  # the first child, rendered, told the transcript
    assert t.total_lines(13) == history.height(13, md) + 2
    assert shown == whole(t, 13)[:ROWS]
    assert t.total_lines(13) == len(whole(t, 13))  # everything rendered: every estimate settled
