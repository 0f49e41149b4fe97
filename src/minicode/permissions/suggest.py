"""The narrowest sensible rule for "always allow … in this project". Pure.

bash: the command's first word(s) and `` *``: ``pytest -q`` → ``bash(pytest *)``,
``npm run test -- -u`` → ``bash(npm run test *)``, ``git status -s`` → ``bash(git status *)``,
``python3 -m pytest`` → ``bash(python3 -m pytest *)``, ``./run_tests.sh`` → ``bash(./run_tests.sh *)``.
A rule is offered only for the command families of ``families.SUGGESTABLE`` (test runners,
linters, builders and package managers with their usual subcommands, version-control
subcommands that take no destination or code, read-only inspectors) and the project's own
scripts — never for a command that writes files its arguments name or runs code given in
them (``cp``, ``tar``, ``sed``, ``python3 -c``, ``git config`` …: such a rule would let the model
write the rules files or plant a git hook), nor for a compound command, a redirection to a
file, variable assignments, a command that runs other commands (sudo, xargs, bash -c …) or
one not fully understood. Those are asked each time unless the user writes a rule by hand.

edit/write: the file's directory (``edit(src/app/**)``), or the file itself at the
workspace root (``write(./notes.md)``); nothing inside ``.git/`` or ``.minicode/``.
"""

from __future__ import annotations

import re
from typing import Sequence

from minicode.permissions.bash_check import BashAnalysis, CommandView
from minicode.permissions.families import SUGGESTABLE, SUGGESTABLE_SUBCOMMANDS

__all__ = ["suggest_bash", "suggest_command", "suggest_path"]

_RUNNERS = frozenset({
    ("npm", "run"), ("npm", "run-script"), ("pnpm", "run"), ("yarn", "run"), ("uv", "run"), ("uv", "pip"),
    ("poetry", "run"), ("pdm", "run"), ("hatch", "run"), ("docker", "compose"), ("podman", "compose"),
    ("go", "mod"), ("bundle", "exec"),
})
_INTERPRETER = re.compile(r"(python[0-9.]*|node|ruby|perl|php)")
_MODULES = frozenset({
    "pytest", "unittest", "mypy", "ruff", "black", "isort", "flake8", "pylint", "pyright", "coverage", "pip",
    "build", "tox", "nox", "doctest", "compileall", "pydoc", "json.tool", "timeit", "cProfile", "pstats",
    "pre_commit", "bandit", "django", "uvicorn", "flask",
})
_SUBCOMMAND = re.compile(r"[a-z0-9][a-z0-9._:+-]*")
_SAFE_WORD = re.compile(r"[A-Za-z0-9_.@%+=,/:-]+")
_PROJECT_SCRIPT = re.compile(r"(\./)?[A-Za-z0-9_.-]+(/[A-Za-z0-9_.-]+)*")


def suggest_bash(analysis: BashAnalysis) -> str | None:
    """The rule for a command that is one plain simple command, else None."""
    if analysis.unclear or analysis.writes or len(analysis.commands) != 1:
        return None
    return suggest_command(analysis.commands[0])


def suggest_command(view: CommandView) -> str | None:
    """The narrowest sensible ``bash(… *)`` rule for one simple command, or None."""
    if view.has_assignments or view.runs_other or view.protected or not view.words:
        return None
    prefix = _prefix(view.words, view.writer)
    if prefix is None or not all(_SAFE_WORD.fullmatch(w) for w in prefix):
        return None
    return f"bash({' '.join(prefix)} *)"


def _prefix(words: Sequence[str], writer: bool) -> list[str] | None:
    head = words[0]
    name = head.rsplit("/", 1)[-1]
    if not name:
        return None
    if _INTERPRETER.fullmatch(name):
        return _interpreter(words)
    if "/" in head and not head.startswith("/"):
        return [head] if _PROJECT_SCRIPT.fullmatch(head) and ".." not in head.split("/") else None
    if writer or name not in SUGGESTABLE:
        return None
    allowed = SUGGESTABLE_SUBCOMMANDS.get(name)
    if allowed is None:
        return [head]
    depth = 2 if len(words) > 2 and (name, words[1]) in _RUNNERS else 1
    subcommands = list(words[1 : 1 + depth])
    if len(subcommands) < depth or not all(_SUBCOMMAND.fullmatch(w) for w in subcommands):
        return None  # `git` alone or `git -C dir …`: "git *" would allow every git command
    if allowed and subcommands[0] not in allowed:
        return None  # git config, git apply, npm exec …
    return [head, *subcommands]


def _interpreter(words: Sequence[str]) -> list[str] | None:
    """``python3 -m pytest`` → 3 words (known modules only); ``python3 tool.py`` → 2 (a
    project file); ``python3 -c …`` → None."""
    if len(words) >= 3 and words[1] == "-m" and words[2] in _MODULES:
        return list(words[:3])
    if len(words) >= 2 and not words[1].startswith(("-", "/")) and _PROJECT_SCRIPT.fullmatch(words[1]):
        return None if ".." in words[1].split("/") else list(words[:2])
    return None


def suggest_path(tool: str, relative: str | None) -> str | None:
    """``edit(src/app/**)`` for ``src/app/x.py``; ``write(./notes.md)`` at the root; or None."""
    if not relative or relative in (".", "..") or relative.startswith("../"):
        return None
    if any(c in relative for c in "*?[]()\\") or any(ord(c) < 32 for c in relative):
        return None
    parts = relative.split("/")
    if parts[0] in (".git", ".minicode") or len(parts) > 1 and not all(parts[:-1]):
        return None
    if len(parts) == 1:
        return f"{tool}(./{relative})"  # "./" anchors it at the workspace root (a bare name matches at any depth; "/" looks absolute)
    return f"{tool}({'/'.join(parts[:-1])}/**)"
