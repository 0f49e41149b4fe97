"""A resumed history is read only where it is shown: the first screen of a long session reads
the last messages, scrolling up reads more, and a damaged record shows as an error line."""

from __future__ import annotations

import json
from pathlib import Path

from minicode.agent.deps import ToolOutcome
from minicode.cli.frontends.tui.history import HistoryItem
from minicode.cli.frontends.tui.lazy_history import LazyEntries
from minicode.cli.frontends.tui.markdown import MarkdownRenderer
from minicode.cli.frontends.tui.layout import transcript_lines
from minicode.cli.frontends.tui.view import Scroll, Transcript
from minicode.provider.types import Message, ToolCall
from minicode.session.store import SessionStore

WIDTH, HEIGHT = 80, 30


def _session(ws: Path, tasks: int) -> str:
    store, sid = SessionStore.create(ws)
    for t in range(tasks):
        store.append_message(Message.user(f"question {t}"))
        call = ToolCall(f"c{t}", "bash", json.dumps({"command": f"make target{t}"}))
        store.append_message(Message(role="assistant", tool_calls=(call,)))
        store.append_message(Message.tool(f"c{t}", "x" * 5000 + "\n[exit code 2]"),
                             ToolOutcome(True, 2, status="failed", duration_seconds=1.5, summary="exit 2"))
        store.append_message(Message(role="assistant", content=f"answer **{t}**"))
    store.close()
    return sid


def _frame(transcript: Transcript) -> str:
    """The text of the first full-screen frame (following the bottom)."""
    _top, lines = transcript_lines(_View(transcript), WIDTH, HEIGHT)  # type: ignore[arg-type]
    return _text(lines)


def _text(lines) -> str:
    return "\n".join("".join(t for _, t in line) for line in lines)


def test_the_first_screen_reads_only_the_last_messages(workspace: Path) -> None:
    sid = _session(workspace, 300)
    store, loaded = SessionStore.open(workspace, sid)
    log = loaded.messages
    transcript = Transcript(MarkdownRenderer(), str(workspace))
    transcript.replay(log, loaded.outcomes)
    shown = _frame(transcript)
    assert "answer 299" in shown and "✗ bash make target299" in shown
    assert log.parsed_count() == 0  # shown with peek: nothing kept
    store.close()


def test_the_first_screen_makes_entries_only_for_what_it_shows(workspace: Path) -> None:
    """A long history is positions and estimates: the first frame makes the few entries at the
    bottom, scrolling to the top makes the first ones, the middle is never made."""
    sid = _session(workspace, 300)
    store, loaded = SessionStore.open(workspace, sid)
    transcript = Transcript(MarkdownRenderer(), str(workspace))
    transcript.replay(loaded.messages, loaded.outcomes)
    history = transcript.items[-1]
    assert isinstance(history, HistoryItem) and isinstance(history.items, LazyEntries)
    entries = history.items
    assert len(entries) == 900 and entries.made == 0  # user, call, answer per task
    total = transcript.total_lines(WIDTH)
    transcript.visible(WIDTH, max(0, total - HEIGHT), HEIGHT)
    assert 0 < entries.made < 30
    shown = _text(transcript.visible(WIDTH, 0, HEIGHT))
    assert "› question 0" in shown and entries.made < 60
    assert loaded.messages.parsed_count() == 0
    store.close()


def test_scrolling_up_reads_the_earlier_messages(workspace: Path) -> None:
    sid = _session(workspace, 50)
    store, loaded = SessionStore.open(workspace, sid)
    transcript = Transcript(MarkdownRenderer(), str(workspace))
    transcript.replay(loaded.messages, loaded.outcomes)
    top = _text(transcript.visible(WIDTH, 0, HEIGHT))
    assert "resumed session · 200 messages" in top and "› question 0" in top and "answer 0" in top
    store.close()


