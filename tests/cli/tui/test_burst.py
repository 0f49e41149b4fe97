"""Pastes without bracketed paste: a burst of keys faster than typing becomes one paste edit."""

from __future__ import annotations

from prompt_toolkit.key_binding import KeyPress
from prompt_toolkit.keys import Keys

from minicode.cli.tui.burst import BURST_GAP, ENTER_GUARD, Bursts
from tests.cli.tui.conftest import FakeClock, Harness

PASTE = Keys.BracketedPaste


def keys(text: str) -> list[KeyPress]:
    """What prompt_toolkit's parser makes of ``text`` typed (no escape sequences here)."""
    special = {"\r": Keys.ControlM, "\n": Keys.ControlJ, "\t": Keys.ControlI}
    return [KeyPress(special.get(ch, ch), ch) for ch in text]


def shape(presses: list[KeyPress]) -> list[tuple[str, str]]:
    return [(p.key.value if isinstance(p.key, Keys) else p.key, p.data) for p in presses]


def test_single_keys_pass_through_at_once() -> None:
    b = Bursts(FakeClock())
    assert shape(b.feed(keys("a"))) == [("a", "a")]
    assert shape(b.feed(keys("\r"))) == [("c-m", "\r")]
    assert not b.holding and b.flush() == []


def test_a_read_of_many_keys_with_line_breaks_is_held_and_becomes_one_paste() -> None:
    b = Bursts(FakeClock())
    assert b.feed(keys("line one\rline two\r")) == []
    assert b.holding
    assert shape(b.flush()) == [(PASTE.value, "line one\rline two\r")]
    assert b.pastes == 1


def test_reads_within_the_gap_join_one_paste_and_a_pause_ends_it() -> None:
    clock = FakeClock()
    b = Bursts(clock)
    assert b.feed(keys("part one\r")) == []
    clock.advance(BURST_GAP / 2)
    assert b.feed(keys("part two")) == []
    clock.advance(BURST_GAP / 2)
    assert b.feed(keys("\r")) == []  # a lone Enter inside the burst is part of it
    clock.advance(BURST_GAP * 3)  # the input paused (the loop was busy): that paste is over
    out = b.feed(keys("x"))
    assert shape(out) == [(PASTE.value, "part one\rpart two\r"), ("x", "x")]


def test_a_lone_enter_right_after_a_paste_is_its_tail_not_a_submission() -> None:
    clock = FakeClock()
    b = Bursts(clock)
    b.feed(keys("one\rtwo"))
    b.flush()
    clock.advance(ENTER_GUARD / 2)
    assert shape(b.feed(keys("\r"))) == [(PASTE.value, "\n")]
    clock.advance(ENTER_GUARD * 2)
    assert shape(b.feed(keys("\r"))) == [("c-m", "\r")]  # a person's Enter, later


def test_other_keys_keep_their_place_and_single_characters_stay_keys() -> None:
    b = Bursts(FakeClock())
    up = KeyPress(Keys.Up, "\x1b[A")
    b.feed([*keys("ab"), up, *keys("c"), *keys("d\re")])
    assert shape(b.flush()) == [(PASTE.value, "ab"), ("up", "\x1b[A"), (PASTE.value, "cd\re")]
    b.feed([*keys("x"), up, *keys("y")])
    assert shape(b.flush()) == [("x", "x"), ("up", "\x1b[A"), ("y", "y")]


def test_an_unknown_escape_sequence_is_not_taken_for_text() -> None:
    b = Bursts(FakeClock())
    shift_enter = [KeyPress(Keys.Escape, "\x1b"), *keys("[13;2u")]
    assert shape(b.feed(shift_enter)) == shape(shift_enter)
    mouse = [KeyPress(Keys.Vt100MouseEvent, "\x1b[<64;5;5M")] * 3
    assert b.feed(mouse) == mouse


async def test_ten_lines_without_bracketed_paste_are_one_draft_and_no_submission(harness: Harness) -> None:
    lines = [f"line {i} of the pasted text" for i in range(1, 11)]
    await harness.type("\r".join(lines) + "\r")
    assert harness.session.turns == [] and harness.controller.queue == []
    assert harness.controller.draft.text == "\n".join(lines) + "\n"
    burst = harness.controller.app.input  # type: ignore[union-attr]
    assert burst.bursts.pastes == 1  # type: ignore[attr-defined]


async def test_a_large_plain_paste_over_many_reads_is_one_edit(harness: Harness) -> None:
    text = "\r".join(f"row {i} " + "x" * 40 for i in range(300))  # ~15 kB: many reads
    await harness.type(text)
    assert harness.controller.draft.text == "[pasted 300 lines]"
    assert harness.controller.pastes.expand(harness.controller.draft.text) == text.replace("\r", "\n")
    assert harness.session.turns == []
    await harness.key("enter", pause=1.0)  # the user's own Enter sends it, whole
    await harness.until(lambda: len(harness.session.turns) == 1)
    assert harness.session.turns[0] == text.replace("\r", "\n")
