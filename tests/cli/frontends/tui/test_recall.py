"""Up/Down walk the input history (kept per workspace across runs), Ctrl+R searches it;
Home/Ctrl+Home jump to the top."""

from __future__ import annotations

import asyncio
import json
import os
import stat
from pathlib import Path

from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput

from minicode.cli.frontends.tui.app import create_application, run_controller
from minicode.cli.frontends.tui.controller import Controller
from minicode.cli.frontends.tui.draft import Queued
from minicode.cli.frontends.tui.inputlog import FILE_NAME, MAX_BYTES, MAX_ENTRIES, InputLog
from minicode.cli.frontends.tui.markdown import MarkdownRenderer
from minicode.cli.frontends.tui.recall import Recall
from tests.cli.frontends.tui.conftest import FakeClock, Harness
from tests.cli.frontends.tui.fake_session import FakeSession


async def _send(h: Harness, *texts: str) -> None:
    for text in texts:
        await h.send(text)
        await h.until(lambda: h.controller.task is None)


async def test_up_and_down_on_an_empty_draft_walk_the_submissions(harness: Harness) -> None:
    h = harness
    await _send(h, "first", "second")
    d = h.controller.draft
    await h.key("up")
    assert d.text == "second" and d.cursor_position == len("second")
    await h.key("up")
    assert d.text == "first"
    await h.key("up")  # the oldest stays
    assert d.text == "first"
    await h.key("down")
    assert d.text == "second"
    await h.key("down")  # past the newest: the empty draft again
    assert d.text == ""
    await h.key("up", "enter")
    await h.until(lambda: h.controller.task is None)
    assert h.session.turns == ["first", "second", "second"]


async def test_up_in_a_draft_with_text_moves_the_cursor_not_the_history(harness: Harness) -> None:
    h = harness
    await _send(h, "sent before")
    d = h.controller.draft
    await h.type("line one\nline two")  # \n from a pipe is Ctrl+J: a newline
    assert d.text == "line one\nline two"
    await h.key("up")
    assert d.text == "line one\nline two" and d.document.cursor_position_row == 0
    await h.key("up")  # an edited recall is a draft too
    assert d.text == "line one\nline two"


async def test_an_edited_recall_is_not_replaced_by_down(harness: Harness) -> None:
    h = harness
    await _send(h, "one")
    await h.key("up")
    await h.type(" more")
    await h.key("down")
    assert h.controller.draft.text == "one more"


async def test_home_with_an_empty_draft_and_ctrl_home_jump_to_the_top(harness: Harness) -> None:
    h = harness
    for i in range(200):
        h.controller.transcript.note(f"old line {i}")
    await h.redrawn()
    c = h.controller
    await h.key("home")
    assert not c.scroll.follow and c.scroll.top == 0
    await h.key("end")  # back to the bottom
    assert c.scroll.follow
    await h.type("typing")
    await h.key("home")  # with text, Home is the draft's own
    assert c.scroll.follow and c.draft.cursor_position == 0
    await h.key("c-home")
    assert not c.scroll.follow and c.scroll.top == 0 and c.draft.text == "typing"


async def test_ctrl_r_finds_the_newest_match_older_ones_and_enter_keeps_it(harness: Harness) -> None:
    h = harness
    await _send(h, "run the tests", "fix the parser", "run the linter")
    c = h.controller
    await h.type("half written")
    await h.key("c-r")
    assert c.editor.searching
    await h.type("run")
    assert c.draft.text == "run the linter"
    await h.key("c-r")  # older
    assert c.draft.text == "run the tests"
    await h.key("c-r")  # no older match: stays
    assert c.draft.text == "run the tests"
    await h.key("down")  # newer again
    assert c.draft.text == "run the linter"
    await h.key("enter")
    assert not c.editor.searching and c.draft.text == "run the linter"
    assert h.session.turns == ["run the tests", "fix the parser", "run the linter"]  # not sent


async def test_esc_or_ctrl_c_leaves_the_search_with_the_draft_as_it_was(harness: Harness) -> None:
    h = harness
    await _send(h, "alpha", "beta")
    c = h.controller
    await h.type("my draft")
    for leave in ("esc", "c-c", "c-g"):
        await h.key("c-r")
        await h.type("alp")
        assert c.draft.text == "alpha"
        await h.key(leave)
        assert not c.editor.searching and c.draft.text == "my draft"
    await h.key("c-r")
    await h.type("zzz")  # no match: the draft shows nothing, the line says so
    assert c.draft.text == "" and c.editor.recall.hit is None
    await h.key("esc")
    assert c.draft.text == "my draft" and not h.runner.done()


# --- kept across runs -----------------------------------------------------------------------

async def _run_app(workspace: Path, script: list[str]) -> Controller:
    """One run of the app over ``workspace``: send each line of ``script``, then leave."""
    with create_pipe_input() as pipe:
        clock = FakeClock()
        c = Controller(FakeSession(workspace=workspace), MarkdownRenderer(), clock=clock,
                       history=InputLog(workspace))
        c.start()
        app = create_application(c, input=pipe, output=DummyOutput())
        runner = asyncio.ensure_future(run_controller(c, app))
        h = Harness(c.session, c, pipe, runner, clock)  # type: ignore[arg-type]
        await h.until(lambda: app.is_running and app.render_counter > 0)
        for line in script:
            if line.startswith("<"):
                await h.key(line[1:])
            else:
                await h.send(line)
                await h.until(lambda: c.task is None)
        c.exit(0)
        await asyncio.wait_for(runner, 5)
        return c


