"""PageUp / PageDown move by what is shown, also through a resumed history whose entries count
by estimates until drawn (finding T34): consecutive pages share exactly one line — none is
skipped, none shown twice more — at any width, and right after a resize."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from minicode.agent.deps import ToolOutcome
from minicode.cli.frontends.tui.layout import transcript_lines
from minicode.cli.frontends.tui.markdown import MarkdownRenderer
from minicode.cli.frontends.tui.paging import scroll_up
from minicode.cli.frontends.tui.view import Scroll, Transcript
from minicode.provider.types import Message, ToolCall
from minicode.session.store import SessionStore

HEIGHT = 24


def _answer(t: int) -> str:
    """A long Markdown answer: every line it shows names the task, so a page is found by text."""
    para = " ".join(f"t{t}-word{w}" for w in range(60))  # wraps at every width
    items = "\n".join(f"- t{t} item {i} with *emphasis* and `code {i}`" for i in range(6))
    code = "\n".join(f"value_{t}_{i} = {i}  # t{t} code line {i}" for i in range(5))
    return f"## t{t} heading\n\n{para}\n\n{items}\n\n```python\n{code}\n```\n\n1. t{t} first\n2. t{t} second"


def _session(ws: Path, tasks: int) -> str:
    store, sid = SessionStore.create(ws)
    for t in range(tasks):
        store.append_message(Message.user(f"t{t} question"))
        call = ToolCall(f"c{t}", "bash", json.dumps({"command": f"make t{t}"}))
        store.append_message(Message(role="assistant", content=f"t{t} running it", tool_calls=(call,)))
        out = "\n".join(f"t{t} output line {i}" for i in range(8)) + "\n[exit code 2]"
        store.append_message(Message.tool(f"c{t}", out),
                             ToolOutcome(True, 2, status="failed", duration_seconds=1.5, summary="exit 2"))
        store.append_message(Message(role="assistant", content=_answer(t)))
    store.close()
    return sid


class _View:
    """The controller's part the frames and the page keys use."""

    def __init__(self, transcript: Transcript, width: int) -> None:
        self.transcript = transcript
        self.scroll = Scroll()
        self.total_lines = 0
        self.view_size = (0, 0)
        self.width = width

    def settle_soon(self) -> None:
        pass

    def frame(self) -> list[str]:
        _top, lines = transcript_lines(self, self.width, HEIGHT)  # type: ignore[arg-type]
        return ["".join(t for _, t in line) for line in lines]

    def page(self, direction: int) -> list[str]:
        """PageUp (-1) / PageDown (+1) as the controller does it, then the next frame."""
        if direction < 0:
            self.total_lines = scroll_up(self.transcript, self.scroll, self.width, HEIGHT, HEIGHT - 1)
        else:
            self.scroll.scroll(HEIGHT - 1, self.total_lines, HEIGHT)
        return self.frame()


def _resumed(workspace: Path, tasks: int) -> tuple[Transcript, SessionStore]:
    store, loaded = SessionStore.open(workspace, _session(workspace, tasks))
    transcript = Transcript(MarkdownRenderer(), str(workspace))
    transcript.replay(loaded.messages, loaded.outcomes)
    return transcript, store


def _where(page: list[str], whole: list[str]) -> int:
    """Where ``page`` starts in the whole transcript (it must be a run of its lines)."""
    starts = [i for i in range(len(whole) - len(page) + 1) if whole[i:i + len(page)] == page]
    assert starts, f"a page that is not a run of the transcript's lines:\n" + "\n".join(page)
    return starts[0]


def _whole(transcript: Transcript, width: int) -> list[str]:
    return ["".join(t for _, t in line) for line in transcript.visible(width, 0, 1 << 40)]


def _pages_up(view: _View) -> list[list[str]]:
    pages = [view.frame()]
    while not any("resumed session" in line for line in pages[-1]):
        pages.append(view.page(-1))
        assert len(pages) < 500
    return pages


