"""The ``write`` tool: create or overwrite a whole file, atomically.

Parent directories are created; the content is validated by ``ctx.validate_write``
before anything lands; the file is replaced atomically inside its opened directory (see
``fsroot``/``fswrite``: confined even while the tree changes) and stamped so a following
``edit`` needs no re-read. ``describe`` previews a call against the file on disk.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any, Mapping

from minicode.errors import ToolError
from minicode.tools.base import FileStamp, ToolContext, ToolPreview, ToolResult
from minicode.tools.fsroot import Place, locate, write_target
from minicode.tools.preview_body import content_body, unified_body
from minicode.tools.preview_file import load_old_file
from minicode.tools.specs import WRITE
from minicode.tools.stamps import write_and_stamp

__all__ = ["WriteTool", "count_lines", "syntax_note", "tell_editor"]


def count_lines(text: str) -> int:
    """Lines as an editor shows them: a final line without newline still counts."""
    if not text:
        return 0
    return text.count("\n") + (0 if text.endswith("\n") else 1)


def _write(ctx: ToolContext, path: str, data: bytes) -> tuple[Place, bool, FileStamp]:
    """Blocking: validate against where ``path`` leads now, then replace the file there."""
    with write_target(ctx.workspace, path, make_parents=True, on_temp=ctx.on_temp,
                      before_replace=ctx.before_replace) as target:
        _refuse_invalid(ctx, target.place, data)
        existed, stamp = write_and_stamp(target, data)
        return target.place, existed, stamp


def _refuse_invalid(ctx: ToolContext, place: Place, data: bytes) -> None:
    refusal = ctx.validate_write(place.path, data)
    if refusal is None and ctx.read_before_write:  # the small-model assists (tools.assisted_checks)
        from minicode.tools.assisted_checks import refusal as assisted_refusal

        old = load_old_file(ctx.workspace, place.rel) if place.exists else None
        refusal = assisted_refusal(place.rel, None if old is None else old.data, data, adds_only=ctx.adds_only)
    if refusal is not None:
        raise ToolError(f"write to {place.rel} refused: {refusal}; the old file is unchanged")


class WriteTool:
    name = WRITE.name
    description = WRITE.description
    parameters: Mapping[str, Any] = WRITE.parameters
    side_effects = WRITE.side_effects

    def preview(self, args: Mapping[str, Any]) -> ToolPreview:
        content = str(args.get("content", ""))
        return ToolPreview(
            target=str(args.get("path", "")), detail=_lines(count_lines(content)), body=content_body(content)
        )

    async def describe(self, args: Mapping[str, Any], ctx: ToolContext) -> ToolPreview:
        """The preview against the file as it is: "create · N lines" with the content's head,
        or "overwrite · 7 → 2 lines" with a unified diff (a file too large, binary or
        unreadable is not compared: the detail says why, the body shows the new content)."""
        content: str = args["content"]
        target, new_lines = str(args["path"]), _lines(count_lines(content))
        old = await asyncio.to_thread(load_old_file, ctx.workspace, args["path"])
        if old is None:
            return ToolPreview(target, f"create · {new_lines}", content_body(content))
        if old.data is None:
            return ToolPreview(target, f"overwrite · {new_lines} (old file {old.note}; not compared)", content_body(content))
        # The diff of a file up to 1 MiB is CPU work: off the event loop too.
        before = old.data.decode("utf-8", errors="replace")
        body = await asyncio.to_thread(unified_body, before, content)
        detail = f"overwrite · {count_lines(before)} → {new_lines}" + ("" if body else " (unchanged)")
        return ToolPreview(target, detail, body)

    async def precheck(self, args: Mapping[str, Any], ctx: ToolContext) -> None:
        """What ``run`` checks before writing (path inside the workspace, not a directory,
        memory limits), so a write bound to fail is not put to the user for approval."""
        await asyncio.to_thread(self._planned, args, ctx)

    async def run(self, args: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
        data = _encode_content(args["content"])
        content: str = args["content"]
        place, existed, stamp = await asyncio.to_thread(_write, ctx, args["path"], data)
        ctx.stamps[place.path] = stamp
        await tell_editor(ctx, place.path, data)
        shown = place.rel
        verb = "Overwrote" if existed else "Created"
        lines = count_lines(content)
        return ToolResult(
            text=f"{verb} {shown} ({_lines(lines)}, {len(data)} bytes)" + syntax_note(ctx, shown, data),
            summary=f"{'overwrote' if existed else 'created'}, {_lines(lines)}",
        )


    @staticmethod
    def _planned(args: Mapping[str, Any], ctx: ToolContext) -> None:
        """Blocking: the checks of a write, against the tree as it is. Raises ToolError."""
        place = locate(ctx.workspace, args["path"])
        if place.is_dir:
            raise ToolError(f"cannot write {place.rel}: it is an existing directory; choose a file path inside it")
        if ctx.read_before_write and place.exists and place.path not in ctx.stamps:
            raise ToolError(f"{place.rel} already exists and was not read in this session: read it first, then change "
                            "the part that needs changing with edit (write replaces the whole file)")  # fmt: skip
        _refuse_invalid(ctx, place, _encode_content(args["content"]))


async def tell_editor(ctx: ToolContext, path: Path, data: bytes) -> None:
    """An editor that takes writes gets the new text of a file written on disk, so its buffer
    is what the disk is (an editor that fails to take it shows the file changed on disk)."""
    if ctx.editor is None or not ctx.editor.writes:
        return
    try:
        await ctx.editor.wrote(path, data.decode("utf-8"))
    except (OSError, UnicodeDecodeError):
        pass


def syntax_note(ctx: ToolContext, rel: str, data: bytes) -> str:
    """With the small-model assists on: what is still wrong with a file a write or edit left
    unparsable (``tools.assisted_checks.still_broken``), or code of it that never runs
    (``unreachable``), else ""."""
    if not ctx.read_before_write:
        return ""
    from minicode.tools.assisted_checks import still_broken, unreachable

    return still_broken(rel, data) or unreachable(rel, data)


def _encode_content(content: str) -> bytes:
    """UTF-8 bytes of the content; a lone surrogate (not text at all) is refused."""
    try:
        return content.encode("utf-8")
    except UnicodeEncodeError as e:
        raise ToolError(
            f"content contains an invalid character (a lone surrogate {content[e.start]!r} at "
            f"position {e.start}); send valid Unicode text"
        ) from e


def _lines(count: int) -> str:
    return f"{count} line" if count == 1 else f"{count} lines"
