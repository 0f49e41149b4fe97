"""Wrapping by terminal cells: continuation indent, CJK width, the input height."""

from __future__ import annotations

from minicode.cli.frontends.tui.draft import wrapped_line_count
from minicode.cli.frontends.tui.items import TextItem
from minicode.cli.frontends.tui.text import cell_width, wrap_plain


def _texts(lines) -> list[str]:  # type: ignore[no-untyped-def]
    return ["".join(t for _, t in line) for line in lines]


def test_wrapped_lines_continue_under_the_text_with_the_prefix_width() -> None:
    item = TextItem("alpha beta gamma delta epsilon zeta", "class:user", "› ")
    out = _texts(item.lines(16, lambda t, w: []))
    assert out == ["› alpha beta", "  gamma delta", "  epsilon zeta"]


def test_cjk_text_wraps_by_cells_not_characters() -> None:
    text = "漢字" * 10  # 20 characters, 40 cells
    out = _texts(wrap_plain(text, 10))
    assert all(cell_width(line) <= 10 for line in out)
    assert len(out) == 4 and "".join(out) == text


def test_a_word_longer_than_the_line_is_broken() -> None:
    out = _texts(wrap_plain("x" * 25, 10, indent="  "))
    assert out == ["x" * 10, "  " + "x" * 8, "  " + "x" * 7]


def test_input_height_counts_cells() -> None:
    assert wrapped_line_count("漢" * 30, 20) == 3  # 60 cells
    assert wrapped_line_count("a" * 30, 20) == 2
    assert wrapped_line_count("", 20) == 1
