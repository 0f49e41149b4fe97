"""A running tool's output so far (ToolOutput): the last lines dim under its line, kept after Esc."""

from __future__ import annotations

import asyncio

from minicode.agent.events import ToolFinished, ToolOutput, ToolStarted
from minicode.cli.frontends.tui.items import Line
from minicode.cli.frontends.tui.text import wrap_plain
from minicode.cli.frontends.tui.view import Transcript
from tests.cli.frontends.tui.conftest import Harness
from tests.cli.frontends.tui.fake_session import Step


def _md(text: str, width: int) -> list[Line]:
    return wrap_plain(text, width)


def _rows(t: Transcript, width: int = 80) -> list[list[tuple[str, str]]]:
    return [list(line) for line in t.items[0].lines(width, _md)]


def test_the_last_five_lines_of_a_running_command_show_dim_under_its_line() -> None:
    t = Transcript(_md, workspace="/w")
    t.apply(ToolStarted("c1", "bash", "/w", "$ make"))
    t.apply(ToolOutput("c1", "".join(f"step {i}\n" for i in range(1, 9))))
    rows = _rows(t)
    assert "".join(x for _, x in rows[0]).startswith("▸ bash $ make  — running")
    assert rows[1:] == [[("class:tool.tail", f"    step {i}")] for i in range(4, 9)]
    t.apply(ToolOutput("c1", "step 9\n"))  # each event is new output: the tail moves on
    assert _rows(t)[1:] == [[("class:tool.tail", f"    step {i}")] for i in range(5, 10)]
    t.apply(ToolOutput("c1", "x" * 10_000 + "\nlast\n"))  # a flood keeps only a bounded tail
    assert len(t.items[0].live) <= 4096 and _rows(t)[-1] == [("class:tool.tail", "    last")]


def test_a_successful_command_drops_its_live_output_and_late_output_is_ignored() -> None:
    t = Transcript(_md, workspace="/w")
    t.apply(ToolStarted("c1", "bash", "/w", "$ ls"))
    t.apply(ToolOutput("c1", "a\nb\n"))
    t.apply(ToolFinished("c1", "bash", False, "exit 0", 0, 0.2))
    t.apply(ToolOutput("c1", "late\n"))
    t.apply(ToolOutput("nope", "unknown call\n"))
    assert len(_rows(t)) == 1


def test_control_sequences_in_live_output_are_neutralised() -> None:
    t = Transcript(_md, workspace="/w")
    t.apply(ToolStarted("c1", "bash", "/w", "$ x"))
    t.apply(ToolOutput("c1", "\x1b[2Jboom\n"))
    assert _rows(t)[1] == [("class:tool.tail", "    ␛[2Jboom")]


async def test_esc_keeps_the_live_output_under_the_interrupted_line(harness: Harness) -> None:
    h = harness
    h.session.scripts.append([
        Step(event=ToolStarted("c1", "bash", "/tmp/ws", "$ sleep 100")),
        Step(event=ToolOutput("c1", "waiting for lock\nstill waiting\n")),
        Step(gate=asyncio.Event()),
    ])
    await h.send("go")
    await h.until(lambda: "still waiting" in h.screen_text())
    await h.key("esc")
    await h.until(lambda: h.controller.task is None)
    screen = h.screen_text()
    assert "✗ bash $ sleep 100  — interrupted" in screen
    after = screen[screen.index("— interrupted"):]
    assert "    waiting for lock\n    still waiting" in after


async def test_a_burst_of_output_events_is_redrawn_at_most_once_per_50ms(harness: Harness) -> None:
    h = harness
    steps = [Step(event=ToolStarted("c1", "bash", "/tmp/ws", "$ yes"))]
    for i in range(300):
        steps += [Step(event=ToolOutput("c1", f"y {i}\n")), Step(sleep=0.001)]
    steps.append(Step(event=ToolFinished("c1", "bash", False, "exit 0", 0, 0.3)))
    h.session.scripts.append(steps)
    app = h.controller.app
    assert app is not None
    loop = asyncio.get_running_loop()
    await h.type("go")
    before, started = app.render_counter, loop.time()
    await h.key("enter", pause=1.0)
    await h.until(lambda: h.session.turns == ["go"])
    await h.until(lambda: h.controller.task is None)
    await h.redrawn()
    elapsed = loop.time() - started
    renders = app.render_counter - before
    assert "✓ bash $ yes" in h.screen_text()
    assert renders <= elapsed / 0.05 + 4, (renders, elapsed)
