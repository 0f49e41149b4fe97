"""The todo tool and its list (tools/todo.py, tools/todo_list.py): the whole list each call,
nonsense refused with a message the model can act on, the list handed to whoever keeps it."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from minicode.provider.types import ToolCall
from minicode.tools.base import ToolContext, ToolResult
from minicode.tools.registry import PreparedCall, default_registry
from minicode.tools.todo_list import MAX_ITEMS, MAX_TEXT, TodoItem, TodoList, from_json, parse_items


def _call(items: object) -> ToolCall:
    return ToolCall(id="t1", name="todo", arguments=json.dumps({"items": items}))


def _run(tmp_path: Path, items: object) -> tuple[ToolResult, list[TodoList]]:
    kept: list[TodoList] = []

    async def keep(todo: TodoList) -> None:
        kept.append(todo)

    registry = default_registry()
    prepared = registry.prepare(_call(items))
    if isinstance(prepared, ToolResult):
        return prepared, kept
    assert isinstance(prepared, PreparedCall) and not prepared.side_effects  # no approval asked
    ctx = ToolContext(workspace=tmp_path, env={}, on_todo=keep)
    return asyncio.run(registry.execute(prepared, ctx)), kept


def test_a_list_is_saved_whole_and_handed_to_the_keeper(tmp_path: Path) -> None:
    result, kept = _run(tmp_path, [{"text": "read the parser", "status": "done"},
                                   {"text": "fix the bug", "status": "in_progress"},
                                   {"text": "run the tests", "status": "pending"}])
    assert not result.is_error
    assert result.text == "task list saved (1/3 done; in progress: fix the bug)" and result.summary == "1/3 done"
    assert kept == [TodoList((TodoItem("read the parser", "done"), TodoItem("fix the bug", "in_progress"),
                              TodoItem("run the tests", "pending")))]
    assert kept[0].lines() == ["✓ read the parser", "▶ fix the bug", "☐ run the tests"]
    assert kept[0].as_text() == "[done] read the parser\n[in_progress] fix the bug\n[pending] run the tests"


def test_an_empty_list_clears_it(tmp_path: Path) -> None:
    result, kept = _run(tmp_path, [])
    assert not result.is_error and kept == [TodoList()] and result.summary == "empty"


@pytest.mark.parametrize(("items", "says"), [
    ([{"text": "a", "status": "in_progress"}, {"text": "b", "status": "in_progress"}],
     "items 1, 2 are all in_progress: work on one step at a time"),
    ([{"text": "  ", "status": "pending"}], "item 1 has no text"),
    ([{"text": "a", "status": "maybe"}], "item 1 has status 'maybe': use one of pending, in_progress, done, blocked"),
    ([{"text": "x" * (MAX_TEXT + 1), "status": "pending"}], f"keep a step under {MAX_TEXT}"),
    ([{"text": f"step {n}", "status": "pending"} for n in range(MAX_ITEMS + 1)], f"keep at most {MAX_ITEMS}"),
    ([{"text": "Run tests", "status": "pending"}, {"text": "run tests", "status": "done"}], "item 2 repeats item 1"),
])
def test_nonsense_is_refused_and_nothing_is_kept(tmp_path: Path, items: object, says: str) -> None:
    result, kept = _run(tmp_path, items)
    assert result.is_error and says in result.text and result.text.startswith("task list not changed: ")
    assert kept == []


def test_items_that_are_not_a_list_are_an_invalid_call(tmp_path: Path) -> None:
    result, kept = _run(tmp_path, "[{\"text\": \"a\"}]")
    assert result.is_error and "'items' must be an array, got a string" in result.text and kept == []
    result, kept = _run(tmp_path, [7])
    assert result.is_error and "'items[0]' must be an object, got a number" in result.text and kept == []


def test_peers_spellings_are_taken_as_meant() -> None:
    """What a model trained on TodoWrite or update_plan sends: content/step, completed, no status."""
    parsed = parse_items([{"content": "a", "status": "completed"}, {"step": "b", "status": "in progress"},
                          {"text": "c", "status": None}])
    assert parsed == TodoList((TodoItem("a", "done"), TodoItem("b", "in_progress"), TodoItem("c", "pending")))


def test_changes_of_a_long_list_show_only_what_changed() -> None:
    before = TodoList(tuple(TodoItem(f"step {n}", "pending") for n in range(12)))
    after = TodoList((TodoItem("step 0", "done"), TodoItem("step 1", "in_progress"), *before.items[2:]))
    assert after.changes(before) == ["✓ step 0", "▶ step 1", "… 10 unchanged (1/12 done)"]
    assert TodoList(before.items[:3]).changes(before) == ["☐ step 0", "☐ step 1", "☐ step 2"]  # short: whole


def test_a_stored_list_round_trips_and_a_damaged_one_is_refused() -> None:
    todo = TodoList((TodoItem("a", "blocked"),))
    assert from_json(todo.to_json()) == todo
    with pytest.raises(ValueError, match="malformed task list"):
        from_json([{"text": "a", "status": "nope"}])
