"""Older answers are kept as places in the session file and read back when shown (issue 16
item 4): the screen shows exactly what it showed before, a record that cannot be read back is
one error line, and the answers held in memory stay few however long the run."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Callable, Iterator

import pytest

from minicode.agent.asking import Asker
from minicode.agent.approval import Approver
from minicode.agent.events import AgentEvent, AssistantDone, ReasoningChunk, TaskStatus, TextChunk, TurnFinished
from minicode.agent.stats import TaskStats
from minicode.cli.frontends.tui.controller import Controller
from minicode.cli.frontends.tui.markdown import MarkdownRenderer
from minicode.cli.frontends.tui.stored import KEEP_TURNS, RESIDENT, StoredAnswer, StoredReasoning
from minicode.cli.frontends.tui.view import Transcript, exit_lines
from minicode.provider.types import Message
from minicode.session.log import MessageLog
from minicode.session.store import SessionStore
from tests.cli.frontends.tui.fake_session import FakeSession

WIDTH, HEIGHT = 80, 20
MD = MarkdownRenderer()


def answer(n: int) -> str:
    return (f"## Answer {n}\n\nThe plan for step {n} has **three** parts, each explained below in a few"
            f" words that wrap at eighty columns.\n\n- first {n}\n- second\n- third\n\n```python\nprint({n})\n```\n\n"
            + f"A closing paragraph for {n}. " * 12)


class Run:
    """A transcript fed as a live run is: each turn's messages appended to the session file and
    the log (as the session does), its events applied; ``plain`` is the same run on a
    transcript that keeps everything (a plain list of messages cannot be read back)."""

    def __init__(self, ws: Path) -> None:
        self.store, _ = SessionStore.create(ws)
        self.log = MessageLog(self.store.file_reader(), "session file")
        self.t = Transcript(MD, str(ws))
        self.t.replay(self.log, {})
        self.plain = Transcript(MD, str(ws))
        self.plain.replay([], {})
        self.turns = 0

    def turn(self, text: str | None = None, reasoning: str = "") -> None:
        self.turns += 1
        text = answer(self.turns) if text is None else text
        said = Message(role="assistant", content=text, reasoning=reasoning or None)
        for message in (Message.user(f"turn {self.turns}"), said):
            self.log.append(message, self.store.append_message(message))
        for t in (self.t, self.plain):
            t.note(f"turn {self.turns}", "class:user", "› ")
            for i in range(0, len(reasoning), 30):
                t.apply(ReasoningChunk(reasoning[i:i + 30]))
            for i in range(0, len(text), 50):
                t.apply(TextChunk(text[i:i + 50]))
            t.apply(AssistantDone(text, reasoning, 0))
            t.apply(TurnFinished(TaskStatus.DONE, text, TaskStats(model_calls=1)))

    def frame(self, top: int | None = None) -> None:
        """The frame each transcript draws (at the bottom unless ``top``)."""
        for t in (self.t, self.plain):
            t.visible(WIDTH, max(0, t.total_lines(WIDTH) - HEIGHT) if top is None else top, HEIGHT)

    def close(self) -> None:
        self.store.close()
        self.log.close()


def lines(t: Transcript, width: int = WIDTH) -> list[str]:
    """Every line of ``t`` at ``width``, read a screen at a time from the top as a user pages."""
    out: list[str] = []
    top = 0
    while top < t.total_lines(width):
        out.extend("".join(text for _, text in line) for line in t.visible(width, top, HEIGHT))
        top += HEIGHT
    return out


def stored(t: Transcript) -> list[StoredAnswer]:
    return [item for item in t.items if isinstance(item, StoredAnswer)]


@pytest.fixture
def run(workspace: Path) -> Iterator[Run]:
    r = Run(workspace)
    yield r
    r.close()


def test_older_answers_are_stored_and_read_back_exactly(run: Run) -> None:
    for _ in range(12):
        run.turn()
        run.frame()
    assert len(stored(run.t)) == 12 - KEEP_TURNS
    assert run.t.held() <= KEEP_TURNS + 1  # the bottom screen's answer may stay made
    assert run.t.total_lines(WIDTH) == run.plain.total_lines(WIDTH)
    assert lines(run.t) == lines(run.plain)  # paging from the top reads each back
    assert run.t.held() <= KEEP_TURNS + RESIDENT
    assert exit_lines(run.t, WIDTH) == exit_lines(run.plain, WIDTH)


def test_a_resize_while_stored_lays_out_as_before(run: Run) -> None:
    for _ in range(8):
        run.turn()
        for t in (run.t, run.plain):
            t.settle(WIDTH, lambda: True)  # as the idle re-wrap does after each turn
    assert all(not s.resident for s in stored(run.t))
    for width in (50, 120, WIDTH):  # narrower, wider, and back to a width the stored heights know
        for t in (run.t, run.plain):
            t.settle(width, lambda: True)
        assert run.t.total_lines(width) == run.plain.total_lines(width)
        assert lines(run.t, width) == lines(run.plain, width)
    assert run.t.held() <= KEEP_TURNS + RESIDENT


def test_an_answer_on_the_viewport_boundary_stays_made_and_unmoved(run: Run) -> None:
    run.turn()
    top = 3  # the answer's first lines are above the view, the rest on it
    run.frame(top)
    for _ in range(KEEP_TURNS):
        run.turn()
        run.frame(top)
    first = stored(run.t)[0]
    assert first.resident  # on screen when it was stored: kept made
    before = run.plain.visible(WIDTH, top, HEIGHT)
    assert run.t.visible(WIDTH, top, HEIGHT) == before
    first.release()
    assert run.t.visible(WIDTH, top, HEIGHT) == before  # read back: the same lines at the same place
    assert run.t.total_lines(WIDTH) == run.plain.total_lines(WIDTH)


def test_a_truncated_session_file_shows_an_error_line_instead(run: Run) -> None:
    for _ in range(KEEP_TURNS + 2):
        run.turn()
    os.truncate(run.store.path, 300)  # cut under the open file: the first answers are gone
    shown = lines(run.t)
    assert sum("this answer can no longer be shown" in line for line in shown) == 2
    assert "## Answer" not in "\n".join(shown)  # the stored ones are gone …
    assert any(line.strip().startswith("A closing paragraph for 5.") for line in shown)  # … the recent ones stay
    assert all(s.failed for s in stored(run.t))
    assert lines(run.t) == shown  # the error stays: no read again, no crash


def test_a_record_rewritten_in_place_is_not_shown_as_the_answer(run: Run) -> None:
    run.turn("the **original** zebra answer")
    for _ in range(KEEP_TURNS):
        run.turn()
    data = run.store.path.read_bytes()
    Path(run.store.path).write_bytes(data.replace(b"the **original** zebra answer", b"the **replaced** hyena answer"))
    shown = "\n".join(lines(run.t))
    assert "hyena" not in shown and "zebra" not in shown and "other\n  text now" in shown


def test_a_session_file_replaced_by_another_still_shows_the_run(run: Run) -> None:
    """The records are read through the run's own descriptor: a file renamed over the path
    (a restore, a sync tool) does not change what this run showed."""
    for _ in range(KEEP_TURNS + 2):
        run.turn()
    other = run.store.path.with_suffix(".other")
    other.write_bytes(b'{"type":"junk"}\n' * 200)
    os.replace(other, run.store.path)
    assert lines(run.t) == lines(run.plain)


def test_answers_after_a_rewind_are_still_found_and_read_back(run: Run) -> None:
    for _ in range(4):
        run.turn()
    run.log.truncate(2)  # /rewind to the second user message: the records stay in the file
    for _ in range(KEEP_TURNS + 3):
        run.turn()
    assert len(stored(run.t)) == 4 + KEEP_TURNS + 3 - KEEP_TURNS
    assert lines(run.t) == lines(run.plain)


def test_an_answer_the_file_does_not_hold_stays_in_memory(run: Run) -> None:
    """A cut-off stream is not kept in the conversation: nothing to read back, it stays."""
    run.t.note("turn 0", "class:user", "› ")
    run.t.apply(TextChunk("half an ans"))
    run.t.apply(TurnFinished(TaskStatus.INTERRUPTED, "", TaskStats()))
    for _ in range(KEEP_TURNS + 2):
        run.turn()
    kept = [item for item in run.t.items if type(item).__name__ == "AnswerItem"]
    assert any("half an ans" in item.text for item in kept)  # type: ignore[attr-defined]
    assert len(stored(run.t)) == 2


class FiledSession(FakeSession):
    """A scripted session whose conversation is a real session file and ``MessageLog``, as
    the real session keeps it: each turn appends the user message and the answer before it
    reports the turn's end."""

    def __init__(self, ws: Path) -> None:
        super().__init__(workspace=ws)
        self.store, _ = SessionStore.create(ws)
        self.log = MessageLog(self.store.file_reader(), "session file")
        self.messages = self.log  # type: ignore[assignment]

    async def turn(self, user_text: str, *, approver: Approver, emit: Callable[[AgentEvent], None],
                   max_turns: int = 500, timeout: float | None = None, asker: Asker | None = None) -> TurnFinished:
        text = answer(len(self.turns))
        self.turns.append(user_text)
        for i in range(0, len(text), 400):
            emit(TextChunk(text[i:i + 400]))
            await asyncio.sleep(0)
        emit(AssistantDone(text, "", 0))
        for message in (Message.user(user_text), Message(role="assistant", content=text)):
            self.log.append(message, self.store.append_message(message))
        done = TurnFinished(TaskStatus.DONE, text, TaskStats(model_calls=1))
        emit(done)
        return done


