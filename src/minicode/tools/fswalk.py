"""The directory walk of glob and grep, by descriptor: it cannot be redirected mid-walk.

Each subdirectory is entered with ``O_NOFOLLOW | O_DIRECTORY`` relative to the descriptor of
its parent and listed with ``scandir`` on its own descriptor, so swapping a directory for a
symlink while the walk runs makes that entry vanish from the walk, never lead out of the
workspace. Symlinked directories are never entered (no loops, no duplicates); a symlinked file is
yielded only when it resolves (through ``fsroot``, by the same rules) to a file inside. Files are
opened relative to their directory's descriptor without following a link (``open``).

Order: in each directory its files sorted by name, then its subdirectories, depth first. At
most ``MAX_WALK_DEPTH`` directories are held open at once; deeper ones are counted, not
entered. Stdlib only; blocking.
"""

from __future__ import annotations

import os
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Iterator

from minicode.errors import ToolError
from minicode.tools.fsresolve import CLOEXEC
from minicode.tools.fsroot import OpenedDir, locate, open_entry, open_file
from minicode.tools.ignore import IgnoreRules

__all__ = ["MAX_WALK_DEPTH", "WalkEntry", "WalkStats", "project_files", "walk_files"]

MAX_WALK_DEPTH = 128
"""Directories held open at once by one walk (its depth below the start)."""

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | CLOEXEC


@dataclass(frozen=True, slots=True)
class WalkEntry:
    """A file the walk found: ``rel`` is workspace-relative POSIX. ``dir_fd`` is its opened
    directory, valid until the walk moves on; ``via_link`` when the entry is a symlink (to a
    file inside the workspace)."""

    rel: str
    dir_fd: int
    name: str
    via_link: bool = False

    @contextmanager
    def open(self, workspace: Path) -> Iterator[tuple[BinaryIO, os.stat_result] | None]:
        """The file for reading, or None when it is gone or no longer a regular file."""
        if not self.via_link:
            opened = open_entry(self.dir_fd, self.name)
            if opened is None:
                yield None
                return
            with opened[0]:
                yield opened
            return
        try:
            with open_file(workspace, self.rel) as linked:
                yield linked.file, linked.stat
        except (ToolError, OSError):
            yield None


@dataclass(slots=True)
class WalkStats:
    """What the walk left out: directories too deep, or unreadable."""

    too_deep: int = 0
    unreadable: int = 0


def _listing(fd: int) -> tuple[list[tuple[str, bool]], list[str]]:
    """(files as (name, is a symlink), subdirectory names) of an opened directory, sorted."""
    files: list[tuple[str, bool]] = []
    dirs: list[str] = []
    with os.scandir(fd) as it:
        for entry in it:
            if entry.is_dir(follow_symlinks=False):
                dirs.append(entry.name)
            elif entry.is_symlink():
                files.append((entry.name, True))
            elif entry.is_file(follow_symlinks=False):
                files.append((entry.name, False))
    return sorted(files), sorted(dirs)


def _join(rel: str, name: str) -> str:
    return name if rel in ("", ".") else f"{rel}/{name}"


def walk_files(
    workspace: Path, start: OpenedDir, rules: IgnoreRules, stats: WalkStats | None = None
) -> Iterator[WalkEntry]:
    """Yield every non-ignored file below the opened directory ``start`` (see the module doc)."""
    stats = stats if stats is not None else WalkStats()
    frames: list[tuple[int, str, list[str]]] = []
    try:
        yield from _directory(workspace, os.dup(start.fd), start.place.rel, rules, frames, stats)
        while frames:
            fd, rel, subdirs = frames[-1]
            if not subdirs:
                os.close(fd)
                frames.pop()
                continue
            name = subdirs.pop(0)
            child_rel = _join(rel, name)
            if len(frames) >= MAX_WALK_DEPTH:
                stats.too_deep += 1
                continue
            try:
                child = os.open(name, _DIR_FLAGS, dir_fd=fd)
            except OSError:
                stats.unreadable += 1  # swapped for a link, removed, or not ours to read
                continue
            yield from _directory(workspace, child, child_rel, rules, frames, stats)
    finally:
        for fd, _, _ in frames:
            os.close(fd)


def _directory(
    workspace: Path, fd: int, rel: str, rules: IgnoreRules, frames: list[tuple[int, str, list[str]]], stats: WalkStats
) -> Iterator[WalkEntry]:
    """The files of the opened directory ``fd``; pushes it (owning ``fd``) with its subdirectories."""
    try:
        files, dirs = _listing(fd)
    except OSError:
        os.close(fd)
        stats.unreadable += 1
        return
    frames.append((fd, rel, [d for d in dirs if not rules.entry_ignored(_join(rel, d), is_dir=True)]))
    for name, is_link in files:
        child_rel = _join(rel, name)
        if rules.entry_ignored(child_rel, is_dir=False):
            continue
        if is_link and not _links_to_inside_file(workspace, child_rel):
            continue
        yield WalkEntry(child_rel, fd, name, via_link=is_link)


def _links_to_inside_file(workspace: Path, rel: str) -> bool:
    try:
        place = locate(workspace, rel)
    except ToolError:
        return False  # leads out of the workspace (or cannot be resolved): not part of it
    return place.exists and not place.is_dir


NOT_THE_PROJECT = (".minicode/", "node_modules/", ".venv/", "venv/")
"""Folders of minicode's state and of installed packages: files, but not the project's."""


def project_files(workspace: Path) -> Iterator[str]:
    """The workspace's own files as ``glob`` sees them (the confined descriptor walk, the
    ignore rules: no .git, no ignored files, no links out), without ``NOT_THE_PROJECT``.
    Blocking; raises OSError or MinicodeError when the workspace cannot be walked."""
    from minicode.tools.fsroot import open_directory
    from minicode.tools.ignore import load_ignore_rules

    rules = load_ignore_rules(workspace)
    with open_directory(workspace, ".") as base:
        for entry in walk_files(workspace, base, rules):
            if not entry.rel.startswith(NOT_THE_PROJECT):
                yield entry.rel
