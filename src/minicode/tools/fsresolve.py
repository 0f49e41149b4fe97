"""How a model's path is resolved to what it names, confined to the workspace.

The machinery behind ``fsroot`` (read that module's docstring for the rules and why):
``Walk`` holds the directories opened on the way, from the workspace root down, and
``resolve`` walks a path to its last component and runs an operation there, following a last
component that is a symlink by the same rules. Stdlib only; blocking.
"""

from __future__ import annotations

import errno
import os
import stat
from collections import deque
from pathlib import Path
from typing import Callable, TypeVar

from minicode.errors import ToolError
from dataclasses import dataclass

__all__ = [
    "MAX_SYMLINK_HOPS",
    "NAME_MAX_BYTES",
    "PATH_MAX_BYTES",
    "READ_FLAGS",
    "Link",
    "Missing",
    "NotARegularFile",
    "PathMissing",
    "Place",
    "Walk",
    "check_path_text",
    "lstat_at",
    "require_regular",
    "resolve",
]

MAX_SYMLINK_HOPS = 40
"""Symlinks followed while resolving one path (the kernel's own limit)."""
NAME_MAX_BYTES = 255
"""Longest file name (one component) in bytes, as on Linux/macOS file systems."""
PATH_MAX_BYTES = 4096
"""Longest path the model may send, in bytes."""

CLOEXEC = getattr(os, "O_CLOEXEC", 0)
READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | CLOEXEC | getattr(os, "O_NOCTTY", 0)
"""Opening a last component: never through a symlink, never blocking on a FIFO."""
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | CLOEXEC
_MKDIR_RETRIES = 5
_T = TypeVar("_T")


# --- what a resolved path is -----------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Place:
    """Where a path leads, symlinks resolved: ``rel`` is workspace-relative POSIX ("." for the
    root), ``path`` the same under the real workspace root — an identity for stamps, validators
    and messages, never a name to open. ``exists`` says whether something is there."""

    rel: str
    path: Path
    exists: bool = True
    is_dir: bool = False


def check_path_text(path: str) -> None:
    """Refuse a path that cannot name a file, with a message the model can act on."""
    if not path or not path.strip():
        raise ToolError("empty path; use a path relative to the workspace like src/x.py")
    if "\x00" in path:
        raise ToolError("the path contains a NUL byte")
    bad = next((i for i, c in enumerate(path) if _is_control(c)), None)
    if bad is not None:
        raise ToolError(
            f"the path contains a control character ({_control_name(path[bad])} at position {bad}); "
            "file names with newlines, tabs or other control characters are refused — send the path without them"
        )
    try:
        encoded = os.fsencode(path)
    except UnicodeEncodeError as e:
        raise ToolError(
            f"the path contains an invalid character (a lone surrogate {path[e.start]!r} at "
            f"position {e.start}); send the path as valid Unicode"
        ) from e
    if len(encoded) > PATH_MAX_BYTES:
        raise ToolError(f"the path is {len(encoded):,} bytes long; paths are limited to {PATH_MAX_BYTES:,} bytes")
    for part in path.split("/"):
        size = len(os.fsencode(part))
        if size > NAME_MAX_BYTES:
            raise ToolError(
                f"a name in the path is {size:,} bytes long ({part[:40]!r}…); "
                f"file names are limited to {NAME_MAX_BYTES} bytes"
            )


def _is_control(c: str) -> bool:
    """C0 controls (newline and tab too), DEL and C1: nothing a person can see in a name."""
    code = ord(c)
    return code < 0x20 or 0x7F <= code < 0xA0


def _control_name(c: str) -> str:
    names = {"\n": "a newline", "\r": "a carriage return", "\t": "a tab", "\x1b": "an escape"}
    return names.get(c, f"U+{ord(c):04X}")


def _outside(root: Path, path: str, why: str) -> ToolError:
    return ToolError(
        f"{path!r} {why}: paths must stay inside the workspace {root}; use a relative path like src/x.py"
    )


class PathMissing(ToolError):
    """The path names nothing (or a directory on the way does not exist)."""


class NotARegularFile(ToolError):
    """The path names a directory, FIFO, device or socket where a file was needed."""


class Missing(Exception):
    """A directory on the way does not exist (``rel`` is the first missing one)."""

    def __init__(self, rel: str) -> None:
        super().__init__(rel)
        self.rel = rel


class Link(Exception):
    """The last component is a symlink: resolve its target and try again."""


# --- the walk from the root ----------------------------------------------------------------

