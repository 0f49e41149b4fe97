"""Transcript items of the full-screen UI: what each entry shows, rendered to lines per width.

Pure: no prompt_toolkit, no rich (Markdown comes in through the ``RenderMarkdown`` callable).
Every item caches its rendered lines per width, so a redraw or a scroll costs nothing and a
resize re-lays each entry once. A streaming answer is split at Markdown block boundaries
outside code fences: finished blocks are rendered once per width, only the tail is re-rendered.
All model and tool text passes through ``neutralise`` before it is stored.
"""

from __future__ import annotations

import textwrap
from typing import Callable

from minicode.agent.approval import Approval, ApprovalRequest, Decision
from minicode.agent.events import ToolFinished, ToolStarted

__all__ = [
    "AnswerItem",
    "ApprovalItem",
    "Fragment",
    "Item",
    "Line",
    "ReasoningItem",
    "RenderMarkdown",
    "TextItem",
    "ToolItem",
    "neutralise",
    "split_finished",
    "wrap_plain",
]

Fragment = tuple[str, str]
"""(prompt_toolkit style string, text)"""
Line = tuple[Fragment, ...]
RenderMarkdown = Callable[[str, int], list[Line]]

MAX_CACHED_WIDTHS = 3  # a resize back and forth should not re-render, but memory stays bounded
TAB = "    "


def _control_table() -> dict[int, str]:
    table: dict[int, str] = {c: chr(0x2400 + c) for c in range(0x20) if chr(c) not in "\n\t"}
    table[0x0D] = ""  # CR: dropped; it could only be used to overwrite a line
    table[0x7F] = "\u2421"
    table.update({c: "\ufffd" for c in range(0x80, 0xA0)})
    return table


_CONTROLS = _control_table()


def neutralise(text: str) -> str:
    """Make control sequences visible and harmless: ESC → ␛, other C0 → control pictures, C1 → �."""
    return text.translate(_CONTROLS)


def wrap_plain(text: str, width: int, style: str = "", indent: str = "") -> list[Line]:
    """Plain text wrapped at ``width``, one paragraph per source line; continuation lines indented."""
    out: list[Line] = []
    width = max(len(indent) + 1, width)
    for source in text.expandtabs(len(TAB)).split("\n"):
        pieces = textwrap.wrap(
            source, width=width, subsequent_indent=indent, replace_whitespace=False,
            drop_whitespace=False, break_on_hyphens=False,
        ) or [""]
        out.extend(((style, piece),) for piece in pieces)
    return out


def split_finished(text: str) -> int:
    """Where the finished Markdown blocks of a streaming ``text`` end (0 = none finished yet).

    A block is finished when a blank line outside a code fence is followed by a line that
    has begun and is not indented (an indented one may continue a list item or a code block).
    """
    lines = text.split("\n")
    fence: str | None = None
    cut_line = 0
    for i, line in enumerate(lines):
        stripped = line.lstrip(" ")
        if fence is None and i > 0 and not lines[i - 1].strip() and line[:1] not in ("", " ", "\t"):
            if not stripped.startswith(("```", "~~~")) or i < len(lines) - 1:
                cut_line = i
        marker = stripped[:3]
        if marker in ("```", "~~~") and len(line) - len(stripped) < 4:
            if fence is None:
                fence = marker
            elif marker == fence:
                fence = None
    if cut_line == 0:
        return 0
    return sum(len(line) + 1 for line in lines[:cut_line])


class Item:
    """Base of every transcript entry: per-width line cache around ``_render``."""

    def __init__(self) -> None:
        self._cache: dict[int, list[Line]] = {}

    def lines(self, width: int, md: RenderMarkdown) -> list[Line]:
        got = self._cache.get(width)
        if got is None:
            if len(self._cache) >= MAX_CACHED_WIDTHS:
                self._cache.pop(next(iter(self._cache)))
            got = self._cache[width] = self._render(width, md)
        return got

    def _changed(self) -> None:
        self._cache.clear()

    def _render(self, width: int, md: RenderMarkdown) -> list[Line]:
        raise NotImplementedError


class TextItem(Item):
    """A plain entry: user submission, notice, error, statistics, help."""

    def __init__(self, text: str, style: str = "", prefix: str = "") -> None:
        super().__init__()
        self.text = neutralise(text)
        self.style = style
        self.prefix = prefix

    def _render(self, width: int, md: RenderMarkdown) -> list[Line]:
        indent = " " * len(self.prefix)
        text = self.prefix + self.text.replace("\n", "\n" + indent)
        return wrap_plain(text, width, self.style, indent)


