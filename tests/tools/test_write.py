"""write: create/overwrite, parents, atomicity, mode, validation, guard."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from minicode.errors import ToolError
from minicode.tools.base import ToolContext
from minicode.tools.write import WriteTool

write = WriteTool()


def _leftover_temps(directory: Path) -> list[str]:
    return [p.name for p in directory.iterdir() if p.name.endswith(".tmp")]


async def test_creates_file_and_parents_and_stamps(ws: Path, ctx: ToolContext) -> None:
    result = await write.run({"path": "src/pkg/mod.py", "content": "a = 1\nb = 2\n"}, ctx)
    target = ws / "src" / "pkg" / "mod.py"
    assert target.read_text() == "a = 1\nb = 2\n"
    assert result.text == "Created src/pkg/mod.py (2 lines, 12 bytes)"
    assert target.resolve() in ctx.stamps
    assert _leftover_temps(target.parent) == []


async def test_overwrite_keeps_mode(ws: Path, ctx: ToolContext) -> None:
    script = ws / "run.sh"
    script.write_text("old\n")
    script.chmod(0o751)
    result = await write.run({"path": "run.sh", "content": "#!/bin/sh\necho hi"}, ctx)
    assert result.text.startswith("Overwrote run.sh (2 lines")
    assert script.read_text() == "#!/bin/sh\necho hi"
    assert stat.S_IMODE(script.stat().st_mode) == 0o751


async def test_write_to_existing_directory_fails_cleanly(ws: Path, ctx: ToolContext) -> None:
    (ws / "d").mkdir()
    (ws / "d" / "keep.txt").write_text("k")
    with pytest.raises(ToolError, match="existing directory"):
        await write.run({"path": "d", "content": "x"}, ctx)
    assert (ws / "d" / "keep.txt").read_text() == "k"
    assert _leftover_temps(ws) == []


async def test_parent_is_a_file(ws: Path, ctx: ToolContext) -> None:
    (ws / "f").write_text("x")
    with pytest.raises(ToolError, match="is a file"):
        await write.run({"path": "f/g.txt", "content": "x"}, ctx)


async def test_failure_before_rename_keeps_old_file_and_removes_temp(
    ws: Path, ctx: ToolContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    (ws / "a.txt").write_text("original\n")

    def broken_replace(src: object, dst: object, **kwargs: object) -> None:
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(os, "replace", broken_replace)
    with pytest.raises(ToolError, match="old file is unchanged") as info:
        await write.run({"path": "a.txt", "content": "new\n"}, ctx)
    assert isinstance(info.value.__cause__, OSError)
    assert (ws / "a.txt").read_text() == "original\n"
    assert _leftover_temps(ws) == []


async def test_validate_write_refusal_keeps_old_file(ws: Path, ctx: ToolContext) -> None:
    (ws / "MiniCode.md").write_text("# memory\n")
    seen: list[tuple[Path, bytes]] = []

    def validator(path: Path, data: bytes) -> str | None:
        seen.append((path, data))
        return "MiniCode.md is larger than 64 KiB" if len(data) > 10 else None

    ctx.validate_write = validator
    with pytest.raises(ToolError, match="refused: MiniCode.md is larger than 64 KiB"):
        await write.run({"path": "MiniCode.md", "content": "x" * 100}, ctx)
    assert (ws / "MiniCode.md").read_text() == "# memory\n"
    assert seen == [((ws / "MiniCode.md").resolve(), b"x" * 100)]
    await write.run({"path": "MiniCode.md", "content": "ok\n"}, ctx)
    assert (ws / "MiniCode.md").read_text() == "ok\n"


async def test_writing_through_dangling_symlink_pointing_outside_is_refused(
    ws: Path, tmp_path: Path, ctx: ToolContext
) -> None:
    target = tmp_path / "escaped.txt"
    (ws / "link.txt").symlink_to(target)
    with pytest.raises(ToolError, match="inside the workspace"):
        await write.run({"path": "link.txt", "content": "pwned"}, ctx)
    assert not target.exists()


async def test_writing_through_symlink_inside_updates_target_and_keeps_link(ws: Path, ctx: ToolContext) -> None:
    (ws / "real.txt").write_text("old")
    (ws / "alias.txt").symlink_to("real.txt")
    await write.run({"path": "alias.txt", "content": "new"}, ctx)
    assert (ws / "alias.txt").is_symlink()
    assert (ws / "real.txt").read_text() == "new"


async def test_write_outside_is_refused(ws: Path, ctx: ToolContext) -> None:
    with pytest.raises(ToolError, match="inside the workspace"):
        await write.run({"path": "../evil.txt", "content": "x"}, ctx)
    assert not (ws.parent / "evil.txt").exists()


def test_preview_counts_lines() -> None:
    assert write.preview({"path": "a", "content": "1\n2\n3"}).detail == "3 lines"
    assert write.preview({"path": "a", "content": "one\n"}).detail == "1 line"