_Step = tuple[str, str | None]  # (component, the symlink it came from, if any)


class Walk:
    """The directories held on the way to a path: ``fds[0]`` is the workspace root.

    A directory that does not exist (only when planning, ``virtual``) is held as -1: below it
    nothing exists, so the rest of the path is resolved by name alone.
    """

    def __init__(self, workspace: Path, original: str) -> None:
        self.root_real = _real(workspace)
        self.ws_abs = Path(os.path.abspath(workspace))
        self.original = original
        self.hops = 0
        try:
            root_fd = os.open(workspace, os.O_RDONLY | os.O_DIRECTORY | CLOEXEC)
        except OSError as e:
            raise ToolError(f"cannot open the workspace {workspace}: {e.strerror or e}") from e
        self.fds: list[int] = [root_fd]
        self.names: list[str] = []

    def close(self) -> None:
        for fd in self.fds:
            if fd >= 0:
                os.close(fd)
        self.fds = []

    @property
    def top(self) -> int:
        return self.fds[-1]

    def rel(self, name: str | None = None) -> str:
        names = self.names + ([name] if name else [])
        return "/".join(names) or "."

    def place(self, name: str | None, *, exists: bool, is_dir: bool) -> Place:
        rel = self.rel(name)
        return Place(rel, self.root_real if rel == "." else self.root_real / rel, exists, is_dir)

    # -- steps --

    def start(self) -> deque[_Step]:
        return deque((part, None) for part in _relative_parts(self, self.original))

    def follow(self, pending: deque[_Step], *, create: bool, virtual: bool) -> str | None:
        """Enter every directory of ``pending`` but the last; return the last name (None when
        the path names a directory already entered, e.g. "." or "a/..")."""
        while pending:
            part, via = pending.popleft()
            if part in ("", "."):
                continue
            if part == "..":
                self._up(via)
                continue
            if all(p in ("", ".") for p, _ in pending):
                pending.clear()
                return part
            self._enter(part, pending, via, create=create, virtual=virtual)
        return None

    def _up(self, via: str | None) -> None:
        if len(self.fds) == 1:
            if via is not None:
                raise _outside(self.root_real, self.original, f"goes through the symlink {via!r} that points outside the workspace")
            raise _outside(self.root_real, self.original, "leaves the workspace through '..'")
        fd = self.fds.pop()
        self.names.pop()
        if fd >= 0:
            os.close(fd)

    def _enter(self, part: str, pending: deque[_Step], via: str | None, *, create: bool, virtual: bool) -> None:
        for _ in range(_MKDIR_RETRIES):
            if self.top < 0:  # below a directory that does not exist (planning only)
                self.fds.append(-1)
                self.names.append(part)
                return
            try:
                fd = os.open(part, _DIR_FLAGS, dir_fd=self.top)
            except FileNotFoundError:
                if virtual:
                    self.fds.append(-1)
                    self.names.append(part)
                    return
                if not create:
                    raise Missing(self.rel(part)) from None
                self._mkdir(part)
                continue  # open what we (or a racing process) created, by the same rules
            except OSError as e:
                if e.errno not in (errno.ENOTDIR, errno.ELOOP):
                    raise ToolError(f"cannot open the directory {self.rel(part)}: {e.strerror or e}") from e
                target = self.readlink(part)
                if target is not None:
                    pending.extendleft(reversed(self.splice(part, target)))
                    return
                if lstat_at(self, part) is not None:
                    raise ToolError(f"{self.original}: {self.rel(part)} is a file, not a directory") from e
                continue  # it vanished meanwhile: look again
            self.fds.append(fd)
            self.names.append(part)
            return
        raise ToolError(f"cannot create the directory {self.rel(part)}: it keeps disappearing")

    def _mkdir(self, part: str) -> None:
        try:
            os.mkdir(part, 0o777, dir_fd=self.top)
        except FileExistsError:
            pass  # made meanwhile (or it is a link now): the next open decides
        except OSError as e:
            raise ToolError(f"cannot create the directory {self.rel(part)}: {e.strerror or e}") from e

    def readlink(self, name: str) -> str | None:
        """The target of symlink ``name`` in the current directory, or None if it is none."""
        if self.top < 0:
            return None
        try:
            return os.readlink(name, dir_fd=self.top)
        except OSError as e:
            if e.errno in (errno.EINVAL, errno.ENOENT):
                return None
            raise ToolError(f"cannot read the symlink {self.rel(name)}: {e.strerror or e}") from e

    def splice(self, name: str, target: str) -> list[_Step]:
        """The steps that replace symlink ``name`` (in the current directory) by its target."""
        self.hops += 1
        if self.hops > MAX_SYMLINK_HOPS:
            raise ToolError(f"{self.original}: too many levels of symlinks (more than {MAX_SYMLINK_HOPS})")
        if not target:
            raise ToolError(f"{self.original}: the symlink {self.rel(name)} is empty")
        if os.path.isabs(target):
            parts = _inside_parts(self.root_real, self.ws_abs, target)
            if parts is None:
                shown = os.path.normpath(target)
                raise _outside(self.root_real, self.original, f"goes through the symlink {name!r} that points outside to {shown}")
            while len(self.fds) > 1:  # an absolute target restarts at the root
                self._up(None)
            return [(p, name) for p in parts]
        return [(p, name) for p in target.split("/")]


