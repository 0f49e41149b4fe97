"""The ``edit`` tool: replace an exact span of a file the session has read.

Matching works on bytes, so every byte outside the replaced span is written back exactly
as it was (invalid UTF-8 included). A CRLF file keeps CRLF even when the model sends LF.
The file must be fresh (see ``stamps``); the result is validated by ``ctx.validate_write``
and replaces the file atomically inside the directory opened for the check (see ``fsroot``). ``describe`` previews it as a diff of the file.
"""

from __future__ import annotations

import asyncio
import json
import re
from itertools import islice
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from typing import Any, Iterator, Mapping

from minicode.errors import MinicodeError, ToolError
from minicode.tools.base import FileStamp, ToolContext, ToolPreview, ToolResult
from minicode.tools.edit_match import adapt_line_endings, explain_miss
from minicode.tools.fsroot import NotARegularFile, PathMissing, Place, WriteTarget, locate, write_target
from minicode.tools.preview_body import diff_body, unified_body
from minicode.tools.preview_file import load_old_file
from minicode.tools.specs import EDIT
from minicode.tools.stamps import check_fresh, sha256_of, write_and_stamp
from minicode.tools.write import syntax_note, tell_editor
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
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError as e:
        raise ToolError(
            f"the text contains an invalid character (a lone surrogate {text[e.start]!r} at "
            f"position {e.start}); send valid Unicode text"
        ) from e


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


def _checked_edit(ctx: ToolContext, target: WriteTarget, args: Mapping[str, Any], held: bytes | None) -> EditOutcome:
    """Blocking: the checked edit of the file at ``target`` (read, unchanged since, old_text
    found, memory limits), with the new content's sha256. ``held``: the text an editor holds
    for it (unsaved changes included: what the model read), edited instead of the disk's.
    Raises ToolError."""
    shown = target.place.rel
    try:
        loaded = target.read_existing(EDIT_MAX_FILE_BYTES)
    except NotARegularFile as e:
        raise NotARegularFile(f"{shown} is not a regular file; edit changes files") from e
    if loaded is None:
        raise PathMissing(f"{args['path']}: no such file or directory")
    data, st = loaded
    if st.st_size > EDIT_MAX_FILE_BYTES or len(data) > EDIT_MAX_FILE_BYTES:
        raise ToolError(
            f"{shown} is {max(st.st_size, len(data))} bytes, above the edit limit of {EDIT_MAX_FILE_BYTES}; "
            "change it with bash (e.g. sed) instead"
        )
    check_fresh(ctx, target.place.path, data, st.st_size, st.st_mtime_ns)
    if held is not None and len(held) > EDIT_MAX_FILE_BYTES:
        raise ToolError(f"{shown} as the editor holds it is {len(held)} bytes, above the edit limit of "
                        f"{EDIT_MAX_FILE_BYTES}; change it with bash (e.g. sed) instead")
    source = data if held is None else held
    outcome = apply_edit(source, args["old_text"], args["new_text"], bool(args.get("replace_all", False)))
    refusal = ctx.validate_write(target.place.path, outcome.data)
    if refusal is None and ctx.read_before_write:  # the small-model assists (tools.assisted_checks)
        from minicode.tools.assisted_checks import refusal as assisted_refusal

        refusal = assisted_refusal(shown, source, outcome.data, deleting=not args["new_text"], adds_only=ctx.adds_only)
    if refusal is not None:
        raise ToolError(f"edit of {shown} refused: {refusal}; the old file is unchanged")
    return replace(outcome, sha256=sha256_of(outcome.data))


def _edit(ctx: ToolContext, args: Mapping[str, Any], *, write: bool,
          held: bytes | None = None) -> tuple[Place, EditOutcome, FileStamp | None]:
    """Blocking, one worker trip: resolve, check, and (``write``) replace the file inside the
    directory that was opened for the check."""
    with _edit_target(ctx, args["path"]) as target:
        outcome = _checked_edit(ctx, target, args, held)
        if not write:
            return target.place, outcome, None
        _, stamp = write_and_stamp(target, outcome.data, outcome.sha256)
        return target.place, outcome, stamp


@contextmanager
def _edit_target(ctx: ToolContext, path: str) -> Iterator[WriteTarget]:
    with ExitStack() as stack:
        try:
            target = stack.enter_context(write_target(ctx.workspace, path, before_replace=ctx.before_replace))
        except NotARegularFile as e:
            raise NotARegularFile(f"{path} is not a regular file; edit changes files") from e
        yield target


def _file_diff(workspace: Path, path: str, old_text: str, new_text: str, replace_all: bool) -> str | None:
    """Blocking: the edit as a unified diff of the file (real context and line numbers), or
    None when the file cannot be compared (missing, large, binary, unreadable, no match)."""
    old = load_old_file(workspace, path)
    if old is None or old.data is None:
        return None
    try:
        outcome = apply_edit(old.data, old_text, new_text, replace_all)
    except ToolError:
        return None
    before = old.data.decode("utf-8", errors="replace")
    return unified_body(before, outcome.data.decode("utf-8", errors="replace")) or None