async def test_the_history_is_kept_per_workspace_across_runs_with_pastes_as_text(tmp_path: Path) -> None:
    paste = "\n".join(f"row {i}" for i in range(30))
    first = await _run_app(tmp_path, ["first run message", "\x1b[200~" + paste + "\x1b[201~"])
    assert first.session.turns[1] == paste  # type: ignore[attr-defined]
    path = tmp_path / FILE_NAME
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    records = [json.loads(line) for line in path.read_text().splitlines()]
    assert records[0] == {"text": "first run message"}
    assert records[1]["shown"] == "[pasted 30 lines]" and records[1]["pastes"][0][1] == paste
    second = await _run_app(tmp_path, ["<up", "<up"])
    assert second.draft.text == "first run message"
    third = await _run_app(tmp_path, ["<up"])
    assert third.draft.text == "[pasted 30 lines]" and third.pastes.expand(third.draft.text) == paste


async def test_a_damaged_or_unwritable_history_costs_only_the_history(tmp_path: Path) -> None:
    path = tmp_path / FILE_NAME
    path.parent.mkdir(parents=True)
    path.write_bytes(b'{"text": "good one"}\nnot json\n{"shown": 3}\n\xff\xfe\n[1, 2]\n{"text": "good two"}\n'
                     + b"[" * 100_000 + b"]" * 100_000 + b'\n{"text": "half \\ud800 a pair"}\n')
    log = InputLog(tmp_path)
    texts = [e.text for e in log.load()]
    assert texts == ["good one", "good two", "half \ufffd a pair"] and log.error is None
    blocked = tmp_path / "other"
    (blocked / ".minicode").mkdir(parents=True)
    (blocked / ".minicode" / "sessions").write_text("a file where the directory should be")
    reading = InputLog(blocked)
    assert reading.load() == [] and "cannot read the input history" in (reading.error or "")
    broken = InputLog(blocked)
    broken.append(Queued("x", "x"))
    assert broken.error is not None and "cannot keep the input history" in broken.error
    broken.append(Queued("y", "y"))  # said once, then quiet
    assert (blocked / ".minicode" / "sessions").read_text() == "a file where the directory should be"


def test_a_symlinked_history_file_is_never_followed(tmp_path: Path) -> None:
    target = tmp_path / "elsewhere.txt"
    target.write_text("precious\n")
    path = tmp_path / FILE_NAME
    path.parent.mkdir(parents=True)
    path.symlink_to(target)
    log = InputLog(tmp_path)
    assert log.load() == [] and log.error is not None
    log.append(Queued("x", "x"))
    assert target.read_text() == "precious\n"


def test_the_history_is_capped_and_keeps_the_newest(tmp_path: Path) -> None:
    log = InputLog(tmp_path)
    for i in range(MAX_ENTRIES + 5):
        log.append(Queued(f"message {i}", f"message {i}"))
    entries = InputLog(tmp_path).load()
    assert len(entries) <= MAX_ENTRIES and entries[-1].text == f"message {MAX_ENTRIES + 4}"
    assert "message 0" not in [e.text for e in entries]
    log.append(Queued("z" * 300_000, "z" * 300_000))  # too large to keep: skipped
    assert InputLog(tmp_path).load()[-1].text == f"message {MAX_ENTRIES + 4}"


def test_recall_skips_repeats_and_searches_case_insensitively() -> None:
    r = Recall([Queued("Run Tests", "Run Tests"), Queued("build", "build")])
    assert r.add(Queued("build", "build")) is False
    assert r.search("run") is not None and r.hit == 0
    assert r.search("run", before=0) is None and r.hit == 0
    assert r.search("nothing") is None and r.hit is None
    assert r.step(-1) == Queued("build", "build") and r.step(+1) is None


def test_the_history_in_memory_is_capped_like_the_file() -> None:
    """A day of submissions does not pile up in memory: the newest ``MAX_ENTRIES`` entries
    within ``MAX_BYTES`` stay, as in the file."""
    recall = Recall([Queued(f"old {i}", f"old {i}") for i in range(10)])
    for i in range(MAX_ENTRIES + 50):
        recall.add(Queued(f"entry {i}", f"entry {i}"))
    assert len(recall.entries) == MAX_ENTRIES and recall.entries[-1].text == f"entry {MAX_ENTRIES + 49}"
    assert recall.entries[0].text == "entry 50"
    big = "x" * (MAX_BYTES // 3)
    for i in range(4):
        recall.add(Queued(big + str(i), "[paste]"))
    assert sum(len(e.text) for e in recall.entries) <= MAX_BYTES
    assert recall.entries[-1].text == big + "3" and recall.step(-1) == recall.entries[-1]
