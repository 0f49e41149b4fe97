"""Paste placeholders, slash commands and the input-height rule (pure)."""

from __future__ import annotations

from minicode.cli.frontends.tui.draft import Pastes, input_height, wrapped_line_count


def test_small_paste_goes_in_verbatim_with_lf_line_breaks() -> None:
    p = Pastes()
    assert p.text_to_insert("a\rb\r\nc") == "a\nb\nc"
    assert not p


def test_large_paste_becomes_a_placeholder_and_expands_to_the_full_text() -> None:
    p = Pastes()
    data = "\r".join(f"line {i}" for i in range(5000))
    label = p.text_to_insert(data)
    assert label == "[pasted 5,000 lines]"
    sent = p.expand(f"please review {label} thanks")
    assert sent == "please review " + data.replace("\r", "\n") + " thanks"


def test_two_equal_sized_pastes_get_distinct_placeholders() -> None:
    p = Pastes()
    a = p.text_to_insert("a\n" * 30)
    b = p.text_to_insert("b\n" * 30)
    assert a != b
    assert p.expand(f"{a}|{b}") == "a\n" * 30 + "|" + "b\n" * 30


def test_toggle_expands_then_collapses() -> None:
    p = Pastes()
    text = "\n".join(str(i) for i in range(25))
    label = p.text_to_insert(text)
    expanded = p.toggle(f"x {label}")
    assert expanded == f"x {text}"
    assert p.expand(expanded) == expanded  # an expanded paste is not expanded twice
    assert p.toggle(expanded) == f"x {label}"


def test_toggle_without_pastes_changes_nothing() -> None:
    assert Pastes().toggle("plain draft") == "plain draft"


def test_exactly_twenty_lines_is_not_a_placeholder() -> None:
    text = "\n".join("x" for _ in range(20))
    assert Pastes().text_to_insert(text) == text


def test_input_height_rule() -> None:
    assert input_height(1, 30) == 1
    assert input_height(0, 30) == 1  # at least one line
    assert input_height(4, 30) == 4  # grows with the draft
    assert input_height(50, 30) == 6  # at most six lines
    assert input_height(50, 12) == 4  # at most a third of the window
    assert input_height(50, 2) == 1


def test_wrapped_line_count_counts_soft_wrapped_lines() -> None:
    assert wrapped_line_count("", 10) == 1
    assert wrapped_line_count("x" * 25, 10) == 3
    assert wrapped_line_count("a\nb\n", 10) == 3
