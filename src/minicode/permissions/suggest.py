"""The narrowest sensible rule for "always allow … in this project". Pure.

bash: the command's first word(s) and `` *``: ``pytest -q`` → ``bash(pytest *)``,
``npm run test -- -u`` → ``bash(npm run test *)``, ``git status -s`` → ``bash(git status *)``,
``python3 -m pytest`` → ``bash(python3 -m pytest *)``. No rule is offered for what no
narrow rule can cover: a compound command, a redirection to a file, variable assignments,
a command that runs other commands (sudo, xargs, bash -c …), interpreters given code
(``python3 -c``), and a few commands whose every use can destroy or leak (``rm``, ``dd``,
``curl``…) — those are asked each time unless the user writes a rule by hand.

edit/write: the file's directory (``edit(src/app/**)``), or the file itself at the
workspace root (``write(/notes.md)``); nothing inside ``.git/`` or ``.minicode/``.
"""

from __future__ import annotations

import re
from typing import Sequence

from minicode.permissions.bash_check import BashAnalysis, CommandView

__all__ = ["suggest_bash", "suggest_command", "suggest_path"]

_SUBCOMMAND_TOOLS = frozenset({
    "git", "npm", "pnpm", "yarn", "bun", "npx", "cargo", "go", "docker", "podman", "kubectl", "helm", "pip",
    "pip3", "uv", "poetry", "pdm", "hatch", "gh", "dotnet", "mvn", "gradle", "gradlew", "rustup", "brew",
    "conda", "mamba", "tox", "nox", "just", "make", "deno", "bundle", "rake", "mix", "composer", "swift",
    "terraform", "nix", "ruff", "dmypy", "pre-commit", "alembic", "django-admin",
})
_RUNNERS = frozenset({
    ("npm", "run"), ("npm", "run-script"), ("pnpm", "run"), ("yarn", "run"), ("bun", "run"), ("uv", "run"),
    ("poetry", "run"), ("pdm", "run"), ("hatch", "run"), ("docker", "compose"), ("podman", "compose"),
    ("uv", "pip"), ("go", "tool"),
})
_INTERPRETER = re.compile(r"(python[0-9.]*|node|ruby|perl|php)")
_NEVER = frozenset({
    "rm", "rmdir", "dd", "shred", "mkfs", "truncate", "kill", "killall", "pkill", "reboot", "shutdown", "halt",
    "poweroff", "chmod", "chown", "source", ".", "alias", "export", "unset", "set", "trap", "ssh", "scp",
    "rsync", "curl", "wget", "nc", "ncat", "socat", "mv",
})
_SUBCOMMAND = re.compile(r"[a-z0-9][a-z0-9._:+-]*")
_SAFE_WORD = re.compile(r"[A-Za-z0-9_.@%+=,/:-]+")


def suggest_bash(analysis: BashAnalysis) -> str | None:
    """The rule for a command that is one plain simple command, else None."""
    if analysis.unclear or analysis.writes or len(analysis.commands) != 1:
        return None
    return suggest_command(analysis.commands[0])


def suggest_command(view: CommandView) -> str | None:
    """The narrowest sensible ``bash(… *)`` rule for one simple command, or None."""
    if view.has_assignments or view.runs_other or not view.words:
        return None
    prefix = _prefix(view.words)
    if prefix is None or not all(_SAFE_WORD.fullmatch(w) for w in prefix):
        return None
    return f"bash({' '.join(prefix)} *)"


def _prefix(words: Sequence[str]) -> list[str] | None:
    head = words[0]
    name = head.rsplit("/", 1)[-1]
    if name in _NEVER or not name:
        return None
    if _INTERPRETER.fullmatch(name):
        return _interpreter(words)
    if name not in _SUBCOMMAND_TOOLS:
        return [head]
    depth = 2 if len(words) > 2 and (name, words[1]) in _RUNNERS else 1
    subcommands = list(words[1 : 1 + depth])
    if len(subcommands) < depth or not all(_SUBCOMMAND.fullmatch(w) for w in subcommands):
        return None  # `git` alone or `git -C dir …`: "git *" would allow every git command
    return [head, *subcommands]


def _interpreter(words: Sequence[str]) -> list[str] | None:
    """``python3 -m pytest`` → 3 words; ``python3 tool.py`` → 2; ``python3 -c …`` → None."""
    if len(words) >= 3 and words[1] == "-m" and _SUBCOMMAND.fullmatch(words[2].lower()):
        return list(words[:3])
    if len(words) >= 2 and not words[1].startswith("-"):
        return list(words[:2])
    return None


def suggest_path(tool: str, relative: str | None) -> str | None:
    """``edit(src/app/**)`` for ``src/app/x.py``; ``write(/notes.md)`` at the root; or None."""
    if not relative or relative in (".", "..") or relative.startswith("../"):
        return None
    if any(c in relative for c in "*?[]()\\") or any(ord(c) < 32 for c in relative):
        return None
    parts = relative.split("/")
    if parts[0] in (".git", ".minicode") or len(parts) > 1 and not all(parts[:-1]):
        return None
    if len(parts) == 1:
        return f"{tool}(/{relative})"  # the leading / anchors it at the workspace root
    return f"{tool}({'/'.join(parts[:-1])}/**)"
