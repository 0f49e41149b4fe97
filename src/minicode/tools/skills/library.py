"""Finding the skills: the four skill directories, each skill's SKILL.md read safely, precedence.

Where (highest precedence first; the first skill of a name wins, the others are named in a
notice):

1. ``$XDG_CONFIG_HOME/minicode/skills`` (default ``~/.config/minicode/skills``) — the user's,
2. ``~/.claude/skills`` — the user's, shared with Claude Code,
3. ``.agents/skills`` of the workspace — the project's (the vendor-neutral place),
4. ``.claude/skills`` of the workspace — the project's.

User skills win over project skills, as in Claude Code: a cloned repository must not be able
to replace a skill the user installed by shipping one of the same name. Project skills are
marked as such everywhere they are shown (``Skill.origin``): their text comes with the
repository and is untrusted.

How: every file is opened through the tools' confined access (``tools.fsroot``: by
descriptor, never following a symlink out): a project's skills are confined to the workspace,
a user's to their skills directory. So a skill folder or SKILL.md that is a symlink leading
out is skipped with a notice, a FIFO is never blocked on, a file swapped while it is read
cannot redirect the read. A SKILL.md over ``SKILL_MAX_BYTES``, with a NUL byte (binary), not
UTF-8, or with invalid front matter is skipped with a notice naming the file and what is
wrong; none of it stops anything. At most ``MAX_SKILLS`` are kept. Blocking: run it in a thread.
Without any skill directory (the usual case) it costs four ``lstat`` calls and loads nothing.
"""

from __future__ import annotations

import os
import posixpath
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Mapping

from minicode.errors import ToolError

if TYPE_CHECKING:
    from minicode.tools.fsroot import OpenedDir

__all__ = ["MAX_SKILLS", "SKILL_FILE", "SKILL_MAX_BYTES", "Skill", "SkillLibrary", "SkillRoot", "discover_skills",
           "skill_roots"]

SKILL_FILE = "SKILL.md"
SKILL_MAX_BYTES = 64 * 1024
"""The largest SKILL.md read (the format recommends a body under 5,000 tokens, ~20 KB)."""
MAX_SKILLS = 200
"""Skills kept in all (each costs catalog room); the rest are named in one notice."""
_MAX_ENTRIES = 1000
"""Entries of one skills directory looked at (a directory of junk must not stall a start)."""


@dataclass(frozen=True, slots=True)
class SkillRoot:
    """One skills directory: ``rel`` below ``confine``, the directory every read stays in."""

    label: str
    """How it is shown: ``.agents/skills``, ``~/.claude/skills``."""
    confine: Path
    rel: str
    project: bool

    @property
    def kind(self) -> str:
        return "project" if self.project else "user"


@dataclass(frozen=True, slots=True)
class Skill:
    """A valid skill: what the catalog shows and where its files are."""

    name: str
    description: str
    root: SkillRoot
    folder: str
    """The skill's folder relative to ``root.confine``, symlinks resolved (reads stay in it)."""

    @property
    def origin(self) -> str:
        """``project (.agents/skills)`` or ``user (~/.claude/skills)``."""
        return f"{self.root.kind} ({self.root.label})"

    @property
    def location(self) -> str:
        """The folder as a command names it: workspace-relative for a project skill, else absolute."""
        return self.folder if self.root.project else str(self.root.confine / self.folder)


@dataclass(frozen=True, slots=True)
class SkillLibrary:
    """The skills found (sorted by name) and what was wrong on the way, one notice each."""

    skills: tuple[Skill, ...] = ()
    notices: tuple[str, ...] = ()
    roots: tuple[SkillRoot, ...] = ()

    def get(self, name: str) -> Skill | None:
        return next((s for s in self.skills if s.name == name), None)


def skill_roots(workspace: Path, env: Mapping[str, str]) -> tuple[SkillRoot, ...]:
    """The skills directories in precedence order (user ones only when the environment names a
    home; a relative HOME or XDG_CONFIG_HOME names none, as for the per-user configuration)."""
    home = env.get("HOME", "") if Path(env.get("HOME", "") or ".").is_absolute() else ""
    roots: list[SkillRoot] = []
    xdg = env.get("XDG_CONFIG_HOME", "")
    config = Path(xdg) if xdg and Path(xdg).is_absolute() else (Path(home) / ".config" if home else None)
    if config is not None:
        roots.append(SkillRoot(_shown_path(config / "minicode" / "skills", home), config / "minicode" / "skills",
                               ".", project=False))
    if home:
        roots.append(SkillRoot("~/.claude/skills", Path(home) / ".claude" / "skills", ".", project=False))
    roots += [SkillRoot(rel, workspace, rel, project=True) for rel in (".agents/skills", ".claude/skills")]
    return tuple(roots)


