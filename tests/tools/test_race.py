"""Confinement under concurrent change: while another thread swaps ``d`` (a workspace
directory) with a symlink to an outside directory, 240 calls of every file tool through the
registry read, list, create and change nothing outside, and none dies with an internal error."""

from __future__ import annotations

import json
from pathlib import Path

from minicode.provider.types import ToolCall
from minicode.tools.base import ToolContext, ToolResult
from minicode.tools.registry import default_registry
from tests.tools.race import OUTSIDE_MARK, Swapper, outside_fingerprint, prepare_race_tree

ROUNDS = 40  # x 6 tools = 240 tool calls


async def _call(name: str, ctx: ToolContext, **args: object) -> ToolResult:
    registry = default_registry()
    prepared = registry.prepare(ToolCall(id="c", name=name, arguments=json.dumps(args)))
    if isinstance(prepared, ToolResult):
        return prepared
    refused = await registry.check(prepared, ctx)
    if refused is not None:
        return refused
    await registry.describe(prepared, ctx)
    return await registry.execute(prepared, ctx)


async def test_no_tool_escapes_through_a_directory_swapped_for_an_outside_symlink(
    ws: Path, tmp_path: Path, ctx: ToolContext
) -> None:
    outside = tmp_path / "outside"
    prepare_race_tree(ws, outside)
    before = outside_fingerprint(outside)
    results: list[tuple[str, ToolResult]] = []
    with Swapper(ws) as swapper:
        for i in range(ROUNDS):
            results.append(("read", await _call("read", ctx, path="d/f.txt")))
            results.append(("ls", await _call("ls", ctx, path="d")))
            results.append(("glob", await _call("glob", ctx, pattern="**/*.txt", path="d")))
            results.append(("grep", await _call("grep", ctx, pattern="line|SECRET", path="d")))
            results.append(("write", await _call("write", ctx, path=f"d/new-{i}.txt", content="x\n")))
            results.append(("edit", await _call("edit", ctx, path="d/f.txt", old_text="line", new_text="line")))
    assert swapper.swaps > ROUNDS  # the race really ran during the calls
    for tool, result in results:
        assert OUTSIDE_MARK not in result.text, (tool, result.text)
        assert "outside-only" not in result.text, (tool, result.text)
        assert result.summary != "internal error", (tool, result.text)
    assert outside_fingerprint(outside) == before  # nothing created or changed outside
    succeeded = {tool for tool, r in results if not r.is_error}
    assert {"read", "ls", "write"} <= succeeded  # the inside directory stayed usable


async def test_edit_through_the_swap_never_changes_the_outside_file(ws: Path, tmp_path: Path, ctx: ToolContext) -> None:
    outside = tmp_path / "outside"
    prepare_race_tree(ws, outside)
    before = outside_fingerprint(outside)
    with Swapper(ws):
        for _ in range(60):
            await _call("read", ctx, path="d/f.txt")
            result = await _call("edit", ctx, path="d/f.txt", old_text="line", new_text="LINE")
            assert result.summary != "internal error", result.text
            await _call("edit", ctx, path="d/f.txt", old_text="LINE", new_text="line")
    assert outside_fingerprint(outside) == before