class EditTool:
    name = EDIT.name
    description = EDIT.description
    parameters: Mapping[str, Any] = EDIT.parameters
    side_effects = EDIT.side_effects

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
        await asyncio.to_thread(locate, ctx.workspace, args["path"], must_exist=True)
        replace_all = bool(args.get("replace_all", False))
        body = await asyncio.to_thread(_file_diff, ctx.workspace, args["path"], args["old_text"], args["new_text"], replace_all)
        return base if body is None else ToolPreview(base.target, base.detail, body)

    async def precheck(self, args: Mapping[str, Any], ctx: ToolContext) -> None:
        """Everything ``run`` checks before writing (path, read and unchanged, old_text found
        once, memory limits), so a call bound to fail is not put to the user for approval."""
        _check_texts(args)
        held = await _held_text(ctx, args["path"])
        await asyncio.to_thread(partial(_edit, ctx, args, write=False, held=held))

    async def run(self, args: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
        _check_texts(args)
        # Load, staleness hash, match, digest and the atomic replace: one worker-thread trip
        # through one opened directory, none of this hashing of up to 16 MiB on the event loop.
        held = await _held_text(ctx, args["path"])
        place, outcome, stamp = await asyncio.to_thread(partial(_edit, ctx, args, write=True, held=held))
        assert stamp is not None
        ctx.stamps[place.path] = stamp
        await tell_editor(ctx, place.path, outcome.data)
        noun = "replacement" if outcome.count == 1 else "replacements"
        text = f"Edited {place.rel}: {outcome.count} {noun} (first at line {outcome.first_line})"
        text += syntax_note(ctx, place.rel, outcome.data)
        renamed = _renaming(args["old_text"], args["new_text"]) if ctx.read_before_write else None
        if renamed is not None:
            text += await asyncio.to_thread(_left_elsewhere, ctx.workspace, *renamed, place.rel)
        return ToolResult(text=text, summary=f"{outcome.count} {noun}")


STILL_USED = " still appears in: "
"""The words of the rename note (``_left_elsewhere``) the loop recognises a rename not done by."""
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]{2,63}")
_WORDS = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)")
_SCAN_FILES = 200


def renamed_name(old: str, new: str) -> str | None:
    """The name an edit renames: ``new`` is ``old`` with one identifier (wherever it occurs in
    it) replaced by another — ``calc_total`` → ``compute_total``, or ``def calc_total(lines):``
    → ``def compute_total(lines):``. None for any other change."""
    pair = _renaming(old, new)
    return None if pair is None else pair[0]


def _renaming(old: str, new: str) -> tuple[str, str] | None:
    """(the old name, the new one) of an edit that renames (``renamed_name``), or None."""
    before, after = _WORDS.split(old), _WORDS.split(new)
    if len(before) != len(after) or before[0::2] != after[0::2]:
        return None  # the text between the names changed
    pairs = {(a, b) for a, b in zip(before[1::2], after[1::2]) if a != b}
    if len(pairs) != 1:
        return None
    ((name, replacement),) = pairs
    return (name, replacement) if _IDENTIFIER.fullmatch(name) and _IDENTIFIER.fullmatch(replacement) else None


def _left_elsewhere(workspace: Path, name: str, new: str, edited: str) -> str:
    """With the small-model assists on, after an edit that renames ``name`` to ``new``: the other
    files that still use it, and the edit that goes on — a small model renames the definition
    and stops ("everywhere" needs the callers too), or, told only where the old name is, renames
    it back. Blocking; bounded to ``_SCAN_FILES`` files of at most the read cap, the same
    confined walk as ``glob``. "" when nothing is left."""
    from minicode.tools.fswalk import project_files

    word = re.compile(rb"(?<![A-Za-z0-9_])" + re.escape(name.encode()) + rb"(?![A-Za-z0-9_])")
    found: list[str] = []
    first = ""
    try:
        for rel in islice(project_files(workspace), _SCAN_FILES):
            if len(found) >= 8:
                break
            if rel == edited:
                continue
            old = load_old_file(workspace, rel)
            if old is not None and old.data is not None and word.search(old.data):
                lines = [i + 1 for i, line in enumerate(old.data.splitlines()) if word.search(line)]
                found.append(f"{rel} (line{'s' if len(lines) > 1 else ''} {', '.join(map(str, lines[:5]))})")
                first = first or rel
    except (OSError, MinicodeError):
        return ""
    if not found:
        return ""
    call = {"name": "edit", "arguments": {"path": first, "old_text": name, "new_text": new, "replace_all": True}}
    return (f"\n{name}{STILL_USED}{'; '.join(found)}. The rename is not done until it is gone: rename it "
            f"there too — {json.dumps(call)}")


async def _held_text(ctx: ToolContext, path: str) -> bytes | None:
    """The text an editor that takes writes holds for the file (``ToolContext.editor``), or
    None: the disk's is edited (no such editor, no such file, or the editor cannot say). The
    path is settled by name here and opened by the edit itself, confined, as always."""
    if ctx.editor is None or not ctx.editor.writes:
        return None
    try:
        place = await asyncio.to_thread(locate, ctx.workspace, path, must_exist=True)
        if place.is_dir:
            return None
        return (await ctx.editor.text(place.path)).encode("utf-8")
    except (ToolError, OSError, UnicodeEncodeError):
        return None


def _check_texts(args: Mapping[str, Any]) -> None:
    if not args["old_text"]:
        raise ToolError("old_text is empty; copy the exact text to replace from the file")
    if args["old_text"] == args["new_text"]:
        raise ToolError("old_text and new_text are identical; nothing would change")


def _lines(count: int) -> str:
    return "1 line" if count == 1 else f"{count} lines"
