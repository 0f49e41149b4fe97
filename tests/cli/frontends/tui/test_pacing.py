"""Streamed output is redrawn at a pace its frames' cost allows (``pacing.py``): at most 20
frames a second, fewer when frames are dear, never fewer than 4; keys are drawn at once."""

from __future__ import annotations

from minicode.agent.events import TextChunk
from minicode.cli.frontends.tui.pacing import FASTEST, SHARE, SLOWEST, StreamPacer
from tests.cli.frontends.tui.conftest import Harness


def test_the_interval_follows_the_frames_cost_within_bounds() -> None:
    pacer = StreamPacer()
    assert pacer.interval() == FASTEST  # nothing measured yet
    pacer.rendered(0.001)
    assert pacer.interval() == FASTEST  # cheap frames: 20 a second
    for _ in range(20):
        pacer.rendered(0.004)
    assert abs(pacer.interval() - 0.004 / SHARE) < 1e-3  # dear frames: about 10 a second
    for _ in range(20):
        pacer.rendered(0.5)
    assert pacer.interval() == SLOWEST  # never slower than this


def test_a_clock_gone_wrong_is_ignored() -> None:
    pacer = StreamPacer()
    pacer.rendered(-3.0)
    pacer.rendered(1e9)
    assert pacer.cost == 0.0 and pacer.interval() == FASTEST


async def test_chunks_arriving_together_make_one_frame_and_all_of_them_show(harness: Harness) -> None:
    c = harness.controller
    await harness.redrawn()
    c.pacer.cost = 0.2 * SHARE  # frames of 200 ms CPU: the slowest pace
    c.on_event(TextChunk("first "))  # the first chunk of a while is drawn at once
    await harness.until(lambda: "first" in harness.screen_text())
    frames = c.app.render_counter  # type: ignore[union-attr]
    for word in ("second ", "third ", "fourth"):
        c.on_event(TextChunk(word))
    assert c._stream_frame is not None  # one frame waits for all three
    await harness.until(lambda: "first second third fourth" in harness.screen_text())
    assert c.app.render_counter - frames <= 2  # type: ignore[union-attr]


async def test_a_key_during_a_stream_is_drawn_at_once_with_the_text_so_far(harness: Harness) -> None:
    c = harness.controller
    await harness.redrawn()
    c.pacer.cost = SLOWEST * SHARE
    c.on_event(TextChunk("alpha "))
    await harness.until(lambda: "alpha" in harness.screen_text())
    c.on_event(TextChunk("beta"))  # waits for the pace …
    await harness.type("x")  # … but a key's frame shows it now
    await harness.until(lambda: "alpha beta" in harness.screen_text())
    assert c.draft.text == "x"