class AnswerItem(Item):
    """A Markdown answer that may still be streaming."""

    def __init__(self, text: str = "") -> None:
        super().__init__()
        self._blocks: list[str] = []
        self._tail = ""
        self._done_lines: dict[int, list[Line]] = {}
        self._done_count: dict[int, int] = {}
        if text:
            self.append(text)

    @property
    def text(self) -> str:
        return "".join(self._blocks) + self._tail

    def append(self, text: str) -> None:
        self._tail += neutralise(text)
        cut = split_finished(self._tail)
        if cut:
            self._blocks.append(self._tail[:cut])
            self._tail = self._tail[cut:]
        self._changed()

    def _changed(self) -> None:
        super()._changed()
        for width in list(self._done_lines)[:-MAX_CACHED_WIDTHS]:
            del self._done_lines[width], self._done_count[width]

    def _render(self, width: int, md: RenderMarkdown) -> list[Line]:
        done = self._done_lines.setdefault(width, [])
        for block in self._blocks[self._done_count.get(width, 0):]:
            rendered = md(block.strip("\n"), width)
            if done and rendered:
                done.append(())
            done.extend(rendered)
        self._done_count[width] = len(self._blocks)
        tail = md(self._tail.strip("\n"), width) if self._tail.strip() else []
        if done and tail:
            return [*done, (), *tail]
        return [*done, *tail]


class ReasoningItem(Item):
    """Reasoning, collapsed to one dim line: how much, and the latest words while it streams."""

    def __init__(self) -> None:
        super().__init__()
        self.text = ""
        self.finished = False

    def append(self, text: str) -> None:
        self.text += neutralise(text)
        self._changed()

    def finish(self) -> None:
        self.finished = True
        self._changed()

    def _render(self, width: int, md: RenderMarkdown) -> list[Line]:
        words = " ".join(self.text.split())
        head = f"∴ {'thought' if self.finished else 'thinking'} ({len(self.text):,} chars)"
        if not self.finished and words:
            room = max(0, width - len(head) - 3)
            head += "  " + (words[-room:] if room else "")
        return [(("class:reasoning", head[:width]),)]


class ToolItem(Item):
    """One tool call: name, target, argument summary; then status, exit code and duration."""

    def __init__(self, started: ToolStarted) -> None:
        super().__init__()
        self.call_id = started.call_id
        self.name = started.name
        self.target = neutralise(started.target)
        self.detail = neutralise(started.detail)
        self.result: ToolFinished | None = None

    def finish(self, finished: ToolFinished) -> None:
        self.result = finished
        self._changed()

    def summary(self) -> str:
        head = " ".join(p for p in (self.name, self.target, self.detail) if p)
        r = self.result
        if r is None:
            return f"{head}  … running"
        if r.denied:
            return f"{head}  — denied" + (f": {neutralise(r.summary)}" if r.summary else "")
        exit_text = None if r.exit_code is None else f"exit {r.exit_code}"
        # bash's own summary already names the exit code; don't say it twice
        parts = [] if exit_text is None or exit_text in r.summary else [exit_text]
        parts.append(f"{r.duration_seconds:.1f}s")
        if r.summary:
            parts.append(neutralise(r.summary))
        return f"{head}  — {' · '.join(parts)}"

    def _render(self, width: int, md: RenderMarkdown) -> list[Line]:
        r = self.result
        if r is None:
            mark, style = "▸ ", "class:tool.running"
        elif r.denied or r.is_error:
            mark, style = "✗ ", "class:tool.error"
        else:
            mark, style = "✓ ", "class:tool.ok"
        return wrap_plain(mark + self.summary(), width, style, indent="  ")


_CHOICES = "[y] allow once   [a] allow {tool} for this session   [n] deny"
_OUTCOMES = {Decision.ALLOW_ONCE: "allowed once", Decision.ALLOW_SESSION: "allowed for this session"}


class ApprovalItem(Item):
    """An approval prompt in the transcript, and afterwards how it was answered."""

    def __init__(self, request: ApprovalRequest) -> None:
        super().__init__()
        self.request = request
        self.outcome: str | None = None

    def resolve(self, approval: Approval | None) -> None:
        if approval is None:
            self.outcome = "no answer (task interrupted)"
        elif approval.decision is Decision.DENY:
            self.outcome = "denied" + (f": {approval.reason}" if approval.reason else "")
        else:
            self.outcome = _OUTCOMES[approval.decision]
        self._changed()

    def _render(self, width: int, md: RenderMarkdown) -> list[Line]:
        r = self.request
        out = wrap_plain(f"? approve {r.tool}: {neutralise(r.target)}", width, "class:approval", "  ")
        if r.detail:
            out += wrap_plain("  " + neutralise(r.detail), width, "class:approval.detail", "  ")
        last = _CHOICES.format(tool=r.tool) if self.outcome is None else f"→ {self.outcome}"
        out += wrap_plain("  " + last, width, "class:approval.choices", "  ")
        return out
