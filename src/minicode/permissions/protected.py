"""Paths no permission rule or earlier answer may open for writing: the files that hold
permission rules (the configuration files, ``.minicode/local/permissions.toml``) and git's
hooks and configuration (``.git/hooks/``, ``.git/config``), which make later, allowed
commands (``git commit``) run code. A write to them is always asked.

``hit`` checks paths a call writes (as written and resolved); ``named_in`` checks a command's
word that names one (``cp x .minicode/local/permissions.toml``, ``sed -i … config/config.toml``,
a glob such as ``.git/hooks/*``), since a rule for ``cp`` or ``sed`` must not reach them
either. Pure but for the injected ``resolve``.
"""

from __future__ import annotations

import fnmatch
import os
from pathlib import Path
from typing import Callable, Iterable, Sequence

__all__ = ["ProtectedPaths"]

_GLOB = frozenset("*?[")


class ProtectedPaths:
    def __init__(
        self, base: str, files: Iterable[Path], dirs: Iterable[Path], resolve: Callable[[str], str | None],
    ) -> None:
        self._base = base
        self._resolve = resolve
        self._files: dict[str, str] = {}
        self._dirs: dict[str, str] = {}
        for table, paths in ((self._files, files), (self._dirs, dirs)):
            for path in paths:
                absolute = os.path.abspath(path)
                table[absolute] = str(path)
                table[resolve(absolute) or absolute] = str(path)
        self._names = frozenset(os.path.basename(p) for p in (*self._files, *self._dirs))

    def hit(self, absolutes: Iterable[str]) -> str | None:
        """The protected file one of these absolute paths is (or is inside), or None."""
        for absolute in absolutes:
            if not absolute:
                continue
            for candidate in dict.fromkeys((absolute, self._resolve(absolute) or absolute)):
                shown = self._files.get(candidate) or self._inside_dir(candidate)
                if shown is not None:
                    return shown
        return None

    def named_in(self, words: Sequence[str], forms: Callable[[str], Sequence[str]]) -> str | None:
        """A protected path named by one of a command's argument ``words`` (also after an
        ``=``, as in ``--config=…``, and as a glob); ``forms`` gives a word's absolute forms."""
        for word in words:
            if not any(name in word for name in self._names):
                continue  # the cheap test first: no protected name, no path to resolve
            for candidate in (word, word.partition("=")[2]):
                if not candidate:
                    continue
                shown = self._glob_hit(candidate) if _GLOB & set(candidate) else self.hit(forms(candidate))
                if shown is not None:
                    return shown
        return None

    def _inside_dir(self, path: str) -> str | None:
        for directory, shown in self._dirs.items():
            if path == directory or path.startswith(directory.rstrip("/") + "/"):
                return shown
        return None

    def _glob_hit(self, pattern: str) -> str | None:
        """A protected path the glob could expand to (or into, for a directory), matched one
        path segment at a time like bash: ``*`` stays in a segment and skips dot-files."""
        full = os.path.normpath(pattern if pattern.startswith("/") else os.path.join(self._base, pattern))
        wanted = full.split("/")
        for path, shown in self._files.items():
            if _segments_match(wanted, path.split("/"), inside_ok=False):
                return shown
        for path, shown in self._dirs.items():
            if _segments_match(wanted, path.split("/"), inside_ok=True):
                return shown
        return None


def _segments_match(pattern: Sequence[str], path: Sequence[str], *, inside_ok: bool) -> bool:
    if len(pattern) < len(path) or (len(pattern) > len(path) and not inside_ok):
        return False
    for glob, name in zip(pattern, path):
        if name.startswith(".") and not glob.startswith("."):
            return False  # bash's * and ? never match a leading dot
        if not fnmatch.fnmatchcase(name, glob):
            return False
    return True
