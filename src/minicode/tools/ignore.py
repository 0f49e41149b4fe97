"""Ignore rules shared by ls, glob and grep.

``.git/`` and ``.minicode/sessions/`` are always skipped. The ``.gitignore`` at the workspace root is honoured with a
practical subset of git's semantics: ``#`` comments, blank lines, ``*``/``?``/``[...]``
globs, ``**`` (leading, trailing and in the middle), a leading ``/`` anchoring to the root,
a ``/`` in the middle anchoring too, a trailing ``/`` matching directories only, ``!``
negation, and "last matching rule wins". A file under an ignored directory stays ignored
(git cannot re-include it either). A ``.gitignore`` in a subdirectory applies below that
directory, its patterns relative to it, and wins over the files above it (git's order);
nested files are read lazily, once per directory, when a path below it is first checked.

Every ``.gitignore`` is read through ``fsroot`` (confined: one that is a symlink leading out of
the workspace is not read). The walk itself is ``fswalk``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from minicode.errors import ToolError
from minicode.tools.fsroot import open_file

__all__ = ["IgnoreRules", "glob_to_regex", "load_ignore_rules"]

ALWAYS_SKIPPED_DIRS = frozenset({".git"})
# minicode's own session logs: searching them would echo earlier tool output back to the
# model. (``.minicode/memory/`` stays visible: it is project knowledge.)
# ``.minicode/tmp/`` holds the journals of write temp files (``tools.tempfiles``).
ALWAYS_SKIPPED_PATHS = frozenset({".minicode/sessions", ".minicode/tmp"})


def glob_to_regex(pattern: str) -> str:
    """Translate a slash-separated glob into an anchored regex over a relative POSIX path.

    ``*`` and ``?`` never cross ``/``; ``**/`` matches zero or more directories; a trailing
    ``**`` matches everything below.
    """
    out: list[str] = []
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif c == "*":
            out.append("[^/]*")
            i += 1
        elif c == "?":
            out.append("[^/]")
            i += 1
        elif c == "[":
            end = pattern.find("]", i + 2 if pattern[i + 1 : i + 2] in ("!", "]") else i + 1)
            if end == -1:
                out.append(re.escape(c))
                i += 1
                continue
            body = pattern[i + 1 : end]
            if body.startswith("!"):
                body = "^" + body[1:]
            out.append("[" + body.replace("\\", "\\\\") + "]")
            i = end + 1
        elif c == "\\" and i + 1 < n:
            out.append(re.escape(pattern[i + 1]))
            i += 2
        else:
            out.append(re.escape(c))
            i += 1
    return "".join(out) + r"\Z"


@dataclass(frozen=True, slots=True)
class _Rule:
    regex: re.Pattern[str]
    negate: bool
    dir_only: bool


def _parse_line(line: str) -> _Rule | None:
    line = line.rstrip("\n").rstrip("\r")
    if not line.strip() or line.startswith("#"):
        return None
    # Trailing spaces are ignored unless escaped (git's rule).
    while line.endswith(" ") and not line.endswith("\\ "):
        line = line[:-1]
    negate = line.startswith("!")
    if negate:
        line = line[1:]
    elif line.startswith("\\!") or line.startswith("\\#"):
        line = line[1:]
    dir_only = line.endswith("/")
    line = line.rstrip("/")
    if not line:
        return None
    anchored = "/" in line
    line = line.lstrip("/")
    body = glob_to_regex(line)
    regex = re.compile(body if anchored else "(?:.*/)?" + body)
    return _Rule(regex=regex, negate=negate, dir_only=dir_only)


class IgnoreRules:
    """Decides whether a workspace-relative path is ignored.

    ``lines`` are the root ``.gitignore``; with ``root`` set, the ``.gitignore`` of each
    subdirectory is read on first use (cached), so one instance serves one search.
    """

    __slots__ = ("_root", "_by_dir")

    def __init__(self, lines: list[str] | tuple[str, ...] = (), *, root: Path | None = None) -> None:
        self._root = root
        self._by_dir: dict[str, tuple[_Rule, ...]] = {"": _parse_lines(lines)}

    def _dir_rules(self, dir_rel: str) -> tuple[_Rule, ...]:
        rules = self._by_dir.get(dir_rel)
        if rules is None:
            rules = _parse_lines(_read_lines(self._root, dir_rel)) if self._root is not None else ()
            self._by_dir[dir_rel] = rules
        return rules

    def _match(self, rel: str, is_dir: bool) -> bool | None:
        parts = rel.split("/")
        verdict: bool | None = None
        # Each directory above ``rel`` in turn, the root first: deeper files are read
        # later, so their matches win ("last matching rule wins" across files too).
        for depth in range(len(parts)):
            rules = self._dir_rules("/".join(parts[:depth]))
            if not rules:
                continue
            sub = "/".join(parts[depth:])
            for rule in rules:
                if rule.dir_only and not is_dir:
                    continue
                if rule.regex.match(sub):
                    verdict = not rule.negate
        return verdict

    def ignored(self, rel: str, *, is_dir: bool) -> bool:
        """Whether ``rel`` (POSIX, relative to the workspace) or one of its parents is ignored."""
        parts = [p for p in rel.split("/") if p not in ("", ".")]
        for i, name in enumerate(parts):
            last = i == len(parts) - 1
            if (is_dir or not last) and (
                name in ALWAYS_SKIPPED_DIRS or "/".join(parts[: i + 1]) in ALWAYS_SKIPPED_PATHS
            ):
                return True
            if self._match("/".join(parts[: i + 1]), is_dir or not last):
                return True
        return False

    def entry_ignored(self, rel: str, *, is_dir: bool) -> bool:
        """Like ``ignored`` but assumes the parents were already checked (for walks)."""
        name = rel.rsplit("/", 1)[-1]
        if is_dir and (name in ALWAYS_SKIPPED_DIRS or rel in ALWAYS_SKIPPED_PATHS):
            return True
        return bool(self._match(rel, is_dir))


def _parse_lines(lines: list[str] | tuple[str, ...]) -> tuple[_Rule, ...]:
    return tuple(r for r in map(_parse_line, lines) if r is not None)


_GITIGNORE_MAX_BYTES = 1024 * 1024


def _read_lines(root: Path, dir_rel: str) -> list[str]:
    """The lines of ``root/dir_rel/.gitignore``; none if missing, unreadable or outside."""
    try:
        with open_file(root, f"{dir_rel}/.gitignore" if dir_rel else ".gitignore") as opened:
            data = opened.file.read(_GITIGNORE_MAX_BYTES)
    except (ToolError, OSError):
        return []  # missing, not a file, unreadable, or a link leading out of the workspace
    return data.decode("utf-8", errors="replace").splitlines()


def load_ignore_rules(root: Path) -> IgnoreRules:
    """Rules from ``root/.gitignore``, and from nested ``.gitignore`` files as they are met."""
    return IgnoreRules(_read_lines(root, ""), root=root)
