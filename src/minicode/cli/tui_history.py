"""The earlier conversation of a resumed session, as one transcript entry.

``HistoryItem`` holds one child entry per user message, assistant answer (Markdown) and tool
call (a compact tool line with its result's status). It never renders what is not on screen:
children never shown count by a cheap estimate, and a child's real height replaces its
estimate when it is first rendered; the sum is kept per width, so a frame costs the visible
children only, however long the history. Pure: no prompt_toolkit, no rich.
"""

from __future__ import annotations

import json
from typing import Sequence

from minicode.agent.events import ToolFinished
from minicode.cli.tui_items import MAX_CACHED_WIDTHS, AnswerItem, Item, Line, RenderMarkdown, TextItem
from minicode.cli.tui_tool import ToolItem
from minicode.provider.types import Message

__all__ = ["HistoryItem", "history_items"]

_TARGET_KEYS = ("path", "command", "pattern")
_DETAIL_MAX = 60


def _call_target(arguments: str) -> str:
    try:
        args = json.loads(arguments or "{}")
    except ValueError:
        return ""
    if not isinstance(args, dict):
        return ""
    for key in _TARGET_KEYS:
        value = args.get(key)
        if isinstance(value, str) and value:
            first = value.split("\n", 1)[0]
            text = ("$ " if key == "command" else "") + first
            return text if len(text) <= _DETAIL_MAX else text[: _DETAIL_MAX - 1] + "…"
    return ""


def _result_of(call_id: str, name: str, text: str | None) -> ToolFinished:
    content = (text or "").lstrip()
    denied = content.startswith("denied by the user")
    failed = denied or content.lower().startswith("error")
    return ToolFinished(call_id, name, failed, "", None, 0.0, denied=denied)


def history_items(messages: Sequence[Message]) -> list[Item]:
    """User messages, assistant answers and tool lines of ``messages`` (system ones skipped)."""
    results = {m.tool_call_id: m.content for m in messages if m.role == "tool" and m.tool_call_id}
    out: list[Item] = []
    for m in messages:
        if m.role == "user" and m.content:
            out.append(TextItem(m.content, "class:user", "› "))
        elif m.role == "assistant":
            if m.content and m.content.strip():
                out.append(AnswerItem(m.content))
            for call in m.tool_calls:
                tool = ToolItem(call.id, call.name, _call_target(call.arguments), "")
                tool.replayed = True
                if call.id in results:
                    tool.finish(_result_of(call.id, call.name, results[call.id]))
                out.append(tool)
    return out


class HistoryItem(Item):
    """Earlier entries, rendered lazily (see the module docstring)."""

    def __init__(self, items: list[Item]) -> None:
        super().__init__()
        self.items = items
        self._heights: dict[int, int] = {}

    def _child_height(self, item: Item, width: int, md: RenderMarkdown) -> int:
        return item.height(width, md) if item.cached(width) else item.estimate(width)

    def height(self, width: int, md: RenderMarkdown) -> int:
        got = self._heights.get(width)
        if got is None:
            if len(self._heights) >= MAX_CACHED_WIDTHS:
                self._heights.pop(next(iter(self._heights)))
            seps = max(0, len(self.items) - 1)
            got = self._heights[width] = seps + sum(self._child_height(i, width, md) for i in self.items)
        return got

    def cached(self, width: int) -> bool:
        return width in self._heights

    def estimate(self, width: int) -> int:
        return sum(i.estimate(width) for i in self.items) + max(0, len(self.items) - 1)

    def slice(self, width: int, md: RenderMarkdown, start: int, count: int) -> list[Line]:
        total = self.height(width, md)
        out: list[Line] = []
        pos = 0
        for index, item in enumerate(self.items):
            guess = self._child_height(item, width, md)
            block = guess + (1 if index else 0)
            if pos + block <= start:
                pos += block
                continue
            was_cached = item.cached(width)
            lines = item.lines(width, md)
            if not was_cached:  # its estimate becomes its real height
                total += len(lines) - guess
                self._heights[width] = total
            seq: list[Line] = ([()] + lines) if index else lines
            skip = max(0, start - pos)
            out.extend(seq[skip : skip + count - len(out)])
            pos += len(seq)
            if len(out) >= count:
                break
        return out

    def lines(self, width: int, md: RenderMarkdown) -> list[Line]:
        return self.slice(width, md, 0, 1 << 62)

    def _render(self, width: int, md: RenderMarkdown) -> list[Line]:
        return self.lines(width, md)
