"""Stamps come from the content the tools saw: read stamps its own open file; a file that
changes while it is read cannot be edited without reading it again."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any

import pytest

from minicode.errors import ToolError
from minicode.tools import read as read_module
from minicode.tools.base import ToolContext
from minicode.tools.edit import EditTool
from minicode.tools.read import ReadTool
from minicode.tools.fsroot import write_target
from minicode.tools.stamps import check_fresh, stamp_open_file, write_and_stamp


def test_stamp_of_an_unchanged_open_file_has_its_hash(ws: Path) -> None:
    path = ws / "a.txt"
    path.write_bytes(b"one\ntwo\n")
    with open(path, "rb") as f:
        before = os.fstat(f.fileno())
        f.read(3)
        stamp = stamp_open_file(f, before)
    assert (stamp.size, stamp.sha256) == (8, hashlib.sha256(b"one\ntwo\n").hexdigest())


def test_a_file_changed_while_open_gets_a_stamp_that_cannot_match(ws: Path, ctx: ToolContext) -> None:
    path = ws / "a.txt"
    path.write_bytes(b"one\n")
    with open(path, "rb") as f:
        before = os.fstat(f.fileno())
        with open(path, "ab") as other:
            other.write(b"two\n")
        stamp = stamp_open_file(f, before)
    assert (stamp.size, stamp.sha256) == (4, "")
    ctx.stamps[path] = stamp
    st = os.stat(path)
    with pytest.raises(ToolError, match="changed on disk"):
        check_fresh(ctx, path, path.read_bytes(), st.st_size, st.st_mtime_ns)


async def test_edit_refuses_content_that_changed_after_read_showed_its_page(
    ws: Path, ctx: ToolContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = ws / "a.txt"
    path.write_text("alpha\n")
    real = read_module.stamp_open_file

    def change_then_stamp(f: Any, before: os.stat_result) -> Any:
        path.write_text("alpha\nINJECTED beta\n")  # lands after the page was read
        return real(f, before)

    monkeypatch.setattr(read_module, "stamp_open_file", change_then_stamp)
    page = await ReadTool().run({"path": "a.txt"}, ctx)
    assert "INJECTED" not in page.text
    with pytest.raises(ToolError, match="changed on disk"):
        await EditTool().run({"path": "a.txt", "old_text": "beta", "new_text": "gamma"}, ctx)
    assert path.read_text() == "alpha\nINJECTED beta\n"


def test_write_and_stamp_stamps_what_it_wrote(ws: Path) -> None:
    with write_target(ws, "new.txt") as target:
        existed, stamp = write_and_stamp(target, b"data\n")
    assert not existed and stamp.sha256 == hashlib.sha256(b"data\n").hexdigest() and stamp.size == 5
    with write_target(ws, "new.txt") as target:
        existed, again = write_and_stamp(target, b"x", sha256="given")
    assert existed and again.sha256 == "given"  # a digest the caller already has is reused
    assert (ws / "new.txt").read_bytes() == b"x"


async def test_edit_after_edit_needs_no_read_and_keeps_the_stamp_current(ws: Path, ctx: ToolContext) -> None:
    path = ws / "a.txt"
    path.write_text("one two\n")
    await ReadTool().run({"path": "a.txt"}, ctx)
    await EditTool().run({"path": "a.txt", "old_text": "one", "new_text": "1"}, ctx)
    await EditTool().run({"path": "a.txt", "old_text": "two", "new_text": "2"}, ctx)
    assert path.read_text() == "1 2\n"
    assert ctx.stamps[path].sha256 == hashlib.sha256(b"1 2\n").hexdigest()
