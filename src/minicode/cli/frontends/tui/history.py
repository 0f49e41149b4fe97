"""The earlier conversation of a resumed session, as one transcript entry.

``HistoryItem`` holds one child entry per user message, assistant answer (Markdown) and tool
call (a compact tool line with its result's status). It never renders what is not on screen:
children never shown count by a cheap estimate, and a child's real height replaces its
estimate when it is first rendered; the heights are kept per width in a ``Heights`` tree, so a
frame finds its first child without a walk and costs the visible children only. Pure: no prompt_toolkit, no rich.
"""

from __future__ import annotations

import re
from typing import Mapping, Protocol, Sequence

from minicode.agent.deps import ToolOutcome
from minicode.agent.events import ToolFinished, failure_excerpt, output_tail
from minicode.agent.stopped import STOPPED_SHOWN, is_stopped_note
from minicode.cli.frontends.tui.heights import Heights
from minicode.cli.frontends.tui.answer import AnswerItem
from minicode.cli.frontends.shared.replay_text import USER_MAX_LINES, call_target, collapse_user
from minicode.cli.frontends.tui.items import MAX_CACHED_WIDTHS, Item, Line, RenderMarkdown, TextItem
from minicode.cli.frontends.tui.tool import ToolItem
from minicode.provider.types import Message

__all__ = ["USER_MAX_LINES", "HistoryItem", "collapse_user", "message_items"]

_FAILED_END = re.compile(r"\[(exit code [1-9]\d*|exit code -\d+|killed by [^\]]+|timed out[^\]]*)\]\s*$")
"""The closing line bash puts under a command that failed, was killed or timed out."""


def _result_of(call_id: str, name: str, text: str | None, outcome: ToolOutcome | None) -> ToolFinished:
    content = (text or "").lstrip()
    denied = content.startswith("denied by the user")
    if outcome is not None and outcome.status is not None:  # recorded in full: shown as it ended
        return _recorded(call_id, name, content, outcome)
    if outcome is not None:  # only whether it failed was recorded: no guessing from the text
        return ToolFinished(call_id, name, outcome.is_error, "", outcome.exit_code, 0.0,
                            denied=denied and outcome.is_error)
    # an older session file records no outcome: judge by the result text
    # a failed command's result is its output, so the verdict is the closing [exit code N]
    failed = (denied or content.lower().startswith(("error", "interrupted"))
              or _FAILED_END.search(content) is not None)
    return ToolFinished(call_id, name, failed, "", None, 0.0, denied=denied)


def _recorded(call_id: str, name: str, content: str, outcome: ToolOutcome) -> ToolFinished:
    """The live view's ``ToolFinished`` rebuilt from a full record: status, duration, summary,
    and why it failed (a denial's reason, a failure's excerpt, a stopped command's output)."""
    status = outcome.status
    summary, tail = outcome.summary or ("" if status == "done" else str(status)), ""
    if status == "denied":
        summary = content.partition(":")[2].strip() if content.startswith("denied by the user:") else "denied"
    elif status == "interrupted":
        tail = output_tail(content.partition("output so far:\n")[2])
    elif status == "failed" or outcome.exit_code:
        tail = failure_excerpt(content, outcome.exit_code)
    return ToolFinished(call_id, name, outcome.is_error, summary, outcome.exit_code, outcome.duration_seconds or 0.0,
                        denied=status == "denied", output_tail=tail, interrupted=status == "interrupted")


def message_items(m: Message, results: Mapping[str, str | None], outcomes: Mapping[str, ToolOutcome]) -> list[Item]:
    """The entries of one message: a user line, or an answer and its tool calls (``results``
    and ``outcomes`` by tool_call_id say how each ended; a tool result itself shows nothing)."""
    out: list[Item] = []
    if m.role == "user" and m.content:
        out.append(TextItem(collapse_user(m.content), "class:user", "› "))
    elif is_stopped_note(m):  # minicode's own note, not the model's words
        out.append(TextItem(STOPPED_SHOWN, "class:status.bad", "■ "))
    elif m.role == "assistant":
        if m.content and m.content.strip():
            out.append(AnswerItem(m.content, finished=True))
        for call in m.tool_calls:
            outcome = outcomes.get(call.id)
            tool = ToolItem(call.id, call.name, call_target(call.arguments), "",
                            outcome.diff if outcome is not None else "")
            tool.replayed = outcome is None or outcome.status is None  # else shown as it was live
            tool.from_text = call.from_text
            if outcome is not None and outcome.nested:  # an agent call: its sub-agent's calls
                tool.replay_nested(outcome.nested)
            if call.id in results:
                tool.finish(_result_of(call.id, call.name, results[call.id], outcome))
            out.append(tool)
    return out


class Children(Protocol):
    """Entries made on demand (``lazy_history.LazyEntries``): a position makes its entry."""

    def __len__(self) -> int: ...

    def __getitem__(self, position: int) -> Item: ...

    def sizes(self, width: int, md: RenderMarkdown) -> list[int]:
        """Each entry's height at ``width`` plus one separator line, made or not."""

    def estimate(self, width: int) -> int:
        """All entries' estimated lines with the separators between them."""


class HistoryItem(Item):
    """Earlier entries, rendered lazily (see the module docstring)."""

    def __init__(self, items: list[Item] | Children) -> None:
        super().__init__()
        self.items = items
        self._child_sizes: dict[int, Heights] = {}
        """Per width: each child's height (an estimate until rendered) plus its separator."""

    def _sizes(self, width: int, md: RenderMarkdown) -> Heights:
        got = self._child_sizes.get(width)
        if got is None:
            if len(self._child_sizes) >= MAX_CACHED_WIDTHS:
                self._child_sizes.pop(next(iter(self._child_sizes)))
            got = self._child_sizes[width] = Heights()
            got.extend(self._first_sizes(width, md))
        return got

    def _first_sizes(self, width: int, md: RenderMarkdown) -> list[int]:
        if not isinstance(self.items, list):
            return self.items.sizes(width, md)
        return [(i.height(width, md) if i.cached(width) else i.estimate(width)) + 1 for i in self.items]

    def height(self, width: int, md: RenderMarkdown) -> int:
        return max(0, self._sizes(width, md).total - 1)

    def cached(self, width: int) -> bool:
        return width in self._child_sizes

    def estimate(self, width: int) -> int:
        if not isinstance(self.items, list):
            return self.items.estimate(width)
        return sum(i.estimate(width) for i in self.items) + max(0, len(self.items) - 1)

    def slice(self, width: int, md: RenderMarkdown, start: int, count: int) -> list[Line]:
        sizes = self._sizes(width, md)
        index, pos = sizes.find(max(0, start))
        last = len(self.items) - 1
        out: list[Line] = []
        while index <= last and len(out) < count:
            child = self.items[index]
            skip = max(0, start - pos)
            lines = child.slice(width, md, skip, count - len(out))
            height = child.height(width, md)  # known now for what was shown (an answer: its blocks)
            if height + 1 != sizes.get(index):  # the estimate gives way
                sizes.set(index, height + 1)
                self._resized()
            out.extend(lines)
            if index < last and len(out) < count and skip <= height:
                out.append(())  # the separator under this child
            pos += height + 1
            index += 1
        return out

    def lines(self, width: int, md: RenderMarkdown) -> list[Line]:
        return self.slice(width, md, 0, 1 << 62)

    def _render(self, width: int, md: RenderMarkdown) -> list[Line]:
        return self.lines(width, md)
