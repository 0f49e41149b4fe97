"""Confined file access: every workspace path is opened through directory descriptors.

Why: checking a path by name and then opening it by name is a race. Between the two, another
process can swap a directory for a symlink to somewhere else (``rename-exchange`` in a loop),
and the open follows it out of the workspace. So no tool opens a workspace path by name: read,
write, edit, ls, glob, grep, their previews and the undo snapshots all come here.

How a path is resolved (one rule for every tool; the machinery is in ``fsresolve``):

- The workspace root is opened (``O_DIRECTORY``); it is the one name we trust.
- Each directory component is opened relative to the directory held before it with
  ``O_NOFOLLOW | O_DIRECTORY``. The kernel never follows a symlink for us.
- A component that is a symlink is read (``readlinkat``) and its target resolved component by
  component under the same rules: ``..`` goes back to a directory already held (it is never
  re-opened by name, so it cannot lead above the root), an absolute target must lie under the
  workspace root, at most ``MAX_SYMLINK_HOPS`` links. Symlinks that stay inside the workspace
  therefore work; one that leads out is refused, whenever it appears — also if it is swapped in
  while we walk.
- The last component is opened with ``O_NOFOLLOW`` (files also ``O_NONBLOCK``, so a FIFO cannot
  block; ``fstat`` on the descriptor then decides what it is).
- Writes create a temp file *in the directory that was opened* (``openat(O_EXCL|O_NOFOLLOW)``)
  and rename it over the name there (``renameat``, see ``fswrite``); listings are ``scandir`` on
  a descriptor; the walk of glob/grep (``fswalk``) enters every subdirectory with
  ``O_NOFOLLOW | O_DIRECTORY`` relative to its parent.

What a descriptor guarantees: the object was inside the workspace when it was reached through
directories that were inside. A directory opened that way stays the one we work in even if it is
renamed meanwhile, so a swap after the check cannot redirect the operation.

Blocking: every function here does file I/O; tools call them in a worker thread. Stdlib only
(the grep worker process imports this module; keep it light).
"""

from __future__ import annotations

import errno
import os
import stat
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO, Callable, Iterator

from minicode.errors import ToolError
from dataclasses import dataclass
from minicode.tools.base import BeforeReplace
from minicode.tools.fsresolve import (
    CLOEXEC,
    READ_FLAGS,
    Link,
    Missing,
    NotARegularFile,
    PathMissing,
    Place,
    Walk,
    check_path_text,
    lstat_at,
    require_regular,
    resolve,
)
from minicode.tools.fswrite import WriteTarget

__all__ = [
    "NotARegularFile",
    "OpenedDir",
    "OpenedFile",
    "PathMissing",
    "Place",
    "WriteTarget",
    "check_path_text",
    "locate",
    "open_directory",
    "open_entry",
    "open_file",
    "write_target",
]


@dataclass(frozen=True, slots=True)
class OpenedFile:
    """A regular file opened for reading (binary, buffered), and where it is."""

    file: BinaryIO
    place: Place
    stat: os.stat_result


@dataclass(frozen=True, slots=True)
class OpenedDir:
    """A directory opened as a descriptor (for ``scandir``/walks), and where it is."""

    fd: int
    place: Place


# --- public operations ---------------------------------------------------------------------


def locate(workspace: Path, path: str, *, must_exist: bool = False) -> Place:
    """Where ``path`` leads (symlinks resolved, confined), without keeping anything open.

    Missing directories on the way are fine unless ``must_exist``: a write may create them.
    Raises ``ToolError`` for a path that leaves the workspace or (``must_exist``) is missing.
    """

    def final(walk: Walk, name: str | None) -> Place:
        if name is None:
            return walk.place(None, exists=walk.top >= 0, is_dir=True)
        st = lstat_at(walk, name)
        if st is not None and stat.S_ISLNK(st.st_mode):
            raise Link
        return walk.place(name, exists=st is not None, is_dir=st is not None and stat.S_ISDIR(st.st_mode))

    walk, place = resolve(workspace, path, final, virtual=True)
    walk.close()
    if must_exist and not place.exists:
        raise PathMissing(f"{path}: no such file or directory (looked at {place.rel})")
    return place


