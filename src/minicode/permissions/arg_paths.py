"""What a shell word can expand to, for checking the paths a command names. Pure.

``Resolver.values(word, dirs)`` gives the texts a word can become, or None when minicode
cannot know: ``$HOME``, ``~`` and ``$PWD`` (every directory the command may run in) are
expanded; a variable the script sets itself (``x=…``, ``for x in …``, ``export x=…``) takes each
value it is given there — and its value from the environment, as the use may come first;
other variables take their value from the environment (not ``OLDPWD`` and the like, which
bash itself changes), and an unset one is unknown; ``$(…)``, a value set by ``read`` and
the like, and expansions with operators are unknown. Brace expansion (``{a,b}``, ``{1..3}``)
is applied. ``paths`` turns the texts into absolute, normalised paths against the possible
working directories (None: a relative path after a change to an unknown directory).
"""

from __future__ import annotations

import os
import re
from typing import Mapping, Sequence

from dataclasses import dataclass, field
from minicode.permissions.shell_words import Expansion, Word

__all__ = ["Bindings", "Resolver", "ShellContext"]

_MAX_VALUES = 16
_MAX_DEPTH = 4
_BRACE = re.compile(r"\{([^{}]*)\}")
_NUMERIC = frozenset({"RANDOM", "SRANDOM", "SECONDS", "LINENO", "BASHPID", "PPID", "UID", "EUID", "SHLVL",
                      "EPOCHSECONDS", "BASH_SUBSHELL", "OPTIND", "COLUMNS", "LINES", "HISTCMD"})
_SHELL_SET = frozenset({"OLDPWD", "DIRSTACK", "BASH", "BASH_SOURCE", "HISTFILE", "FUNCNAME", "PIPESTATUS",
                        "GROUPS", "BASH_LINENO", "BASH_REMATCH", "MAPFILE", "REPLY", "COPROC"})




@dataclass(frozen=True, slots=True)
class ShellContext:
    """Where a command runs: the workspace ``root``, ``home`` and the environment (values
    of variables the script does not set). ``names``: substrings that make a plain word
    worth resolving as a path (the basenames of the protected paths)."""

    root: str = "/"
    home: str | None = None
    env: Mapping[str, str] = field(default_factory=dict)
    names: frozenset[str] = frozenset()


Bindings = Mapping[str, Sequence[Word] | None]
"""A variable the script sets → the words it is set to (None: a value no one can know)."""


class Resolver:
    def __init__(self, context: ShellContext, bindings: Bindings) -> None:
        self.context = context
        self.bindings = bindings

    def values(self, word: Word, dirs: Sequence[str] | None, depth: int = 0) -> list[str] | None:
        """The texts ``word`` can expand to, or None (see the module docstring)."""
        if word.static:
            return [word.value]
        texts = [""]
        for part in word.pieces:
            options = [part] if isinstance(part, str) else self._expansion(part, dirs, depth)
            if options is None:
                return None
            texts = [t + o for t in texts for o in options]
            if len(texts) > _MAX_VALUES:
                return None
        return _braces(texts) if word.brace else texts

    def paths(self, word: Word, dirs: Sequence[str] | None) -> list[str] | None:
        """Absolute, normalised paths ``word`` can name, or None."""
        texts = self.values(word, dirs)
        if texts is None:
            return None
        return absolute(texts, dirs)

    def _expansion(self, part: Expansion, dirs: Sequence[str] | None, depth: int) -> list[str] | None:
        if part.kind == "arith":
            return ["0"]  # numbers only (the parser refuses variables in arithmetic)
        if part.kind == "process":
            return ["/dev/fd/63"]
        if part.kind == "tilde":
            home = self.context.home
            return [home] if part.name == "" and home else None
        if part.kind != "param" or not part.plain:
            return None  # $(…), or ${x%…}/${x:-…}: not worth guessing
        return self._parameter(part.name, dirs, depth)

    def _parameter(self, name: str, dirs: Sequence[str] | None, depth: int) -> list[str] | None:
        if name == "PWD":
            return list(dirs) if dirs is not None else None
        if name == "HOME" and name not in self.bindings:
            home = self.context.home
            return [home] if home else None
        if name in "?$!#-0":
            return ["0"]
        env = self.context.env
        if name in self.bindings:
            words = self.bindings[name]
            if words is None or depth >= _MAX_DEPTH:
                return None
            found: list[str] = [env[name]] if name in env else []
            for word in words:
                values = self.values(word, dirs, depth + 1)
                if values is None:
                    return None
                found.extend(values)
            return found[:_MAX_VALUES] if len(found) <= _MAX_VALUES else None
        if name in _NUMERIC:
            return ["0"]
        if name in env and name not in _SHELL_SET:
            return [env[name]]
        return None  # unset here, or set by bash itself (OLDPWD after a cd): not guessed


def absolute(texts: Sequence[str], dirs: Sequence[str] | None) -> list[str] | None:
    """Each text as an absolute, normalised path against every possible directory."""
    found: list[str] = []
    for text in texts:
        if text.startswith("/"):
            found.append(os.path.normpath(text))
        elif dirs is None:
            return None
        else:
            found.extend(os.path.normpath(os.path.join(d, text)) for d in dirs)
    return list(dict.fromkeys(found))


def _braces(texts: list[str]) -> list[str] | None:
    """bash's brace expansion, for the simple forms: ``{a,b,c}`` and ``{1..3}``/``{a..c}``."""
    done: list[str] = []
    pending = list(texts)
    while pending:
        text = pending.pop()
        match = next((m for m in _BRACE.finditer(text) if "," in m.group(1) or ".." in m.group(1)), None)
        if match is None:
            done.append(text)
            continue
        items = _brace_items(match.group(1))
        if items is None:
            return None
        pending.extend(text[: match.start()] + item + text[match.end() :] for item in items)
        if len(done) + len(pending) > _MAX_VALUES:
            return None
    return done


def _brace_items(inner: str) -> list[str] | None:
    if "," in inner:
        return inner.split(",")
    low, _, high = inner.partition("..")
    if low.lstrip("-").isdigit() and high.lstrip("-").isdigit():
        a, b = int(low), int(high)
        if abs(b - a) >= _MAX_VALUES:
            return None
        step = 1 if b >= a else -1
        return [str(n) for n in range(a, b + step, step)]
    if len(low) == 1 and len(high) == 1:
        a, b = ord(low), ord(high)
        if abs(b - a) >= _MAX_VALUES:
            return None
        step = 1 if b >= a else -1
        return [chr(n) for n in range(a, b + step, step)]
    return None  # an odd form: not guessed
