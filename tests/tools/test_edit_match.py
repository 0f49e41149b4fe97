"""Pure matching helpers of edit: line-ending adaptation and miss explanations."""

from __future__ import annotations

from minicode.tools.edit import apply_edit
from minicode.tools.edit_match import adapt_line_endings, explain_miss, visible


def test_visible_whitespace() -> None:
    assert visible("\tx  y\r") == "→x··y␍"


def test_adapt_line_endings_only_for_crlf_files() -> None:
    assert adapt_line_endings(b"a\nb", b"c\nd", b"a\nb\n") == (b"a\nb", b"c\nd")
    assert adapt_line_endings(b"a\nb", b"c\nd", b"a\r\nb\r\n") == (b"a\r\nb", b"c\r\nd")
    # old_text already matching as given stays as given; new text still gets CRLF.
    assert adapt_line_endings(b"a", b"x\ny", b"a\r\nb\r\n") == (b"a", b"x\r\ny")


def test_spaces_in_file_tabs_in_old_text() -> None:
    message = explain_miss("class A:\n    def f(self):\n        pass\n", "\tdef f(self):\n\t\tpass\n")
    assert "the file indents with spaces; old_text uses tabs" in message
    assert "closest region is at line 2" in message


def test_trailing_whitespace_in_file() -> None:
    message = explain_miss("a = 1   \nb = 2\n", "a = 1\nb = 2")
    assert "the file has trailing whitespace on line 1 of the region" in message
    assert "a·=·1···" in message


def test_crlf_old_text_against_lf_file() -> None:
    message = explain_miss("one\ntwo\n", "one\r\ntwo")
    assert "old_text has CRLF" in message


def test_content_difference_and_no_similar_region() -> None:
    assert "line 2 of the region differs in content" in explain_miss(
        "def f():\n    return 1\n", "def f():\n    return 2"
    )
    assert "No similar region" in explain_miss("aaa\nbbb\n", "zzzzzzzzzzzz qqqq")


def test_fuzzy_closest_line_found() -> None:
    text = "\n".join(f"line number {i}" for i in range(100)) + "\nprint('hello wrld')\n"
    message = explain_miss(text, "print('hello world')")
    assert "closest region is at line 101" in message


def test_apply_edit_is_byte_exact() -> None:
    data = b"\x00\xffhead\nmid\ntail\xfe"
    outcome = apply_edit(data, "mid", "MID", replace_all=False)
    assert outcome.data == b"\x00\xffhead\nMID\ntail\xfe"
    assert outcome.count == 1 and outcome.first_line == 2


def test_a_content_miss_shows_the_lines_as_they_are() -> None:
    # a small model copied the visible-whitespace markers into its next old_text
    message = explain_miss('def discount(price, percent):\n    """Off."""\n', "def discount(price, percent):\n    ``Off.``")
    assert "line 2 of the region differs in content" in message
    assert "     1  def discount(price, percent):" in message and "·" not in message and "→ tab" not in message
