"""Pastes without bracketed paste: a burst of keys faster than typing becomes one paste edit;
and a bracketed paste is text up to the end of the input that arrives with it."""

from __future__ import annotations

import asyncio

import pytest
from prompt_toolkit.input.vt100_parser import Vt100Parser
from prompt_toolkit.key_binding import KeyPress
from prompt_toolkit.keys import Keys

from minicode.cli.frontends.tui.burst import BURST_GAP, ENTER_GUARD, Bursts
from tests.cli.frontends.tui.conftest import FakeClock, Harness
from tests.cli.frontends.tui.fake_session import held

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


# --- bracketed pastes: everything that arrives with a paste is its text (finding T25) ---

END = "\x1b[201~"


def parsed(raw: str) -> list[KeyPress]:
    """What prompt_toolkit's parser makes of ``raw`` in one read (held prefixes stay held)."""
    out: list[KeyPress] = []
    Vt100Parser(out.append).feed(raw)
    return out


def test_a_paste_whose_text_holds_the_end_marker_stays_one_paste_with_that_text() -> None:
    b = Bursts(FakeClock())
    clipboard = "harmless text" + END + "\rSECOND TASK\r"
    assert b.feed(parsed("\x1b[200~" + clipboard + END)) == []  # nothing goes through as keys
    assert shape(b.flush()) == [(PASTE.value, clipboard)]


def test_an_enter_read_together_with_a_paste_is_part_of_it() -> None:
    b = Bursts(FakeClock())
    assert b.feed(parsed("\x1b[200~abc" + END + "\r")) == []
    assert shape(b.flush()) == [(PASTE.value, "abc\r")]


def test_escape_sequences_and_control_keys_after_a_fake_end_are_text_not_keys() -> None:
    b = Bursts(FakeClock())
    rest = "\x1b[A\x03\x1b[5~\x7f\r\n\x1b[13;2u"
    assert b.feed(parsed("\x1b[200~x" + END + rest + END)) == []
    assert shape(b.flush()) == [(PASTE.value, "x" + END + rest)]


def test_a_lone_esc_the_parser_gives_up_at_the_flush_belongs_to_the_paste() -> None:
    b = Bursts(FakeClock())
    b.feed(parsed("\x1b[200~abc" + END + "\x1b"))
    assert shape(b.flush([KeyPress(Keys.Escape, "\x1b")])) == [(PASTE.value, "abc\x1b")]


def test_a_paste_cut_by_an_inner_end_marker_and_split_over_reads_stays_one() -> None:
    clock = FakeClock()
    b = Bursts(clock)
    assert b.feed(parsed("\x1b[200~aaa" + END + "\rbb")) == []
    clock.advance(BURST_GAP / 2)
    assert b.feed(parsed("b\rrm -rf x\r" + END)) == []
    assert shape(b.flush()) == [(PASTE.value, "aaa" + END + "\rbbb\rrm -rf x\r")]


def test_a_read_ending_with_a_stray_end_marker_is_the_tail_of_a_paste() -> None:
    clock = FakeClock()
    b = Bursts(clock)
    b.feed(parsed("\x1b[200~aaa" + END))
    assert shape(b.flush()) == [(PASTE.value, "aaa")]
    clock.advance(1.0)  # a slow terminal: the rest comes late, after the paste was inserted
    assert b.feed(parsed("\rsecond task\r" + END)) == []
    assert shape(b.flush()) == [(PASTE.value, "\rsecond task\r")]
    assert b.feed(parsed(END)) == [] and b.flush() == []  # a marker alone: nothing at all


def test_two_pastes_read_together_join_without_their_markers() -> None:
    b = Bursts(FakeClock())
    b.feed(parsed("\x1b[200~one" + END + "\x1b[200~two" + END))
    assert shape(b.flush()) == [(PASTE.value, "onetwo")]


def test_after_a_pause_the_persons_keys_are_keys_again() -> None:
    clock = FakeClock()
    b = Bursts(clock)
    b.feed(parsed("\x1b[200~abc" + END))
    clock.advance(BURST_GAP * 3)  # not flushed yet (a busy loop), then the user's Up
    out = b.feed(parsed("\x1b[A"))
    assert shape(out) == [(PASTE.value, "abc"), ("up", "\x1b[A")]
    clock.advance(ENTER_GUARD / 2)  # an Enter right after a flushed paste is its tail
    b.feed(parsed("\x1b[200~more" + END))
    b.flush()
    assert shape(b.feed(parsed("\r"))) == [(PASTE.value, "\n")]
    clock.advance(ENTER_GUARD * 2)
    assert shape(b.feed(parsed("\r"))) == [("c-m", "\r")]


def test_keys_before_a_paste_in_the_same_read_keep_their_rule() -> None:
    b = Bursts(FakeClock())
    out = b.feed([KeyPress(Keys.Up, "\x1b[A"), *parsed("\x1b[200~p" + END + "\r")])
    assert shape(out) == [("up", "\x1b[A")]
    assert shape(b.flush()) == [(PASTE.value, "p\r")]


@pytest.mark.parametrize("clipboard", [
    "harmless text" + END + "\rSECOND TASK\r",
    "a" + END + "\r\n\r" + END + "\x1b\r\x03b",
    END + "\r",
    "tail" + END,
])
async def test_a_paste_with_an_end_marker_inside_never_submits(harness: Harness, clipboard: str) -> None:
    await harness.type("\x1b[200~" + clipboard + END)
    c = harness.controller
    assert harness.session.turns == [] and c.queue == [] and not c.busy
    as_text = clipboard.replace("\r\n", "\n").replace("\r", "\n")
    assert c.draft.text == as_text  # the whole clipboard, an inner end marker as text
    await harness.key("enter", pause=1.0)  # the person's own Enter sends what they saw
    await harness.until(lambda: len(harness.session.turns) == 1)
    assert harness.session.turns == [as_text]


async def test_a_paste_with_an_esc_during_a_task_does_not_interrupt_it(harness: Harness) -> None:
    gate = asyncio.Event()
    harness.session.scripts.append(held(gate))
    await harness.send("long task")
    await harness.until(lambda: harness.controller.busy)
    await harness.type("\x1b[200~x" + END + "\x1b")
    assert harness.controller.busy and harness.session.interrupted == 0
    assert harness.controller.draft.text == "x\x1b"
    gate.set()