def _assert_abut(pages: list[list[str]], whole: list[str], step: int) -> None:
    starts = [_where(page, whole) for page in pages]
    for before, after in zip(starts, starts[1:]):
        # one line shared, none skipped; at the top the last page is wherever line 0 is
        assert after - before == step or (step < 0 and after == 0 and before + step < 0), (starts, step)


@pytest.mark.parametrize("width", [40, 80, 133])
def test_page_up_through_a_resumed_history_skips_no_line(workspace: Path, width: int) -> None:
    transcript, store = _resumed(workspace, 30)
    view = _View(transcript, width)
    pages = _pages_up(view)
    assert len(pages) > 5
    _assert_abut(pages, _whole(transcript, width), -(HEIGHT - 1))
    store.close()


@pytest.mark.parametrize("width", [40, 97])
def test_page_down_from_the_top_of_a_resumed_history_skips_no_line(workspace: Path, width: int) -> None:
    transcript, store = _resumed(workspace, 30)
    view = _View(transcript, width)
    view.frame()
    view.scroll.move_to(0, view.total_lines, HEIGHT)  # Ctrl+Home
    pages = [view.frame()]
    while not view.scroll.follow:
        pages.append(view.page(1))
    pages.pop()  # the bottom: following again, placed at the end (no fixed step)
    _assert_abut(pages, _whole(transcript, width), HEIGHT - 1)
    store.close()


def test_page_up_and_down_right_after_a_resize_skip_no_line(workspace: Path) -> None:
    transcript, store = _resumed(workspace, 30)
    view = _View(transcript, 100)
    view.frame()
    for _ in range(4):
        view.page(-1)
    view.width = 61  # the terminal got narrower: a new layout, estimates again
    pages = [view.frame()]
    for _ in range(6):
        pages.append(view.page(-1))
    down = [pages[-1]]
    for _ in range(6):
        down.append(view.page(1))
    whole = _whole(transcript, 61)  # drawn whole only now: that moves every line above the view
    _assert_abut(pages, whole, -(HEIGHT - 1))
    _assert_abut(down, whole, HEIGHT - 1)
    store.close()


def test_paging_through_an_estimated_history_counts_no_new_lines(workspace: Path) -> None:
    """Entries drawn while paging replace estimates: the "N new lines" count stays 0."""
    transcript, store = _resumed(workspace, 30)
    view = _View(transcript, 80)
    assert len(_pages_up(view)) > 5
    assert not view.scroll.follow and view.scroll.new_lines(view.total_lines) == 0
    transcript.note("output that arrived")
    view.frame()
    assert view.scroll.new_lines(view.total_lines) == 2
    store.close()


def test_page_up_in_a_short_transcript_stays_following() -> None:
    transcript = Transcript(MarkdownRenderer(), "")
    transcript.note("only line")
    view = _View(transcript, 80)
    view.frame()
    view.page(-1)
    assert view.scroll.follow and view.frame() == ["only line"]


def test_a_damaged_record_in_the_history_does_not_break_the_paging(workspace: Path) -> None:
    sid = _session(workspace, 20)
    path = workspace / ".minicode" / "sessions" / f"{sid}.jsonl"
    lines = path.read_text().splitlines()
    answer = next(i for i, line in enumerate(lines) if "t10 heading" in line)
    store, loaded = SessionStore.open(workspace, sid)  # a damaged file refuses to open: damaged after
    damaged = '{"type":"message","role":"assistant","content":["not text"]}'
    assert len(damaged) <= len(lines[answer])  # rewritten in place, the other records stay where they were
    lines[answer] = damaged.ljust(len(lines[answer]))
    path.write_text("\n".join(lines) + "\n")
    transcript = Transcript(MarkdownRenderer(), str(workspace))
    transcript.replay(loaded.messages, loaded.outcomes)
    view = _View(transcript, 80)
    pages = _pages_up(view)
    assert any("this message cannot be shown" in line for page in pages for line in page)
    _assert_abut(pages, _whole(transcript, 80), -(HEIGHT - 1))
    store.close()
