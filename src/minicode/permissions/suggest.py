"""The narrowest sensible rule for "always allow … in this project". Pure.

bash: the command's first word(s) and `` *``: ``pytest -q`` → ``bash(pytest *)``,
``npm run test -- -u`` → ``bash(npm run test *)``, ``git status -s`` → ``bash(git status *)``,
``python3 -m pytest`` → ``bash(python3 -m pytest *)``, ``./run_tests.sh`` → ``bash(./run_tests.sh *)``.
The `` *`` form is offered only for programs safe with any arguments (``families.SUGGESTABLE``:
test runners, linters, builders with their usual subcommands, version-control subcommands
that take no destination or code, read-only inspectors) and the project's own scripts. A
program that runs code given in its arguments or writes files they name (``awk``, ``sed``,
``make``, ``tee``, ``tar``, ``cp``, ``pip install``, ``docker run``, ``python3 -c`` …) is offered a
rule pinned to its exact words (``bash(awk '{print $1}' log.txt)``): as narrow in effect as in
name. Nothing is offered for a compound command, a redirection to a file, variable
assignments, a command that runs other commands (sudo, xargs, bash -c …), one not fully
understood, one that changes protected state, or one that destroys, leaks or schedules in
every use (``rm``, ``curl``, ``ssh``, ``crontab`` …); nor an exact rule whose text holds a ``*``.

edit/write: the file's directory (``edit(src/app/**)``), or the file itself at the
workspace root (``write(./notes.md)``); nothing inside ``.git/`` or ``.minicode/``.
"""

from __future__ import annotations

import re
from typing import Sequence

from minicode.permissions.bash_views import BashAnalysis, CommandView
from minicode.permissions.families import (
    FILE_WRITERS, NEVER_SUGGESTED, PROGRAM_RUNNERS, RUNNERS, SUGGESTABLE, SUGGESTABLE_SUBCOMMANDS, is_writer,
)
from minicode.permissions.patterns import STAR, PatternError, compile_command

__all__ = ["suggest_bash", "suggest_command", "suggest_path"]

_INTERPRETER = re.compile(r"(python[0-9.]*|node|ruby|perl|php)")
_MODULES = frozenset({
    "pytest", "unittest", "mypy", "ruff", "black", "isort", "flake8", "pylint", "pyright", "bandit",
})
"""``python3 -m X`` rules offered with ``*``: no module that runs code given in an argument
(``timeit``, ``cProfile``) or installs packages (``pip``)."""
_SUBCOMMAND = re.compile(r"[a-z0-9][a-z0-9._:+-]*")
_SAFE_WORD = re.compile(r"[A-Za-z0-9_.@%+=,/:-]+")
_PROJECT_SCRIPT = re.compile(r"(\./)?[A-Za-z0-9_.-]+(/[A-Za-z0-9_.-]+)*")
_MAX_EXACT = 160
_INPUT_CODE = frozenset({
    "sqlite3", "psql", "mysql", "gdb", "lldb", "expect", "jshell", "tclsh", "wish", "osascript", "powershell", "pwsh",
    "bc", "dc", "ed", "red", "ex", "ftp", "R", "irb", "ghci", "scala", "groovysh", "sh", "bash", "zsh", "dash", "ksh",
    "fish", "csh", "tcsh", "busybox",
})


def suggest_bash(analysis: BashAnalysis) -> str | None:
    """The rule for a command that is one plain simple command, else None."""
    if analysis.unclear or analysis.writes or len(analysis.commands) != 1:
        return None
    return suggest_command(analysis.commands[0])


def suggest_command(view: CommandView) -> str | None:
    """The narrowest sensible rule for one simple command: ``bash(PREFIX *)`` for a program
    safe with any arguments, else ``bash(EXACT WORDS)``, or None."""
    if view.has_assignments or view.runs_other or view.protected or not view.words:
        return None
    name = view.words[0].rsplit("/", 1)[-1]
    if name in NEVER_SUGGESTED:
        return None
    prefix = _prefix(view.words, view.writer)
    if prefix is not None and all(_SAFE_WORD.fullmatch(w) for w in prefix):
        return f"bash({' '.join(prefix)} *)"
    if _reads_code_from_input(name, view.words[1:]):
        return None  # bash(python3) with any rule for `echo …` would run `echo CODE | python3`
    return _exact(view.text)


def _reads_code_from_input(name: str, args: Sequence[str]) -> bool:
    """A code runner given no program or script operand reads its code from its input; some
    (``sqlite3 db``, ``psql``, ``gdb``) read commands from it whatever their arguments."""
    if name in _INPUT_CODE or _INTERPRETER.fullmatch(name) and not any(not a.startswith("-") for a in args):
        return True
    return is_writer(name) and name not in FILE_WRITERS and not any(not a.startswith("-") for a in args)


def _exact(text: str) -> str | None:
    """``bash(TEXT)`` when that rule allows this text and nothing else (no ``*`` in it)."""
    if len(text) > _MAX_EXACT or "*" in text or "\n" in text or any(ord(c) < 32 for c in text):
        return None
    try:
        pattern = compile_command(text)
    except PatternError:
        return None
    if not pattern.matches(text) or any(STAR in glob for glob in pattern.globs):
        return None
    return f"bash({text})"


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
    depth = 2 if len(words) > 2 and (name, words[1]) in RUNNERS else 1
    subcommands = list(words[1 : 1 + depth])
    if len(subcommands) < depth or not all(_SUBCOMMAND.fullmatch(w) for w in subcommands):
        return None  # `git` alone or `git -C dir …`: "git *" would allow every git command
    if subcommands[0] not in allowed:
        return None  # git config, git apply, npm exec, npm install …
    if depth == 2 and (name, words[1]) in PROGRAM_RUNNERS and _prefix(words[2:], False) is None:
        return None  # uv run python -c …: what it runs must be suggestable itself
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
