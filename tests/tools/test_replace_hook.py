"""``ToolContext.before_replace``: write and edit tell what they replace, read right before the
rename through the directory they opened; a refusal changes nothing."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from minicode.errors import ToolError
from minicode.tools.base import Replaced, ToolContext
from minicode.tools.edit import EditTool
from minicode.tools.read import ReadTool
from minicode.tools.truncate import SNAPSHOT_MAX_FILE_BYTES
from minicode.tools.write import WriteTool


def _ctx(ws: Path, seen: list[Replaced]) -> ToolContext:
    return ToolContext(workspace=ws, env={}, before_replace=seen.append)


async def test_write_tells_what_it_replaces(tmp_path: Path) -> None:
    ws = tmp_path.resolve()
    (ws / "a.txt").write_bytes(b"old\n")
    os.chmod(ws / "a.txt", 0o640)
    seen: list[Replaced] = []
    ctx = _ctx(ws, seen)
    await WriteTool().run({"path": "a.txt", "content": "new\n"}, ctx)
    await WriteTool().run({"path": "sub/b.txt", "content": "fresh"}, ctx)
    assert seen[0] == Replaced("a.txt", True, b"old\n", 0o640, 4, b"new\n")
    assert seen[1] == Replaced("sub/b.txt", False, None, None, 0, b"fresh")


async def test_edit_tells_what_it_replaces(tmp_path: Path) -> None:
    ws = tmp_path.resolve()
    (ws / "m.py").write_text("x = 1\ny = 2\n")
    seen: list[Replaced] = []
    ctx = _ctx(ws, seen)
    await ReadTool().run({"path": "m.py"}, ctx)
    result = await EditTool().run({"path": "m.py", "old_text": "x = 1", "new_text": "x = 3"}, ctx)
    assert not result.is_error, result.text
    (replaced,) = seen
    assert replaced.rel == "m.py" and replaced.data == b"x = 1\ny = 2\n" and replaced.new_data == b"x = 3\ny = 2\n"


async def test_a_file_larger_than_the_snapshot_limit_is_replaced_without_a_copy(tmp_path: Path) -> None:
    ws = tmp_path.resolve()
    with open(ws / "big.bin", "wb") as f:
        f.truncate(SNAPSHOT_MAX_FILE_BYTES + 1)
    seen: list[Replaced] = []
    await WriteTool().run({"path": "big.bin", "content": "small"}, _ctx(ws, seen))
    assert seen[0].existed and seen[0].data is None and seen[0].size == SNAPSHOT_MAX_FILE_BYTES + 1


async def test_a_refusal_leaves_the_file_and_no_temp(tmp_path: Path) -> None:
    ws = tmp_path.resolve()
    (ws / "a.txt").write_text("keep me")

    def refuse(replaced: Replaced) -> None:
        raise ToolError("cannot keep a copy for /undo; nothing was changed")

    ctx = ToolContext(workspace=ws, env={}, before_replace=refuse)
    with pytest.raises(ToolError, match="nothing was changed"):
        await WriteTool().run({"path": "a.txt", "content": "lost"}, ctx)
    assert (ws / "a.txt").read_text() == "keep me"
    assert sorted(p.name for p in ws.iterdir()) == ["a.txt"]


async def test_a_write_through_a_link_inside_keeps_a_copy_of_the_target(tmp_path: Path) -> None:
    ws = tmp_path.resolve()
    (ws / "real.txt").write_text("target content")
    (ws / "link.txt").symlink_to("real.txt")
    seen: list[Replaced] = []
    await WriteTool().run({"path": "link.txt", "content": "via link"}, _ctx(ws, seen))
    assert seen[0].rel == "real.txt" and seen[0].data == b"target content"
    assert (ws / "link.txt").is_symlink() and (ws / "real.txt").read_text() == "via link"