def _open_node(walk: Walk, name: str | None) -> tuple[int, os.stat_result]:
    """The last component opened read-only without following it, and its fstat."""
    try:
        if name is None:
            fd = os.open(".", os.O_RDONLY | os.O_DIRECTORY | CLOEXEC, dir_fd=walk.top)
        else:
            fd = os.open(name, READ_FLAGS, dir_fd=walk.top)
    except OSError as e:
        if e.errno == errno.ELOOP:
            raise Link from None
        if e.errno == errno.ENOENT:
            raise Missing(walk.rel(name)) from None
        raise ToolError(f"cannot open {walk.rel(name)}: {e.strerror or e}") from e
    try:
        return fd, os.fstat(fd)
    except BaseException:
        os.close(fd)
        raise


@contextmanager
def open_file(workspace: Path, path: str) -> Iterator[OpenedFile]:
    """``path`` opened for reading; it must be a regular file (a directory or FIFO is refused
    with a message saying what it is)."""

    def final(walk: Walk, name: str | None) -> tuple[int, os.stat_result, Place]:
        fd, st = _open_node(walk, name)
        return fd, st, walk.place(name, exists=True, is_dir=stat.S_ISDIR(st.st_mode))

    walk, (fd, st, place) = resolve(workspace, path, final)
    walk.close()
    try:
        require_regular(st, place)
        os.set_blocking(fd, True)
        handle = os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise
    with handle:
        yield OpenedFile(handle, place, st)


@contextmanager
def open_directory(workspace: Path, path: str) -> Iterator[OpenedDir]:
    """``path`` opened as a directory descriptor (``os.scandir(fd)``, ``open_entry``)."""

    def final(walk: Walk, name: str | None) -> tuple[int, Place]:
        fd, st = _open_node(walk, name)
        place = walk.place(name, exists=True, is_dir=stat.S_ISDIR(st.st_mode))
        if not stat.S_ISDIR(st.st_mode):
            os.close(fd)
            raise ToolError(f"{place.rel} is not a directory")
        return fd, place

    walk, (fd, place) = resolve(workspace, path, final)
    walk.close()
    try:
        yield OpenedDir(fd, place)
    finally:
        os.close(fd)


def open_entry(dir_fd: int, name: str) -> tuple[BinaryIO, os.stat_result] | None:
    """A regular file ``name`` of an opened directory, for reading, without following a
    symlink (None: it is not a regular file any more, e.g. swapped for a link)."""
    try:
        fd = os.open(name, READ_FLAGS, dir_fd=dir_fd)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            os.close(fd)
            return None
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb"), st
    except BaseException:
        os.close(fd)
        raise


@contextmanager
def write_target(
    workspace: Path,
    path: str,
    *,
    make_parents: bool = False,
    on_temp: Callable[[str, str], None] | None = None,
    before_replace: BeforeReplace | None = None,
    follow_link: bool = True,
) -> Iterator[WriteTarget]:
    """The directory of ``path`` opened (missing ones created with ``make_parents``) and the
    file's name in it; a last component that is a symlink leads to its (inside) target, so a
    write through a link changes the target and keeps the link. Refuses a directory.
    ``on_temp(dir_rel, temp_name)`` is told each temp file before it is created (the
    leftover-temp journal); ``before_replace`` is told what a replace is about to replace
    (undo snapshots, see ``WriteTarget.replace``). ``follow_link=False``: a last component
    that is a symlink is refused (``NotARegularFile``) — /undo puts back the file it saw, never
    what a link put in its place points to."""

    def final(walk: Walk, name: str | None) -> tuple[int, str, Place]:
        if name is None:
            raise ToolError(f"cannot write {walk.rel()}: it is a directory; choose a file path inside it")
        st = lstat_at(walk, name)
        if st is not None and stat.S_ISLNK(st.st_mode):
            if not follow_link:
                raise NotARegularFile(f"{walk.rel(name)} is now a symbolic link")
            raise Link
        place = walk.place(name, exists=st is not None, is_dir=st is not None and stat.S_ISDIR(st.st_mode))
        if place.is_dir:
            raise NotARegularFile(f"cannot write {place.rel}: it is an existing directory; choose a file path inside it")
        return os.dup(walk.top), name, place

    walk, (dir_fd, name, place) = resolve(workspace, path, final, create=make_parents)
    walk.close()
    try:
        yield WriteTarget(dir_fd, name, place, on_temp, before_replace)
    finally:
        os.close(dir_fd)
