"""The ``edit`` tool: replace an exact span of a file the session has read.

Matching works on bytes, so every byte outside the replaced span is written back exactly
as it was (invalid UTF-8 included). A CRLF file keeps CRLF even when the model sends LF.
The file must be fresh (see ``stamps``); the result is validated by ``ctx.validate_write``
and replaces the file atomically (see ``atomic``). ``describe`` previews it as a diff of the file.
"""

from __future__ import annotations

import asyncio
import os
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Mapping

from minicode.errors import ToolError
from minicode.tools.base import ToolContext, ToolPreview, ToolResult
from minicode.tools.edit_match import adapt_line_endings, explain_miss
from minicode.tools.paths import display_path, resolve_in_workspace
from minicode.tools.preview_body import diff_body, unified_body
from minicode.tools.preview_file import load_old_file
from minicode.tools.stamps import check_fresh, sha256_of, write_and_stamp
from minicode.tools.truncate import EDIT_MAX_FILE_BYTES

__all__ = ["EditTool", "apply_edit"]

_MAX_LISTED_OCCURRENCES = 10


@dataclass(frozen=True, slots=True)
class EditOutcome:
    data: bytes
    count: int
    first_line: int
    sha256: str = ""  # of ``data``, once computed (for the stamp after writing)


def _encode(text: str) -> bytes:
    return text.encode("utf-8", errors="surrogateescape")


def apply_edit(data: bytes, old_text: str, new_text: str, replace_all: bool) -> EditOutcome:
    """Pure: the new file bytes, or ``ToolError`` explaining why the edit cannot apply."""
    old, new = adapt_line_endings(_encode(old_text), _encode(new_text), data)
    count = data.count(old)
    if count == 0:
        raise ToolError(explain_miss(data.decode("utf-8", errors="replace"), old_text))
    first = data.find(old)
    if count > 1 and not replace_all:
        lines: list[str] = []
        pos = first
        while pos != -1 and len(lines) < _MAX_LISTED_OCCURRENCES:
            lines.append(str(data.count(b"\n", 0, pos) + 1))
            pos = data.find(old, pos + len(old))
        raise ToolError(
            f"old_text occurs {count} times (starting at lines {', '.join(lines)}); include more "
            "surrounding lines to make it unique, or set replace_all=true to change every occurrence"
        )
    result = data.replace(old, new) if replace_all else data.replace(old, new, 1)
    return EditOutcome(data=result, count=count if replace_all else 1, first_line=data.count(b"\n", 0, first) + 1)


def _load(path: Path, shown: str) -> tuple[bytes, os.stat_result]:
    try:
        with open(path, "rb") as f:
            st = os.fstat(f.fileno())
            if st.st_size > EDIT_MAX_FILE_BYTES:
                raise ToolError(
                    f"{shown} is {st.st_size} bytes, above the edit limit of {EDIT_MAX_FILE_BYTES}; "
                    "change it with bash (e.g. sed) instead"
                )
            return f.read(), st
    except OSError as e:
        raise ToolError(f"cannot read {shown}: {e.strerror or e}") from e


def _load_and_apply(
    ctx: ToolContext, path: Path, shown: str, old_text: str, new_text: str, replace_all: bool
) -> EditOutcome:
    """Blocking: the checked edit of the current file, with the new content's sha256."""
    data, st = _load(path, shown)
    check_fresh(ctx, path, data, st.st_size, st.st_mtime_ns)
    outcome = apply_edit(data, old_text, new_text, replace_all)
    return replace(outcome, sha256=sha256_of(outcome.data))


def _file_diff(path: Path, old_text: str, new_text: str, replace_all: bool) -> str | None:
    """Blocking: the edit as a unified diff of the file (real context and line numbers), or
    None when the file cannot be compared (missing, large, binary, unreadable, no match)."""
    old = load_old_file(path)
    if old is None or old.data is None:
        return None
    try:
        outcome = apply_edit(old.data, old_text, new_text, replace_all)
    except ToolError:
        return None
    before = old.data.decode("utf-8", errors="replace")
    return unified_body(before, outcome.data.decode("utf-8", errors="replace")) or None


