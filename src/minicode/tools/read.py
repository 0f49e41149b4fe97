"""The ``read`` tool: one page of a text file, streamed from disk, with line numbers.

A page is at most ``READ_MAX_LINES`` lines or ``READ_MAX_BYTES`` bytes, read line by line
with a bounded ``readline`` so neither a 1 GB file nor a single huge line is ever loaded
whole. The file is stamped for ``edit``'s stale-write check (see ``stamps``) from the same
open file the page came from.
"""

from __future__ import annotations

import asyncio
import io
from pathlib import Path
from typing import Any, BinaryIO, Mapping

from minicode.errors import ToolError
from dataclasses import dataclass
from minicode.tools.base import EditorFiles, FileStamp, ToolContext, ToolPreview, ToolResult
from minicode.tools.fsroot import Place, open_file
from minicode.tools.specs import READ
from minicode.tools.stamps import stamp_open_file
from minicode.tools.truncate import BINARY_SNIFF_BYTES, READ_MAX_BYTES, READ_MAX_LINES

__all__ = ["EMPTY_FILE", "ReadTool"]

EMPTY_FILE = "[empty file]"
"""What read shows of a file with nothing in it."""
ASSIST_MIN_LINES = 200
"""The fewest lines a read shows with the small-model assists on, whatever limit it asks for."""

_SKIP_CHUNK = 1024 * 1024


@dataclass(frozen=True, slots=True)
class _Page:
    lines: tuple[bytes, ...]
    first: int  # 1-based number of the first line in ``lines``
    more: bool  # bytes remain after the page
    cut_line: bool  # the last line was longer than the byte cap and is shown partially
    past_end: bool  # offset lies beyond the last line


def _skip_lines(f: BinaryIO, count: int) -> int:
    """Skip ``count`` lines in bounded chunks; return how many were actually skipped."""
    skipped = 0
    while skipped < count:
        chunk = f.readline(_SKIP_CHUNK)
        if not chunk:
            break
        if chunk.endswith(b"\n"):
            skipped += 1
    return skipped


def _read_page(workspace: Path, path: str, offset: int, limit: int) -> tuple[_Page, FileStamp, Place]:
    """The page, the stamp of the content it came from (the same open file) and where it is.
    The file is opened through ``fsroot``: confined, never by name."""
    with open_file(workspace, path) as opened:
        f = opened.file
        before = opened.stat
        if b"\x00" in f.read(BINARY_SNIFF_BYTES):
            raise ToolError(f"{opened.place.rel} is a binary file (it contains NUL bytes); read shows text files only")
        f.seek(0)
        page = _page_of(f, offset, limit)
        stamp = stamp_open_file(f, before)
    return page, stamp, opened.place


def _page_of(f: BinaryIO, offset: int, limit: int) -> _Page:
    """The page of ``f`` (at its start) from line ``offset``, at most ``limit`` lines."""
    skipped = _skip_lines(f, offset - 1)
    lines: list[bytes] = []
    used = 0
    cut = False
    while len(lines) < limit and used < READ_MAX_BYTES:
        line = f.readline(READ_MAX_BYTES - used)
        if not line:
            break
        if not line.endswith(b"\n") and _peek(f):
            if lines:  # does not fit this page; start the next page with it
                f.seek(-len(line), 1)
                break
            cut = True  # a single line longer than the whole page
            lines.append(line)
            break
        lines.append(line)
        used += len(line)
    more = _peek(f) if not cut else True
    past_end = skipped < offset - 1 or (not lines and offset > 1)
    return _Page(tuple(lines), offset, more, cut, past_end)


def _peek(f: BinaryIO) -> bool:
    """Whether bytes follow the current position (without consuming them)."""
    pos = f.tell()
    more = bool(f.read(1))
    f.seek(pos)
    return more


def _render(page: _Page, shown: str) -> tuple[str, bool]:
    """The page as numbered lines plus a closing hint; also whether bytes were replaced."""
    replaced = False
    out: list[str] = []
    for number, raw in enumerate(page.lines, start=page.first):
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            text = raw.decode("utf-8", errors="replace")
            replaced = True
        out.append(f"{number:>6}\t{text.rstrip(chr(10)).rstrip(chr(13))}")
    last = page.first + len(page.lines) - 1
    if page.cut_line:
        out.append(
            f"[line {last} is longer than {READ_MAX_BYTES} bytes and was cut; "
            f"continue with offset={last + 1}, or use grep/bash to inspect it]"
        )
    elif page.more:
        out.append(f"[showing lines {page.first}-{last}; more follows: continue with read path={shown} offset={last + 1}]")
    else:
        out.append(f"[end of file; lines {page.first}-{last}]" if page.lines else EMPTY_FILE)
    if replaced:
        out.append("[note: the file has bytes that are not valid UTF-8; they are shown as U+FFFD]")
    return "\n".join(out), replaced


async def _editor_page(editor: EditorFiles, path: Path, offset: int, limit: int, on_disk: _Page) -> _Page:
    """The page of the file as the editor holds it. The disk read before settled the path
    (confined, a text file): the editor is asked only for that file, and when it cannot say,
    the page on disk stands."""
    try:
        text = await editor.text(path)
    except OSError:
        return on_disk
    return _page_of(io.BytesIO(text.encode("utf-8", "replace")), offset, limit)


class ReadTool:
    name = READ.name
    description = READ.description
    parameters: Mapping[str, Any] = READ.parameters
    side_effects = READ.side_effects

    def preview(self, args: Mapping[str, Any]) -> ToolPreview:
        offset = args.get("offset")
        detail = f"from line {offset}" if offset else ""
        return ToolPreview(target=str(args.get("path", "")), detail=detail)

    async def run(self, args: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
        offset = int(args.get("offset") or 1)
        limit = min(int(args.get("limit") or READ_MAX_LINES), READ_MAX_LINES)
        if ctx.read_before_write:  # the small-model assists: a 1.5B model pages a 3-line file a line a request,
            # and asks for lines past the end of a short file (offset 4 of 2 lines), then gives up
            if offset <= ASSIST_MIN_LINES:
                offset, limit = 1, min(limit + offset - 1, READ_MAX_LINES)
            limit = max(limit, ASSIST_MIN_LINES)
        try:
            page, stamp, place = await asyncio.to_thread(_read_page, ctx.workspace, args["path"], offset, limit)
        except OSError as e:
            raise ToolError(f"cannot read {args['path']}: {e.strerror or e}") from e
        shown = place.rel
        if ctx.editor is not None:  # the editor's buffer, unsaved changes included
            page = await _editor_page(ctx.editor, place.path, offset, limit, page)
        if page.past_end:
            raise ToolError(f"offset={offset} is past the end of {shown}; read from offset=1")
        ctx.stamps[place.path] = stamp
        text, _ = _render(page, shown)
        count = len(page.lines)
        return ToolResult(text=text, summary=f"{count} line" if count == 1 else f"{count} lines")