def discover_skills(workspace: Path, env: Mapping[str, str]) -> SkillLibrary:
    """Every skill of the four directories (see the module doc); never raises for what is on disk."""
    roots = skill_roots(workspace, env)
    chosen: dict[str, Skill] = {}
    notices: list[str] = []
    dropped = 0
    for root in roots:
        for skill in _root_skills(root, notices):
            first = chosen.get(skill.name)
            if first is not None:
                notices.append(f"skill {skill.name} in {root.label} is not used: the one in {first.root.label} "
                               "has the same name (user skills win over project ones)")
            elif len(chosen) >= MAX_SKILLS:
                dropped += 1
            else:
                chosen[skill.name] = skill
    if dropped:
        notices.append(f"{dropped} skill(s) not used: at most {MAX_SKILLS} are")
    skills = tuple(sorted(chosen.values(), key=lambda s: s.name))
    return SkillLibrary(skills, tuple(notices), roots)


def _root_skills(root: SkillRoot, notices: list[str]) -> list[Skill]:
    """The valid skills of one directory, sorted by folder name; problems go to ``notices``."""
    if not os.path.lexists(root.confine / root.rel):
        return []  # the usual case: no such directory (nothing more is loaded or opened for it)
    from minicode.tools.fsroot import PathMissing, open_directory  # what exists is read confined

    try:
        with open_directory(root.confine, root.rel) as opened:
            names = _folder_names(opened, root, notices)
    except PathMissing:
        return []  # no such directory: nothing to say
    except ToolError as e:
        notices.append(f"skills in {root.label} are not read: {e}")
        return []
    except OSError as e:
        notices.append(f"skills in {root.label} are not read: {e.strerror or e}")
        return []
    found = []
    for name in names:
        skill = _read_skill(root, name, notices)
        if skill is not None:
            found.append(skill)
    return found


def _folder_names(opened: OpenedDir, root: SkillRoot, notices: list[str]) -> list[str]:
    """The entries that may be skill folders: directories and symlinks, not hidden, sorted."""
    names: list[str] = []
    with os.scandir(opened.fd) as entries:
        for count, entry in enumerate(entries):
            if count >= _MAX_ENTRIES:
                notices.append(f"{root.label} has more than {_MAX_ENTRIES:,} entries: only the first are looked at")
                break
            if entry.name.startswith("."):
                continue
            try:
                mode = entry.stat(follow_symlinks=False).st_mode
            except OSError:
                continue
            if stat.S_ISDIR(mode) or stat.S_ISLNK(mode):
                names.append(entry.name)
    return sorted(names)


def _read_skill(root: SkillRoot, name: str, notices: list[str]) -> Skill | None:
    from minicode.tools.fsroot import NotARegularFile, PathMissing, open_file
    from minicode.tools.skills.frontmatter import FrontMatterError, parse_skill

    shown = f"{root.label}/{name}/{SKILL_FILE}"
    path = _join(root.rel, name, SKILL_FILE)
    try:
        with open_file(root.confine, path) as opened:
            if opened.stat.st_size > SKILL_MAX_BYTES:
                raise _Unusable(f"it is {opened.stat.st_size:,} bytes; the limit is {SKILL_MAX_BYTES:,}")
            data = opened.file.read(SKILL_MAX_BYTES + 1)
            folder = posixpath.dirname(opened.place.rel)
        if len(data) > SKILL_MAX_BYTES:
            raise _Unusable(f"it grew past {SKILL_MAX_BYTES:,} bytes while read")
        if b"\0" in data:
            raise _Unusable("it is binary (it has a NUL byte)")
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as e:
            raise _Unusable(f"it is not UTF-8 text (a bad byte at offset {e.start:,})") from None
        parsed = parse_skill(text, name)
    except PathMissing:
        return None  # a folder without SKILL.md is not a skill (a helper directory, say)
    except NotARegularFile:
        notices.append(f"skill {shown} is skipped: it is not a regular file")
        return None
    except (ToolError, _Unusable, FrontMatterError) as e:
        notices.append(f"skill {shown} is skipped: {e}")
        return None
    except OSError as e:
        notices.append(f"skill {shown} is skipped: it cannot be read ({e.strerror or e})")
        return None
    return Skill(parsed.name, " ".join(parsed.description.split()), root, folder)


class _Unusable(Exception):
    """A SKILL.md that was read but is not text minicode uses."""


def _join(*parts: str) -> str:
    return "/".join(p for p in parts if p not in ("", "."))


def _shown_path(path: Path, home: str) -> str:
    """``path`` with the home directory written as ``~``."""
    text = str(path)
    if home and (text == home or text.startswith(home.rstrip("/") + "/")):
        return "~" + text[len(home.rstrip("/")) :]
    return text