def test_a_damaged_record_is_shown_as_an_error_line(workspace: Path) -> None:
    sid = _session(workspace, 3)
    path = workspace / ".minicode" / "sessions" / f"{sid}.jsonl"
    lines = path.read_text().splitlines()
    store, loaded = SessionStore.open(workspace, sid)  # a damaged file refuses to open: damaged after
    damaged = '{"type":"message","role":"assistant","content":["not text"]}'
    assert len(damaged) <= len(lines[-1])  # rewritten in place, the other records stay where they were
    lines[-1] = damaged.ljust(len(lines[-1]))
    path.write_text("\n".join(lines) + "\n")
    transcript = Transcript(MarkdownRenderer(), str(workspace))
    transcript.replay(loaded.messages, loaded.outcomes)
    total = transcript.total_lines(WIDTH)
    shown = _text(transcript.visible(WIDTH, max(0, total - HEIGHT), HEIGHT))
    assert "this message cannot be shown" in shown and "corrupt at line" in shown
    assert "answer 1" in shown
    store.close()


class _View:
    """What the transcript window reads of the controller."""

    def __init__(self, transcript: Transcript) -> None:
        self.transcript = transcript
        self.scroll = Scroll()
        self.total_lines = 0
        self.view_size = (0, 0)

    def settle_soon(self) -> None:
        pass


def test_the_first_frame_ends_at_the_real_bottom_when_estimates_were_short(workspace: Path) -> None:
    """Each task's tail (a failed command's output, the answer) is taller than its record's size
    suggests; the frame keeps re-laying the bottom until the entries in view are all real."""
    sid = _session(workspace, 300)
    store, loaded = SessionStore.open(workspace, sid)
    transcript = Transcript(MarkdownRenderer(), str(workspace))
    transcript.replay(loaded.messages, loaded.outcomes)
    _top, shown = transcript_lines(_View(transcript), WIDTH, HEIGHT)  # type: ignore[arg-type]
    assert len(shown) == HEIGHT
    assert _text(shown[-1:]).strip() == "answer 299"
    assert shown == transcript.visible(WIDTH, transcript.total_lines(WIDTH) - HEIGHT, HEIGHT)
    store.close()


def test_a_replayed_call_shows_how_it_ended_though_no_message_was_read_before(workspace: Path) -> None:
    """The outcomes mapping fills as messages are read: an empty one at replay is still the one."""
    sid = _session(workspace, 3)
    store, loaded = SessionStore.open(workspace, sid)
    assert not loaded.outcomes
    transcript = Transcript(MarkdownRenderer(), str(workspace))
    transcript.replay(loaded.messages, loaded.outcomes)
    total = transcript.total_lines(WIDTH)
    shown = _text(transcript.visible(WIDTH, max(0, total - HEIGHT), HEIGHT))
    assert "✗ bash make target2  — 1.5s · exit 2" in shown
    store.close()


def test_scrolling_through_a_resumed_history_counts_no_new_lines(workspace: Path) -> None:
    """Entries drawn for the first time while scrolled up change the total (estimates become
    real heights); the status bar's "N new lines" counts output that arrived, not that."""
    sid = _session(workspace, 100)
    store, loaded = SessionStore.open(workspace, sid)
    transcript = Transcript(MarkdownRenderer(), str(workspace))
    transcript.replay(loaded.messages, loaded.outcomes)
    view = _View(transcript)

    def frame() -> None:
        transcript_lines(view, WIDTH, HEIGHT)  # type: ignore[arg-type]

    frame()
    view.scroll.scroll(-10**9, view.total_lines, HEIGHT)  # Ctrl+Home
    for _ in range(6):
        frame()
        assert view.scroll.new_lines(view.total_lines) == 0
        view.scroll.scroll(HEIGHT - 1, view.total_lines, HEIGHT)  # PageDown
    assert not view.scroll.follow
    transcript.note("output that arrived")
    frame()
    assert view.scroll.new_lines(view.total_lines) == 2  # its line and the separator above it
    store.close()