async def test_over_many_turns_the_answers_held_in_memory_stay_few(workspace: Path) -> None:
    """The controller over 60 turns, a frame after each, the user scrolling back now and then:
    the answers whose text is in memory stay within the last turns plus the resident ones,
    and paging back from the top shows what a transcript keeping everything shows."""
    session = FiledSession(workspace)
    c = Controller(session, MD)  # type: ignore[arg-type]
    c.start()
    counts = []
    for n in range(60):
        c.dispatch(f"task {n}")
        while c.task is not None:
            await asyncio.sleep(0)
        c.transcript.visible(WIDTH, max(0, c.transcript.total_lines(WIDTH) - HEIGHT), HEIGHT)
        if n % 15 == 14:
            lines(c.transcript)  # read back from the top, a screen at a time
        counts.append(c.transcript.held())
    assert max(counts) <= KEEP_TURNS + RESIDENT
    assert max(counts[:14]) <= KEEP_TURNS + 1  # before any look back: the last turns' and the one on screen
    assert sum(isinstance(item, StoredAnswer) for item in c.transcript.items) == 60 - KEEP_TURNS
    plain = Transcript(MD, str(workspace))
    for n in range(60):
        plain.note(f"task {n}", "class:user", "› ")
        plain.apply(AssistantDone(answer(n), "", 0))
        plain.note(f"done · {TaskStats(model_calls=1).format()}", "class:stats", "■ ")
    expected = lines(plain)
    assert lines(c.transcript)[-len(expected):] == expected  # under the session's opening lines
    session.store.close()
    session.log.close()


