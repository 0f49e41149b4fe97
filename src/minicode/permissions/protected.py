"""Paths no permission rule or earlier answer may touch: the files and directories that hold
permission rules (the configuration files, ``config/``, ``.minicode/local/``, the per-user
``~/.config/minicode/``, ``~/.minicode/``) and git's hooks and configuration (``.git/hooks/``,
``.git/config``, ``.git/modules/``), which make later, allowed commands (``git commit``) run code.
A call that writes — or whose command names — one of them is always asked.

``hit`` finds the entry a path is (or is inside); ``holder`` the entry a *directory* holds
(``cp -r hooks .git/`` writes ``.git/hooks``: for commands that write into the directories
their arguments name) — never the workspace root itself, which holds everything; ``top_entry`` names an entry by its name at the workspace root (``cp -r x/config
.``). Globs are matched one path segment at a time like bash. Each ``Protected`` says what it
is, for the reason shown to the model and the user. Pure but for the injected ``resolve``.
"""

from __future__ import annotations

import fnmatch
import os
from pathlib import Path
from typing import Callable, Iterable, Sequence

from dataclasses import dataclass

__all__ = ["Hit", "Protected", "ProtectedPaths"]

_GLOB = frozenset("*?[")


@dataclass(frozen=True, slots=True)
class Protected:
    path: Path
    what: str
    """What it is, as a phrase after its path: "which holds permission rules"."""
    directory: bool = False


@dataclass(frozen=True, slots=True)
class Hit:
    shown: str
    what: str


class ProtectedPaths:
    def __init__(self, root: str, entries: Iterable[Protected], resolve: Callable[[str], str | None],
                 home: str | None = None) -> None:
        entries = list(entries)
        self._root = root
        self._resolve = resolve
        self._roots = roots = {root, resolve(root) or root}
        self._files: dict[str, Hit] = {}
        self._dirs: dict[str, Hit] = {}
        self._parents: dict[str, Hit] = {}
        self._top: dict[str, Hit] = {}
        for entry in entries:
            table = self._dirs if entry.directory else self._files
            absolute = os.path.abspath(entry.path)
            hit = Hit(str(entry.path), entry.what)
            for form in dict.fromkeys((absolute, resolve(absolute) or absolute)):
                table.setdefault(form, hit)
                for parent in _ancestors(form):
                    if parent in roots:  # the root holds everything: only a same-named copy counts
                        self._top.setdefault(form[len(parent.rstrip("/")) + 1 :].split("/")[0], hit)
                        break
                    self._parents.setdefault(parent, hit)
        every = (*self._files, *self._dirs, *self._parents)
        self.names = frozenset(os.path.basename(p) for p in every if os.path.basename(p))
        """Basenames worth resolving a word for (entries and the directories holding them)."""
        self._tails = _tails(entries, roots, home)

    def hit(self, absolutes: Iterable[str]) -> Hit | None:
        """The protected entry one of these absolute paths is (or is inside), or None."""
        for absolute in absolutes:
            if not absolute:
                continue
            if _GLOB & set(absolute):
                found = self._glob(absolute, holder=False)
                if found is not None:
                    return found
            for candidate in dict.fromkeys((absolute, self._resolve(absolute) or absolute)):
                found = self._files.get(candidate) or self._inside_dir(candidate) or self._tail(candidate, False)
                if found is not None:
                    return found
        return None

    def holder(self, absolutes: Iterable[str]) -> Hit | None:
        """The protected entry one of these directories holds (not the workspace root)."""
        for absolute in absolutes:
            if _GLOB & set(absolute):
                found = self._glob(absolute, holder=True)
                if found is not None:
                    return found
            for candidate in dict.fromkeys((absolute, self._resolve(absolute) or absolute)):
                found = self._parents.get(candidate) or self._tail(candidate, True)
                if found is not None:
                    return found
        return None

    def is_root(self, absolute: str) -> bool:
        """Whether the path is the workspace root."""
        return absolute in self._roots or (self._resolve(absolute) or absolute) in self._roots

    def top_entry(self, absolute: str) -> Hit | None:
        """The entry at the workspace root a copied directory named like this would replace
        (``x/config`` → ``config/``), or None."""
        return self._top.get(os.path.basename(absolute.rstrip("/")))

    def _tail(self, path: str, holder: bool) -> Hit | None:
        """A path that *ends* like a protected one (``L/.git/hooks/x`` after ``ln -s . L``:
        a link made in the same command is not there to resolve yet); for ``holder``, one
        that ends like a directory holding one (``L/.git``)."""
        segments = path.split("/")
        for tail, directory, hit in self._tails:
            for start in range(len(segments)):
                piece = segments[start : start + len(tail)]
                ends = start + len(piece) == len(segments)
                if holder and 0 < len(piece) < len(tail) and ends and piece == tail[: len(piece)]:
                    return Hit(path, f"which may hold {'/'.join(tail)} — {hit.what}")
                if not holder and piece == tail and (directory or ends):
                    return Hit(path, f"which ends like {'/'.join(tail)} — {hit.what}")
        return None

    def _inside_dir(self, path: str) -> Hit | None:
        for directory, hit in self._dirs.items():
            if path == directory or path.startswith(directory.rstrip("/") + "/"):
                return hit
        return None

    def _glob(self, pattern: str, *, holder: bool) -> Hit | None:
        """A protected path the glob could expand to (or into, for a directory; or a directory
        holding one, for ``holder``), segment by segment like bash: ``*`` skips dot-files."""
        wanted = os.path.normpath(pattern).split("/")
        if holder:
            return next((hit for path, hit in self._parents.items()
                         if _segments_match(wanted, path.split("/"), inside_ok=False)), None)
        for path, hit in self._files.items():
            if _segments_match(wanted, path.split("/"), inside_ok=False):
                return hit
        for path, hit in self._dirs.items():
            if _segments_match(wanted, path.split("/"), inside_ok=True):
                return hit
        return None


def _tails(entries: Sequence[Protected], roots: set[str], home: str | None) -> list[tuple[list[str], bool, Hit]]:
    """Each entry's path relative to the workspace (or the home directory), when it has at
    least two segments (``.git/hooks``, ``config/config.toml``, ``.config/minicode``): a path
    ending like one of these is protected wherever it is."""
    bases = [*roots, *([home] if home else [])]
    found: list[tuple[list[str], bool, Hit]] = []
    for entry in entries:
        absolute = os.path.abspath(entry.path)
        for base in bases:
            if absolute.startswith(base.rstrip("/") + "/"):
                tail = absolute[len(base.rstrip("/")) + 1 :].split("/")
                if len(tail) >= 2:
                    found.append((tail, entry.directory, Hit(str(entry.path), entry.what)))
                break
    return found


def _ancestors(path: str) -> list[str]:
    """``/a/b/c`` → ``/a/b``, ``/a``, ``/``."""
    found: list[str] = []
    while True:
        parent = os.path.dirname(path)
        if parent == path:
            return found
        found.append(parent)
        path = parent


def _segments_match(pattern: Sequence[str], path: Sequence[str], *, inside_ok: bool) -> bool:
    if len(pattern) < len(path) or (len(pattern) > len(path) and not inside_ok):
        return False
    for glob, name in zip(pattern, path):
        if name.startswith(".") and not glob.startswith("."):
            return False  # bash's * and ? never match a leading dot
        if not fnmatch.fnmatchcase(name, glob):
            return False
    return True
