"""Markdown → fragment lines through rich."""

from __future__ import annotations

from minicode.cli.frontends.tui.markdown import MarkdownRenderer


def test_markdown_becomes_styled_lines_within_the_width() -> None:
    r = MarkdownRenderer()
    lines = r("# Title\n\nsome **bold** words " + "long " * 30 + "\n\n```py\nx = 1\n```", 40)
    text = ["".join(t for _, t in line) for line in lines]
    assert any("Title" in line for line in text)
    assert all(len(line) <= 40 for line in text)
    bold = [style for line in lines for style, t in line if t == "bold"]
    assert bold and "bold" in bold[0]
    code_styles = [style for line in lines for style, t in line if t == "x"]
    assert code_styles and "bg:#" in code_styles[0]
    assert r.renders == 1


def test_escape_sequences_never_reach_the_output_as_controls() -> None:
    from minicode.cli.frontends.tui.answer import AnswerItem

    item = AnswerItem("text \x1b[31mred\x1b[0m and \x9b2J")
    lines = item.lines(60, MarkdownRenderer())
    joined = "".join(t for line in lines for _, t in line)
    assert "\x1b" not in joined and "\x9b" not in joined
    assert "␛[31mred" in joined


def test_a_code_block_has_one_blank_row_above_and_below_not_two() -> None:
    lines = MarkdownRenderer()("before\n\n```py\nx = 1\n```\n\nafter", 40)
    text = ["".join(t for _, t in line).strip() for line in lines]
    assert text == ["before", "", "x = 1", "", "after"]


def test_a_whole_answer_never_shows_two_blank_rows_in_a_row() -> None:
    text = "intro\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n```py\nx = 1\n```\n\nend"
    lines = MarkdownRenderer()(text, 60)
    rows = ["".join(t for _, t in line).strip() for line in lines]
    assert rows[0] == "intro" and rows[-1] == "end"
    assert all(rows[i] or rows[i + 1] for i in range(len(rows) - 1)), rows
    table_last = next(i for i, r in enumerate(rows) if r.startswith("1"))
    assert rows[table_last + 1 : table_last + 3] == ["", "x = 1"]  # one blank row, not two


def test_standard_colours_stay_terminal_palette_colours_and_themes_keep_hex() -> None:
    lines = MarkdownRenderer()("## Heading\n\n> quoted\n\n```py\nx = 1\n```", 40)
    styles = {text.strip(): style for line in lines for style, text in line if text.strip()}
    assert "ansimagenta" in styles["Heading"] and "#" not in styles["Heading"]  # rich: magenta
    assert "ansimagenta" in styles["quoted"]
    assert "#" in styles["x"] and "ansi" not in styles["x"]  # the code theme's own colours


def test_a_link_keeps_its_url_dim_after_the_text_and_an_autolink_is_shown_once() -> None:
    md = MarkdownRenderer()
    lines = md("See [the docs](https://example.com/docs) or <https://x.org/a>.", 100)
    text = "".join(t for line in lines for _, t in line)
    assert text.rstrip() == "See the docs (https://example.com/docs) or https://x.org/a."
    url_styles = [s for line in lines for s, t in line if "https://example.com/docs" in t]
    assert url_styles and all("fg:#888888" in s for s in url_styles)


def test_a_link_url_survives_the_exit_printout() -> None:
    from minicode.agent.events import AssistantDone, TextChunk
    from minicode.cli.frontends.tui.view import Transcript, plain_text

    t = Transcript(MarkdownRenderer())
    t.apply(TextChunk("read [the docs](https://example.com/docs)"))
    t.apply(AssistantDone("", "", 0))
    assert "read the docs (https://example.com/docs)" in plain_text(t, 80)


VARIED = """# Plan

Some *em*, **strong**, `code`, ~~gone~~ and a [link](https://example.com) <https://x.org>.

1. first
2. second
   - nested

> quoted

| a | b |
|---|---|
| 1 | 2 |

```python
def f(x):
    return x  # comment
```

```no-such-language-xyz
plain words
```

    indented code

---
"""


def test_code_blocks_are_highlighted_the_same_every_time() -> None:
    r = MarkdownRenderer()
    for width in (30, 80):
        assert r(VARIED, width) == r(VARIED, width)
    code = [style for line in r(VARIED, 80) for style, text in line if text == "def"]
    assert code and "#" in code[0]  # highlighted by the python lexer


def test_warm_up_loads_what_the_first_answer_needs_on_a_thread_after_the_first_frame() -> None:
    import sys
    import threading

    from minicode.cli.frontends.tui.app import _after_first_frame

    called: list[str] = []
    _after_first_frame(lambda: called.append("caller's"))
    assert called == ["caller's"]
    warm = [t for t in threading.enumerate() if t.name == "minicode-markdown"]
    for thread in warm:
        thread.join(10)
    assert "rich.markdown" in sys.modules and "pygments.lexers.python" in sys.modules


def test_warm_up_never_raises(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from minicode.cli.frontends.tui import markdown

    def broken(self: object, text: str, width: int) -> None:
        raise RuntimeError("a rich we do not know")

    monkeypatch.setattr(markdown.MarkdownRenderer, "_render", broken)
    markdown.warm_up()  # falls back to plain text, like any render


def _rows(text: str, width: int = 40) -> list[str]:
    return ["".join(t for _, t in line).rstrip() for line in MarkdownRenderer()(text, width)]


def test_a_numbered_list_shows_its_numbers_with_a_dot_and_wraps_under_the_text() -> None:
    # trial R14: rich drew " 1 one" (no dot)
    rows = _rows("steps:\n\n1. one\n2. two " + "word " * 10 + "\n3. three", 30)
    assert rows[2:4] == [" 1. one", " 2. two word word word word"]
    assert rows[4].startswith("    word") and rows[-1] == " 3. three"


def test_a_numbered_list_keeps_its_start_and_aligns_two_digit_numbers() -> None:
    rows = _rows("9. nine\n10. ten\n11. eleven")
    assert rows == ["  9. nine", " 10. ten", " 11. eleven"]


def test_bullets_are_unchanged_by_the_numbered_items() -> None:
    assert _rows("- a\n- b") == [" • a", " • b"]