def _real(workspace: Path) -> Path:
    """The workspace with its symlinks resolved (it is the trusted name; as given if that fails)."""
    try:
        return Path(os.path.realpath(workspace))
    except OSError:
        return Path(os.path.abspath(workspace))


def _inside_parts(root_real: Path, ws_abs: Path, target: str) -> list[str] | None:
    """The components of absolute ``target`` below the workspace root, None if not under it.

    Compared component by component on the unnormalised text: ``..`` left in the rest is
    resolved by the walk, which cannot go above the root."""
    given = [p for p in target.split("/") if p not in ("", ".")]
    for base in (root_real, ws_abs):
        prefix = [p for p in base.as_posix().split("/") if p]
        if given[: len(prefix)] == prefix:
            return given[len(prefix) :]
    return None


def _relative_parts(walk: Walk, path: str) -> list[str]:
    """The components of the model's ``path`` relative to the workspace root."""
    if not os.path.isabs(path):
        return path.split("/")
    parts = _inside_parts(walk.root_real, walk.ws_abs, path)
    if parts is not None:
        return parts
    # The absolute path may reach the workspace through symlinks of its own (e.g. /tmp ->
    # /private/tmp); what it names is then walked from the root by the same rules.
    try:
        real = Path(os.path.realpath(path))
    except OSError:  # a component changing under us (realpath is not race-free): not ours
        raise _outside(walk.root_real, path, "is an absolute path outside the workspace") from None
    if real == walk.root_real or walk.root_real in real.parents:
        return list(real.relative_to(walk.root_real).parts)
    raise _outside(walk.root_real, path, "is an absolute path outside the workspace")


def resolve(
    workspace: Path,
    path: str,
    final: Callable[[Walk, str | None], _T],
    *,
    create: bool = False,
    virtual: bool = False,
) -> tuple[Walk, _T]:
    """Walk to ``path`` and run ``final(walk, last name)`` there, following a last component
    that is a symlink (``final`` raises ``Link``) by the same rules. The caller closes the walk."""
    check_path_text(path)
    walk = Walk(workspace, path)
    try:
        pending = walk.start()
        while True:
            name = walk.follow(pending, create=create, virtual=virtual)
            try:
                return walk, final(walk, name)
            except Link:
                assert name is not None
                target = walk.readlink(name)
                if target is None:
                    walk.hops += 1  # it stopped being a link meanwhile: look again (bounded)
                    if walk.hops > MAX_SYMLINK_HOPS:
                        raise ToolError(f"{path}: keeps changing while it is opened; try again") from None
                    pending = deque([(name, None)])
                    continue
                pending = deque(walk.splice(name, target))
    except Missing as e:
        walk.close()
        raise PathMissing(f"{path}: no such file or directory ({e.rel} does not exist)") from None
    except BaseException:
        walk.close()
        raise


def lstat_at(walk: Walk, name: str) -> os.stat_result | None:
    if walk.top < 0:
        return None
    try:
        return os.stat(name, dir_fd=walk.top, follow_symlinks=False)
    except FileNotFoundError:
        return None
    except OSError as e:
        raise ToolError(f"cannot inspect {walk.rel(name)}: {e.strerror or e}") from e


def require_regular(st: os.stat_result, place: Place) -> None:
    """Raise ``NotARegularFile`` (saying what it is instead) unless ``st`` is a regular file."""
    if stat.S_ISDIR(st.st_mode):
        raise NotARegularFile(f"{place.rel} is a directory; use ls path={place.rel} to list it")
    if not stat.S_ISREG(st.st_mode):
        raise NotARegularFile(f"{place.rel} is not a regular file")
