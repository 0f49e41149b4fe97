"""The task list the model keeps with the ``todo`` tool: its items, their checks, its texts. Pure.

The model sends the whole list on every call (it replaces the one before): no ids to get
wrong, nothing to patch, and what the model sent is exactly what is kept — the simplest
contract for a small model. ``parse_items`` refuses nonsense with a message naming the item
and what to do instead; ``TodoList`` renders itself for people (``lines``, ``changes``), for
the model (``as_text``, kept verbatim through compaction) and for the session file (``to_json``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, Sequence

__all__ = ["MAX_ITEMS", "MAX_TEXT", "STATUSES", "Status", "TodoItem", "TodoList", "from_json", "parse_items"]

Status = Literal["pending", "in_progress", "done", "blocked"]
STATUSES: tuple[Status, ...] = ("pending", "in_progress", "done", "blocked")
MAX_ITEMS = 20
"""A list longer than this is no longer a short list of steps."""
MAX_TEXT = 200
"""Characters of one item: a step, not a paragraph."""

_MARKS: dict[Status, str] = {"pending": "☐", "in_progress": "▶", "done": "✓", "blocked": "✗"}
# what peers' lists call them (Claude Code's TodoWrite, Codex's update_plan): a model trained on
# those says "completed" or "content"; taken as meant rather than refused
_ALIASES: dict[str, Status] = {"completed": "done", "complete": "done", "in progress": "in_progress",
                               "in-progress": "in_progress", "active": "in_progress", "todo": "pending"}
_TEXT_KEYS = ("text", "content", "step")


@dataclass(frozen=True, slots=True)
class TodoItem:
    text: str
    status: Status

    @property
    def line(self) -> str:
        """"▶ run the tests": the item as people see it."""
        return f"{_MARKS[self.status]} {self.text}"


@dataclass(frozen=True, slots=True)
class TodoList:
    items: tuple[TodoItem, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.items)

    def count(self, status: Status) -> int:
        return sum(1 for item in self.items if item.status == status)

    @property
    def current(self) -> TodoItem | None:
        """The item in progress, if any."""
        return next((item for item in self.items if item.status == "in_progress"), None)

    @property
    def summary(self) -> str:
        """"2/5 done" (the status line, a tool result's one-line outcome); "empty"."""
        return f"{self.count('done')}/{len(self.items)} done" if self.items else "empty"

    def lines(self) -> list[str]:
        return [item.line for item in self.items]

    def as_text(self) -> str:
        """The list for the model: one ``[status] text`` line per item (the compaction keeps it verbatim)."""
        return "\n".join(f"[{item.status}] {item.text}" for item in self.items) or "(empty)"

    def changes(self, before: "TodoList", limit: int = 8) -> list[str]:
        """What people are shown when the list changes: the whole list while it is short (or new),
        else only the items that are new or changed status, and "…" for the rest."""
        if len(self.items) <= limit or not before:
            return self.lines() or ["(task list cleared)"]
        old = {item.text: item.status for item in before.items}
        changed = [item.line for item in self.items if old.get(item.text) != item.status]
        kept = len(self.items) - len(changed)
        return [*changed[:limit], *([f"… {kept} unchanged ({self.summary})"] if kept else [])]

    def to_json(self) -> list[dict[str, str]]:
        return [{"text": item.text, "status": item.status} for item in self.items]


def parse_items(raw: Any) -> TodoList | str:
    """The list the model sent, or why it cannot be the task list (the model reads it and retries)."""
    if not isinstance(raw, (list, tuple)):
        return "items must be a list of {text, status} objects (the whole task list)"
    if len(raw) > MAX_ITEMS:
        return f"{len(raw)} items is too many: keep at most {MAX_ITEMS} short steps (merge small ones)"
    items: list[TodoItem] = []
    for number, entry in enumerate(raw, 1):
        item = _item(number, entry)
        if isinstance(item, str):
            return item
        items.append(item)
    seen: dict[str, int] = {}
    for number, item in enumerate(items, 1):
        if (first := seen.setdefault(item.text.casefold(), number)) != number:
            return f"item {number} repeats item {first} ({item.text!r}): each step once"
    busy = [number for number, item in enumerate(items, 1) if item.status == "in_progress"]
    if len(busy) > 1:
        shown = ", ".join(str(n) for n in busy)
        return f"items {shown} are all in_progress: work on one step at a time, mark the others pending"
    return TodoList(tuple(items))


def _item(number: int, entry: Any) -> TodoItem | str:
    if not isinstance(entry, dict):
        return f"item {number} must be an object {{text, status}}"
    text = next((entry[key] for key in _TEXT_KEYS if key in entry), None)
    if not isinstance(text, str) or not text.strip():
        return f"item {number} has no text: say the step in a few words"
    text = " ".join(text.split())  # one line: it is shown as one
    if len(text) > MAX_TEXT:
        return f"item {number} is {len(text)} characters long: keep a step under {MAX_TEXT}"
    status = entry.get("status") or "pending"  # not given, or null: not started
    status = _ALIASES.get(status.strip().lower(), status.strip().lower()) if isinstance(status, str) else status
    if status not in STATUSES:
        return f"item {number} has status {status!r}: use one of {', '.join(STATUSES)}"
    return TodoItem(text, status)


def from_json(raw: Sequence[Any]) -> TodoList:
    """A stored list (the session file's ``todo`` record); ValueError when it is not one."""
    parsed = parse_items(raw)
    if isinstance(parsed, str):
        raise ValueError(f"malformed task list: {parsed}")
    return parsed
