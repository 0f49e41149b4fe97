"""Files through an editor (``ToolContext.editor``, ``minicode --acp``): read shows the editor's
text, edit changes it when the editor takes writes, write and edit give it the new text; the
path checks stay the tools' own, and an editor that fails leaves the disk's behaviour."""

from __future__ import annotations

from pathlib import Path

import pytest

from minicode.errors import ToolError
from minicode.tools.base import ToolContext
from minicode.tools.edit import EditTool
from minicode.tools.read import ReadTool
from minicode.tools.write import WriteTool


class FakeEditor:
    def __init__(self, buffers: dict[Path, str], *, writes: bool = True, broken: bool = False) -> None:
        self.buffers = buffers
        self.writes = writes
        self.broken = broken
        self.asked: list[Path] = []
        self.written: list[tuple[Path, str]] = []

    async def text(self, path: Path) -> str:
        self.asked.append(path)
        if self.broken or path not in self.buffers:
            raise OSError("not open")
        return self.buffers[path]

    async def wrote(self, path: Path, text: str) -> None:
        if self.broken:
            raise OSError("gone")
        self.written.append((path, text))


async def test_read_shows_the_editors_unsaved_text_with_the_same_paging(ws: Path, ctx: ToolContext) -> None:
    (ws / "a.py").write_text("on disk\n")
    ctx.editor = FakeEditor({ws / "a.py": "one\ntwo\nthree\n"})
    result = await ReadTool().run({"path": "a.py", "offset": 2}, ctx)
    assert result.text.splitlines()[:2] == ["     2\ttwo", "     3\tthree"]


async def test_read_falls_back_to_the_disk_and_never_asks_about_a_path_it_refuses(ws: Path, ctx: ToolContext) -> None:
    (ws / "a.py").write_text("on disk\n")
    editor = FakeEditor({}, broken=True)
    ctx.editor = editor
    assert "on disk" in (await ReadTool().run({"path": "a.py"}, ctx)).text
    (ws.parent / "secret.txt").write_text("no\n")
    with pytest.raises(ToolError):
        await ReadTool().run({"path": "../secret.txt"}, ctx)
    assert editor.asked == [ws / "a.py"]


async def test_edit_changes_the_text_the_editor_holds_and_gives_it_back(ws: Path, ctx: ToolContext) -> None:
    (ws / "a.py").write_text("x = 1\n")
    editor = FakeEditor({ws / "a.py": "x = 1\ny = 2  # unsaved\n"})
    ctx.editor = editor
    await ReadTool().run({"path": "a.py"}, ctx)
    await EditTool().run({"path": "a.py", "old_text": "y = 2  # unsaved", "new_text": "y = 3"}, ctx)
    assert (ws / "a.py").read_text() == "x = 1\ny = 3\n"
    assert editor.written == [(ws / "a.py", "x = 1\ny = 3\n")]


async def test_an_editor_without_writes_leaves_edit_on_the_disks_text(ws: Path, ctx: ToolContext) -> None:
    (ws / "a.py").write_text("x = 1\n")
    editor = FakeEditor({ws / "a.py": "x = 1\ny = 2  # unsaved\n"}, writes=False)
    ctx.editor = editor
    await ReadTool().run({"path": "a.py"}, ctx)
    with pytest.raises(ToolError, match="old_text"):
        await EditTool().run({"path": "a.py", "old_text": "y = 2  # unsaved", "new_text": "y = 3"}, ctx)
    assert (ws / "a.py").read_text() == "x = 1\n" and editor.written == []


async def test_a_write_lands_on_disk_even_when_the_editor_fails_to_take_it(ws: Path, ctx: ToolContext) -> None:
    ctx.editor = FakeEditor({}, broken=True)
    await WriteTool().run({"path": "n.txt", "content": "hello\n"}, ctx)
    assert (ws / "n.txt").read_text() == "hello\n"
    ok = FakeEditor({})
    ctx.editor = ok
    await WriteTool().run({"path": "m.txt", "content": "there\n"}, ctx)
    assert ok.written == [(ws / "m.txt", "there\n")]