class EditTool:
    name = "edit"
    description = (
        "Replace exact text in a file you have read in this session. old_text must match the "
        "file exactly (whitespace included, without read's line numbers) and occur once, unless "
        "replace_all is true. Include enough surrounding lines to make it unique."
    )
    parameters: Mapping[str, Any] = {
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "File path, relative to the workspace"},
            "old_text": {"type": "string", "minLength": 1, "description": "Exact text to replace"},
            "new_text": {"type": "string", "description": "Replacement text"},
            "replace_all": {"type": "boolean", "description": "Replace every occurrence (default false)"},
        },
        "required": ["path", "old_text", "new_text"],
        "additionalProperties": False,
    }
    side_effects = True

    def preview(self, args: Mapping[str, Any]) -> ToolPreview:
        old = str(args.get("old_text", ""))
        new = str(args.get("new_text", ""))
        every = "every occurrence of " if args.get("replace_all") else ""
        detail = f"replace {every}{_lines(old.count(chr(10)) + 1)} with {_lines(new.count(chr(10)) + 1)}"
        body = diff_body(old, new, bool(args.get("replace_all")))
        return ToolPreview(target=str(args.get("path", "")), detail=detail, body=body)

    async def describe(self, args: Mapping[str, Any], ctx: ToolContext) -> ToolPreview:
        """``preview`` with the body as a diff of the real file when it can be compared."""
        base = self.preview(args)
        path = resolve_in_workspace(ctx.workspace, args["path"], must_exist=True)
        replace_all = bool(args.get("replace_all", False))
        body = await asyncio.to_thread(_file_diff, path, args["old_text"], args["new_text"], replace_all)
        return base if body is None else ToolPreview(base.target, base.detail, body)

    async def precheck(self, args: Mapping[str, Any], ctx: ToolContext) -> None:
        """Everything ``run`` checks before writing (path, read and unchanged, old_text found
        once, memory limits), so a call bound to fail is not put to the user for approval."""
        await self._planned(args, ctx)

    async def run(self, args: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
        path, shown, outcome = await self._planned(args, ctx)
        _, ctx.stamps[path] = await asyncio.to_thread(write_and_stamp, path, outcome.data, outcome.sha256)
        noun = "replacement" if outcome.count == 1 else "replacements"
        return ToolResult(
            text=f"Edited {shown}: {outcome.count} {noun} (first at line {outcome.first_line})",
            summary=f"{outcome.count} {noun}",
        )

    async def _planned(self, args: Mapping[str, Any], ctx: ToolContext) -> tuple[Path, str, EditOutcome]:
        """The checked edit: (path, its display name, the new content). Raises ToolError."""
        old_text: str = args["old_text"]
        new_text: str = args["new_text"]
        if not old_text:
            raise ToolError("old_text is empty; copy the exact text to replace from the file")
        if old_text == new_text:
            raise ToolError("old_text and new_text are identical; nothing would change")
        path = resolve_in_workspace(ctx.workspace, args["path"], must_exist=True)
        shown = display_path(ctx.workspace, path)
        if not path.is_file():
            raise ToolError(f"{shown} is not a regular file; edit changes files")
        replace_all = bool(args.get("replace_all", False))
        # Load, staleness hash, match and the new digest: one worker-thread trip, none of
        # this hashing/searching of up to 16 MiB on the event loop.
        outcome = await asyncio.to_thread(_load_and_apply, ctx, path, shown, old_text, new_text, replace_all)
        refusal = ctx.validate_write(path, outcome.data)
        if refusal is not None:
            raise ToolError(f"edit of {shown} refused: {refusal}; the old file is unchanged")
        return path, shown, outcome


def _lines(count: int) -> str:
    return "1 line" if count == 1 else f"{count} lines"
