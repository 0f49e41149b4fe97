"""Markdown → styled terminal lines at a given width, via rich.

Owns the one place that imports rich for the full-screen UI. Rich renders to Segments,
which are converted straight into prompt_toolkit-style ``(style, text)`` fragments per line
(no ANSI round trip). Rendering failure falls back to plain wrapped text, so a malformed
answer is always shown. Must not import prompt_toolkit; the transcript view (``view.py``)
calls this through the ``RenderMarkdown`` callable it is given (see ``tui_items.py``).
"""

from __future__ import annotations

import io
from typing import TYPE_CHECKING, Any

from minicode.cli.frontends.tui.items import Line, wrap_plain

if TYPE_CHECKING:
    from rich.color import Color
    from rich.console import Console
    from rich.style import Style

__all__ = ["MarkdownRenderer", "warm_up"]

CODE_THEME = "monokai"
WARM_SAMPLE = "# a\n\n*b* **c** `d` [e](https://f)\n\n- g\n\n> h\n\n| i |\n|---|\n| j |\n\n```python\nk = 1\n```"


def warm_up() -> None:
    """Load rich, markdown-it and pygments (and a lexer) by rendering a small document once,
    on a thread after the first frame: the first answer then does not pay for them while it
    streams (~0.1-0.2 s of imports). Its own renderer: the UI's is never shared across threads."""
    MarkdownRenderer()(WARM_SAMPLE, 40)


class MarkdownRenderer:
    """Renders Markdown to fragment lines. Callable as ``renderer(text, width)``.

    One rich ``Console`` (writing into a StringIO, never to the terminal) is reused for every
    call; converted styles are cached per rich Style because the same few recur constantly.
    """

    def __init__(self) -> None:
        self._console: Console | None = None
        self._styles: dict[Style, str] = {}
        self._markdown: type | None = None  # built on first use, with rich
        self.renders = 0
        """How many Markdown renders were done (the view tests and the bench read it)."""

    def _get_console(self) -> Console:
        if self._console is None:
            from rich.console import Console  # lazily: rich costs start-up time
            from rich.theme import Theme

            self._console = Console(
                file=io.StringIO(), width=80, force_terminal=True, color_system="truecolor",
                legacy_windows=False, emoji=False, highlight=False,
                theme=Theme({"markdown.link_url": "dim"}),
            )
        return self._console

    def __call__(self, text: str, width: int) -> list[Line]:
        self.renders += 1
        try:
            return self._render(text, max(1, width))
        except Exception:  # a renderer bug must never lose the answer: show it plainly
            return wrap_plain(text, width)

    def _render(self, text: str, width: int) -> list[Line]:
        console = self._get_console()
        options = console.options.update_width(width)
        if self._markdown is None:
            self._markdown = _tight_markdown()
        rendered = console.render_lines(self._markdown(text), options, pad=False)
        lines: list[Line] = []
        for segments in rendered:
            frags = tuple(
                (self._style(seg.style), seg.text) for seg in segments if seg.text and not seg.control
            )
            lines.append(frags)
        return _trim_blank(lines)

    def _style(self, style: Style | None) -> str:
        if style is None:
            return ""
        cached = self._styles.get(style)
        if cached is None:
            cached = self._styles[style] = _convert_style(style)
        return cached


def _tight_markdown() -> type:
    """rich's Markdown with code blocks padded left/right only: rich already separates blocks
    by a blank line, so its vertical padding would make two blank rows around the code."""
    from rich.markdown import CodeBlock, ListItem, Markdown
    from rich.segment import Segment
    from rich.syntax import Syntax

    class TightCodeBlock(CodeBlock):
        def __rich_console__(self, console, options):  # type: ignore[no-untyped-def]
            yield Syntax(str(self.text).rstrip(), self.lexer_name, theme=CODE_THEME, word_wrap=True, padding=(0, 1))

    class NumberedItem(ListItem):
        """A numbered item as "1. text" (rich draws " 1 text": a bare digit reads as part of
        the text, and a copied list loses its numbering)."""

        def render_number(self, console, options, number, last_number):  # type: ignore[no-untyped-def]
            width = len(str(last_number)) + 3  # "NN. "
            lines = console.render_lines(self.elements, options.update(width=options.max_width - width),
                                         style=self.style)
            style = console.get_style("markdown.item.number", default="none")
            numeral, padding = Segment(f"{number}.".rjust(width - 1) + " ", style), Segment(" " * width, style)
            for index, line in enumerate(lines):
                yield numeral if index == 0 else padding
                yield from line
                yield Segment("\n")

    class TightMarkdown(Markdown):
        """Links as "text (url)": a terminal may not show OSC 8 hyperlinks, and the URL would vanish."""

        elements = {**Markdown.elements, "fence": TightCodeBlock, "code_block": TightCodeBlock,
                    "list_item_open": NumberedItem}

        def __init__(self, markup: str, **kwargs: Any) -> None:
            super().__init__(markup, hyperlinks=False, **kwargs)
            _unlink_autolinks(self.parsed)

    return TightMarkdown


def _unlink_autolinks(tokens: list[Any]) -> None:
    """``<https://x>`` is its own URL: as plain text, so it is not shown twice ("url (url)")."""
    for token in tokens:
        if token.children:
            token.children = [t for t in token.children
                              if not (t.type in ("link_open", "link_close") and t.markup == "autolink")]


_ANSI = ("ansiblack", "ansired", "ansigreen", "ansiyellow", "ansiblue", "ansimagenta", "ansicyan",
         "ansigray", "ansibrightblack", "ansibrightred", "ansibrightgreen", "ansibrightyellow",
         "ansibrightblue", "ansibrightmagenta", "ansibrightcyan", "ansiwhite")


def _convert_color(color: Color) -> str:
    """The 16 standard colours stay palette colours (the user's terminal theme decides how
    they look, readable on dark and light backgrounds); others become #rrggbb."""
    from rich.color import ColorType

    if color.type in (ColorType.STANDARD, ColorType.WINDOWS) and color.number is not None:
        return _ANSI[color.number]
    return color.get_truecolor().hex


def _convert_style(style: Style) -> str:
    """A rich Style as a prompt_toolkit style string."""
    parts: list[str] = []
    if style.color is not None and not style.color.is_default:
        parts.append(_convert_color(style.color))
    if style.bgcolor is not None and not style.bgcolor.is_default:
        parts.append("bg:" + _convert_color(style.bgcolor))
    for attr in ("bold", "italic", "underline", "reverse", "strike"):
        if getattr(style, attr):
            parts.append(attr)
    if style.dim:
        parts.append("fg:#888888" if style.color is None else "")
    return " ".join(p for p in parts if p)


def _trim_blank(lines: list[Line]) -> list[Line]:
    """No blank rows at either end, and never two in a row."""
    def blank(line: Line) -> bool:
        return all(not text.strip() and "bg:" not in style for style, text in line)

    # rich pads a table with an empty row above and below and separates blocks by a blank
    # line, so a whole answer (resumed, non-streamed) would show two blank rows around tables
    out: list[Line] = []
    for line in lines:
        if blank(line):
            if out and out[-1]:
                out.append(())
        else:
            out.append(line)
    while out and not out[-1]:
        out.pop()
    return out