def test_the_re_wrap_after_a_resize_lets_stored_answers_go_again(run: Run) -> None:
    """The idle re-wrap reads each stored answer back to measure it at the new width and lets
    it go at once: the answer on screen stays made, the others do not pile up."""
    for _ in range(RESIDENT + KEEP_TURNS + 4):
        run.turn()
    run.t.visible(WIDTH, 0, HEIGHT)  # looking at the first answer
    first = stored(run.t)[0]
    assert first.resident
    assert run.t.settle(50, lambda: True)
    assert first.resident and run.t.held() <= KEEP_TURNS + 1
    for t in (run.t, run.plain):
        t.settle(50, lambda: True)
    assert lines(run.t, 50) == lines(run.plain, 50)


def test_reasoning_is_stored_as_one_line_and_read_back_in_full_on_ctrl_t(run: Run) -> None:
    thinking = "First I look at the plan.\nThen I check the \x1b[31mtests\x1b[0m. " * 20
    run.turn(reasoning=thinking)
    for _ in range(KEEP_TURNS):
        run.turn()
    kept = [item for item in run.t.items if isinstance(item, StoredReasoning)]
    assert len(kept) == 1 and not kept[0].expanded
    assert lines(run.t) == lines(run.plain)  # "∴ thought (N chars)", from the length alone
    for t in (run.t, run.plain):
        assert t.toggle_reasoning()  # the latest reasoning, stored or not
    assert kept[0].expanded and lines(run.t) == lines(run.plain)
    assert "tests" in "\n".join(lines(run.t))
    for t in (run.t, run.plain):
        t.toggle_reasoning()
    assert not kept[0].expanded and lines(run.t) == lines(run.plain)


def test_reasoning_whose_record_is_gone_says_so_when_expanded(run: Run) -> None:
    run.turn(reasoning="a careful thought " * 10)
    for _ in range(KEEP_TURNS):
        run.turn()
    os.truncate(run.store.path, 200)
    assert run.t.toggle_reasoning()
    shown = "\n".join(lines(run.t))
    assert "this reasoning can no longer be shown" in shown and "careful" not in shown
