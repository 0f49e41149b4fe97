"""A call's path is settled before it is shown or asked about (finding T12): ``a/../b`` is
``b``, the approval describes the file that will change, nothing is created for ``..``
segments, and a path with control characters is refused as an invalid call."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from minicode.provider.types import ToolCall
from minicode.tools.base import ToolContext
from minicode.tools.path_args import path_problem, settled_path
from minicode.tools.registry import PreparedCall, default_registry


def _call(name: str, **args: object) -> ToolCall:
    return ToolCall("c1", name, json.dumps(args))


async def _described(ctx: ToolContext, name: str, **args: object) -> PreparedCall:
    registry = default_registry()
    prepared = registry.prepare(_call(name, **args))
    assert isinstance(prepared, PreparedCall), prepared
    return await registry.describe(prepared, ctx)


async def test_dotdot_write_over_an_existing_file_is_described_as_its_overwrite(ws: Path, ctx: ToolContext) -> None:
    (ws / "app.py").write_text("print('the real app')\n")
    described = await _described(ctx, "write", path="newdir/../app.py", content="# notes\n")
    assert described.args["path"] == "app.py"
    assert described.preview.target == "app.py"
    assert described.preview.detail == "overwrite · 1 → 1 line"
    assert "-print('the real app')" in described.preview.body and "+# notes" in described.preview.body
    assert not (ws / "newdir").exists()  # describing creates nothing


async def test_running_the_settled_write_creates_no_directory_for_the_dotdot(ws: Path, ctx: ToolContext) -> None:
    (ws / "app.py").write_text("old\n")
    registry = default_registry()
    described = await _described(ctx, "write", path="junk/more/../../app.py", content="new\n")
    result = await registry.execute(described, ctx)
    assert not result.is_error, result.text
    assert result.text.startswith("Overwrote app.py")
    assert sorted(p.name for p in ws.iterdir()) == ["app.py"]


async def test_edit_and_read_paths_are_settled_too(ws: Path, ctx: ToolContext) -> None:
    (ws / "src").mkdir()
    (ws / "src" / "m.py").write_text("x = 1\n")
    edit = await _described(ctx, "edit", path="./src/../src/./m.py", old_text="x = 1", new_text="x = 2")
    read = await _described(ctx, "read", path=str(ws / "docs" / ".." / "src" / "m.py"))
    assert edit.args["path"] == "src/m.py" and edit.preview.target == "src/m.py"
    assert read.args["path"] == "src/m.py"


async def test_a_path_that_leaves_the_workspace_is_left_for_the_tool_to_refuse(ws: Path, ctx: ToolContext) -> None:
    described = await _described(ctx, "write", path="a/../../outside.txt", content="x")
    assert described.args["path"] == "a/../../outside.txt"  # unchanged: the precheck refuses it
    problem = await default_registry().check(described, ctx)
    assert problem is not None and "leaves the workspace" in problem.text


@pytest.mark.parametrize("path", ["notes.txt\n\n\n/../app.py", "a\tb.txt", "x\x1b[2J.txt", "c\rd", "e\x85f"])
@pytest.mark.parametrize("tool", ["write", "read", "edit"])
def test_a_path_with_control_characters_is_an_invalid_call(tool: str, path: str) -> None:
    args: dict[str, object] = {"path": path}
    if tool == "write":
        args["content"] = "x"
    if tool == "edit":
        args.update(old_text="a", new_text="b")
    result = default_registry().prepare(_call(tool, **args))
    assert not isinstance(result, PreparedCall)
    assert result.is_error and "control character" in result.text and "refused" in result.text


def test_path_problem_names_the_character_and_passes_normal_paths() -> None:
    assert path_problem({"path": "src/app.py"}) is None
    assert path_problem({"content": "no path"}) is None
    problem = path_problem({"path": "notes.txt\n/../app.py"})
    assert problem is not None and "a newline at position 9" in problem


def test_settled_path_names_the_workspace_relative_file(ws: Path) -> None:
    (ws / "d").mkdir()
    assert settled_path(ws, "d/../x.txt") == "x.txt"
    assert settled_path(ws, str(ws / "d" / "y.txt")) == "d/y.txt"
    assert settled_path(ws, "d/..") == "d/.."  # the workspace itself: left to the tool
    assert settled_path(ws, "../escape.txt") == "../escape.txt"  # refused later, by the tool
