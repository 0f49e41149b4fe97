"""Context-aware previews: write/edit described against the file on disk, via the registry."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Mapping

import pytest

from minicode.errors import ToolError
from minicode.provider.types import ToolCall
from minicode.tools import preview_file
from minicode.tools.base import ToolContext, ToolPreview, ToolResult
from minicode.tools.edit import EditTool
from minicode.tools.preview_body import unified_body
from minicode.tools.preview_file import load_old_file
from minicode.tools.registry import PreparedCall, ToolRegistry, default_registry
from minicode.tools.truncate import PREVIEW_MAX_FILE_BYTES
from minicode.tools.write import WriteTool

write, edit = WriteTool(), EditTool()
SEVEN = "".join(f"line {i}\n" for i in range(1, 8))


async def test_write_new_file_is_a_create_with_the_content_head(ws: Path, ctx: ToolContext) -> None:
    preview = await write.describe({"path": "sub/new.txt", "content": "a\nb\n"}, ctx)
    assert preview == ToolPreview("sub/new.txt", "create · 2 lines", "a\nb")


async def test_write_over_a_text_file_shows_line_counts_and_a_unified_diff(ws: Path, ctx: ToolContext) -> None:
    (ws / "f.txt").write_text(SEVEN)
    preview = await write.describe({"path": "f.txt", "content": "line 1\nnew\n"}, ctx)
    assert preview.detail == "overwrite · 7 → 2 lines"
    lines = preview.body.splitlines()
    assert lines[0] == "@@ -1,7 +1,2 @@"
    assert lines[1] == " line 1"
    assert [line for line in lines if line.startswith("-")] == [f"-line {i}" for i in range(2, 8)]
    assert [line for line in lines if line.startswith("+")] == ["+new"]
    assert (ws / "f.txt").read_text() == SEVEN  # describing never writes


async def test_write_diff_is_capped_with_the_count_left_out(ws: Path, ctx: ToolContext) -> None:
    (ws / "big.txt").write_text("".join(f"old {i}\n" for i in range(100)))
    preview = await write.describe({"path": "big.txt", "content": "".join(f"new {i}\n" for i in range(100))}, ctx)
    lines = preview.body.splitlines()
    assert len(lines) == 41 and lines[-1] == "… 161 more lines"  # 1 header + 200 changes - 40 shown
    assert preview.detail == "overwrite · 100 → 100 lines"


async def test_write_of_the_same_content_says_unchanged(ws: Path, ctx: ToolContext) -> None:
    (ws / "f.txt").write_text(SEVEN)
    preview = await write.describe({"path": "f.txt", "content": SEVEN}, ctx)
    assert preview == ToolPreview("f.txt", "overwrite · 7 → 7 lines (unchanged)", "")


async def test_write_over_a_binary_file_is_not_compared(ws: Path, ctx: ToolContext) -> None:
    (ws / "b.bin").write_bytes(b"\x00\x01\x02")
    preview = await write.describe({"path": "b.bin", "content": "x\n"}, ctx)
    assert preview == ToolPreview("b.bin", "overwrite · 1 line (old file binary; not compared)", "x")


async def test_write_over_a_too_large_file_is_not_compared(ws: Path, ctx: ToolContext) -> None:
    (ws / "huge.txt").write_bytes(b"y\n" * (PREVIEW_MAX_FILE_BYTES // 2 + 1))
    preview = await write.describe({"path": "huge.txt", "content": "x\n"}, ctx)
    assert preview.detail == "overwrite · 1 line (old file 1,048,578 bytes, too large to compare; not compared)"
    assert preview.body == "x"


async def test_write_over_an_unreadable_file_says_why(ws: Path, ctx: ToolContext, monkeypatch: pytest.MonkeyPatch) -> None:
    (ws / "secret.txt").write_text("hidden\n")

    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise ToolError("cannot open secret.txt: Permission denied") from PermissionError(13, "Permission denied")

    monkeypatch.setattr(preview_file, "open_file", refuse)
    preview = await write.describe({"path": "secret.txt", "content": "x\n"}, ctx)
    assert preview.detail == "overwrite · 1 line (old file unreadable: Permission denied; not compared)"


async def test_a_fifo_is_never_opened(ws: Path) -> None:
    os.mkfifo(ws / "pipe")
    old = load_old_file(ws, "pipe")  # would block forever if opened
    assert old is not None and old.data is None and old.note == "not a regular file"
    assert load_old_file(ws, "missing") is None


async def test_write_outside_the_workspace_raises(ctx: ToolContext) -> None:
    with pytest.raises(ToolError):
        await write.describe({"path": "../x", "content": "x"}, ctx)


async def test_edit_shows_real_context_and_line_numbers(ws: Path, ctx: ToolContext) -> None:
    (ws / "f.txt").write_text("".join(f"line {i}\n" for i in range(1, 21)))
    args = {"path": "f.txt", "old_text": "line 10\n", "new_text": "ten\nTEN\n"}
    preview = await edit.describe(args, ctx)  # no read needed: describing is not editing
    assert preview.detail == edit.preview(args).detail
    assert preview.body.splitlines() == [
        "@@ -7,7 +7,8 @@", " line 7", " line 8", " line 9", "-line 10", "+ten", "+TEN", " line 11", " line 12", " line 13",
    ]


async def test_edit_falls_back_to_the_argument_diff(ws: Path, ctx: ToolContext) -> None:
    (ws / "f.txt").write_text(SEVEN)
    (ws / "b.bin").write_bytes(b"\x00line 1\n")
    (ws / "huge.txt").write_bytes(b"line 1\n" * (PREVIEW_MAX_FILE_BYTES // 7 + 1))
    for path, old in (("f.txt", "not there"), ("b.bin", "line 1"), ("huge.txt", "line 1")):
        args = {"path": path, "old_text": old, "new_text": "z", "replace_all": True}
        assert await edit.describe(args, ctx) == edit.preview(args)
    with pytest.raises(ToolError):
        await edit.describe({"path": "missing.txt", "old_text": "a", "new_text": "b"}, ctx)


def test_unified_body_of_an_empty_old_file_and_long_lines() -> None:
    assert unified_body("", "a\n").splitlines() == ["@@ -0,0 +1 @@", "+a"]
    long = unified_body("x\n", "y" * 1000 + "\n").splitlines()[-1]
    assert long.startswith("+yyy") and long.endswith("chars]") and len(long) < 400


def _prepared(registry: ToolRegistry, name: str, args: Mapping[str, Any]) -> PreparedCall:
    prepared = registry.prepare(ToolCall("c1", name, json.dumps(args)))
    assert isinstance(prepared, PreparedCall)
    return prepared


async def test_registry_describe_redacts_and_falls_back(ws: Path) -> None:
    secret = "sk-describe-secret-42"
    ctx = ToolContext(workspace=ws, env={}, secrets=(secret,))
    (ws / ".env").write_text(f"KEY={secret}\n")
    registry = default_registry()
    described = await registry.describe(_prepared(registry, "write", {"path": ".env", "content": "KEY=\n"}), ctx)
    assert described.preview.body == "@@ -1 +1 @@\n-KEY=[redacted]\n+KEY="
    outside = _prepared(registry, "write", {"path": "../x", "content": "x"})
    assert (await registry.describe(outside, ctx)) == outside  # a ToolError keeps the plain preview
    bash = _prepared(registry, "bash", {"command": "ls"})
    assert (await registry.describe(bash, ctx)).preview.target == "."  # no describe: unchanged


class _BrokenDescribe:
    name = "broken"
    description = "x"
    parameters: Mapping[str, Any] = {"type": "object", "properties": {}, "additionalProperties": False}
    side_effects = True

    def preview(self, args: Mapping[str, Any]) -> ToolPreview:
        return ToolPreview("t", "plain")

    async def describe(self, args: Mapping[str, Any], ctx: ToolContext) -> ToolPreview:
        raise RuntimeError("bug")

    async def run(self, args: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
        return ToolResult("ok")


async def test_a_failing_describe_keeps_the_plain_preview(ctx: ToolContext) -> None:
    registry = ToolRegistry([_BrokenDescribe()])
    prepared = _prepared(registry, "broken", {})
    assert (await registry.describe(prepared, ctx)).preview == ToolPreview("t", "plain")
