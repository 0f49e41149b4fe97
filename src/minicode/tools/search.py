"""The read-only listing tools: ``ls`` and ``glob`` (``grep`` is in ``grep``).

Both open directories through ``fsroot`` and walk with ``fswalk`` (by descriptor, confined even
while the tree changes), skip ``.git/`` and ``.gitignore``d entries (``ignore``), cap their
output (``truncate``) and do their file-system work in a worker thread.
"""

from __future__ import annotations

import asyncio
import os
import re
from pathlib import Path
from typing import Any, Mapping

from minicode.errors import ToolError
from minicode.tools.base import ToolContext, ToolPreview, ToolResult
from minicode.tools.fsroot import locate, open_directory
from minicode.tools.fswalk import walk_files
from minicode.tools.ignore import IgnoreRules, glob_to_regex, load_ignore_rules
from minicode.tools.specs import GLOB, LS
from minicode.tools.truncate import GLOB_MAX_RESULTS, LS_MAX_ENTRIES

__all__ = ["GlobTool", "LsTool"]


def _list_dir(workspace: Path, path: str, rules: IgnoreRules) -> str:
    """Blocking: the listing of the directory ``path`` names, read from its descriptor."""
    with open_directory(workspace, path) as opened:
        rel = opened.place.rel
        try:
            with os.scandir(opened.fd) as it:
                entries = sorted(((e.name, _entry_is_dir(workspace, rel, e)) for e in it))
        except OSError as e:
            raise ToolError(f"cannot list {rel}: {e.strerror or e}") from e
    lines: list[str] = []
    hidden = 0
    for name, is_dir in entries:
        if rules.ignored(_join(rel, name), is_dir=is_dir):
            hidden += 1
            continue
        lines.append(name + ("/" if is_dir else ""))
    shown = lines[:LS_MAX_ENTRIES]
    if len(lines) > LS_MAX_ENTRIES:
        shown.append(f"[... {len(lines) - LS_MAX_ENTRIES} more entries not shown]")
    if hidden:
        noun = "entry" if hidden == 1 else "entries"
        shown.append(f"[{hidden} ignored {noun} hidden (.git, .gitignore, .minicode/sessions)]")
    return "\n".join(shown) if shown else "(empty directory)"


def _entry_is_dir(workspace: Path, rel: str, entry: os.DirEntry[str]) -> bool:
    """A directory, or a symlink that leads (inside the workspace) to one; a link leading
    out is never followed, not even to ask what it points to."""
    if not entry.is_symlink():
        return entry.is_dir(follow_symlinks=False)
    try:
        return locate(workspace, _join(rel, entry.name)).is_dir
    except ToolError:
        return False


def _join(rel: str, name: str) -> str:
    return name if rel in ("", ".") else f"{rel}/{name}"


class LsTool:
    name = LS.name
    description = LS.description
    parameters: Mapping[str, Any] = LS.parameters
    side_effects = LS.side_effects

    def preview(self, args: Mapping[str, Any]) -> ToolPreview:
        return ToolPreview(target=str(args.get("path") or "."))

    async def run(self, args: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
        rules = load_ignore_rules(ctx.workspace)
        text = await asyncio.to_thread(_list_dir, ctx.workspace, args.get("path") or ".", rules)
        count = text.count("\n") + 1
        return ToolResult(text=text, summary=f"{count} line" if count == 1 else f"{count} lines")


# --- glob ----------------------------------------------------------------------------


def _glob(workspace: Path, path: str, pattern: re.Pattern[str]) -> list[str]:
    """Blocking: the matching files below the directory ``path`` names, by a descriptor walk."""
    rules = load_ignore_rules(workspace)
    with open_directory(workspace, path) as base:
        prefix = 0 if base.place.rel == "." else len(base.place.rel) + 1
        return sorted(e.rel for e in walk_files(workspace, base, rules) if pattern.match(e.rel[prefix:]))


class GlobTool:
    name = GLOB.name
    description = GLOB.description
    parameters: Mapping[str, Any] = GLOB.parameters
    side_effects = GLOB.side_effects

    def preview(self, args: Mapping[str, Any]) -> ToolPreview:
        return ToolPreview(target=str(args.get("path") or "."), detail=str(args.get("pattern", "")))

    async def run(self, args: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
        pattern: str = args["pattern"]
        if pattern.startswith("/") or ".." in pattern.split("/"):
            raise ToolError("glob patterns are relative to path and may not contain '..'; e.g. **/*.py")
        regex = re.compile(glob_to_regex(pattern))
        found = await asyncio.to_thread(_glob, ctx.workspace, args.get("path") or ".", regex)
        if not found:
            return ToolResult(text=f"no files match {pattern}", summary="0 files")
        lines = found[:GLOB_MAX_RESULTS]
        if len(found) > GLOB_MAX_RESULTS:
            lines.append(f"[... {len(found) - GLOB_MAX_RESULTS} more files; use a narrower pattern or path]")
        return ToolResult(text="\n".join(lines), summary=f"{len(found)} files")
