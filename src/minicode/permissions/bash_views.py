"""How ``bash_check`` describes one simple command to the permission rules: the result types
(``CommandView``, ``PathArg``, ``WriteTarget``, ``BashAnalysis``) and the pure helpers that
build a view from a parsed command — its canonical text, the texts deny rules are tried on,
the paths its arguments may name, and where a ``cd`` leaves the later commands. Pure.
"""

from __future__ import annotations

import re
import shlex
from typing import Sequence

from dataclasses import dataclass
from minicode.permissions.arg_paths import Resolver, ShellContext, absolute
from minicode.permissions.families import NAMED_FILE_CHANGERS, is_writer
from minicode.permissions.patterns import STAR
from minicode.permissions.shell_words import SimpleCommand, Word
from minicode.permissions.word_templates import command_template, name_templates
from minicode.permissions.wrappers import WRAPPERS

__all__ = ["STAR", "TOKEN_SPLIT", "BashAnalysis", "CommandView", "PathArg", "WriteTarget",
           "command_view", "next_dirs", "render_words", "short"]

TOKEN_SPLIT = re.compile(r"[\s'\"(),;:=<>|&`]+")


@dataclass(frozen=True, slots=True)
class PathArg:
    """A word that may name a path: as ``shown``, and the absolute paths it can name
    (None: computed at run time, or relative to a directory no one can know)."""

    shown: str
    paths: tuple[str, ...] | None


@dataclass(frozen=True, slots=True)
class CommandView:
    text: str
    """What allow rules must match: assignments, then the words (canonical quoting)."""
    deny_texts: tuple[str, ...]
    """What deny rules are tried on (``STAR`` for a computed word)."""
    words: tuple[str, ...]
    """The words' values (for the suggested rule)."""
    has_assignments: bool = False
    runs_other: bool = False
    """A wrapper (sudo, xargs, bash -c …): the commands it runs are views of their own."""
    writer: bool = False
    """It writes files named (or held) by its arguments (``families``)."""
    args: tuple[PathArg, ...] = ()
    protected: str | None = None
    """What protected state it changes (``git config``): asked every time."""


@dataclass(frozen=True, slots=True)
class WriteTarget:
    """A file a redirection writes: as written, and its absolute lexical paths (one per
    directory the command may run in)."""

    shown: str
    paths: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class BashAnalysis:
    source: str
    commands: tuple[CommandView, ...]
    writes: tuple[WriteTarget, ...]
    """Files redirections write."""
    unclear: tuple[str, ...]
    """Why the command is not fully understood (empty: every part was)."""
    deny_only: tuple[CommandView, ...] = ()
    """Commands a wrapper may run that could not be read exactly: tried by deny rules only."""
    deny_names: tuple[str, ...] = ()
    """Redirection targets relative to an unknown directory: deny rules see their names."""
    extra_args: tuple[PathArg, ...] = ()
    """Paths named where a command may read them: here-strings, here-documents, ``for`` lists."""
    hidden: tuple[str, ...] = ()
    """The reasons in ``unclear`` that mean a command may run that no rule saw: a computed
    command name, a parse that stopped, a shell reading its input, a wrapper whose command
    is unknown (not: a path minicode cannot resolve). While deny rules are in force, no
    broad rule allows such a command."""


def render_words(words: Sequence[Word]) -> str:
    """Words as one canonical line: static words quoted only where needed (``shlex.quote``),
    words with expansions as written. ``git  "status"`` and ``git status`` look the same."""
    return " ".join(shlex.quote(w.value) if w.static else w.raw for w in words)


def command_view(command: SimpleCommand, name: str, dirs: list[str] | None, resolver: Resolver,
                 context: ShellContext) -> CommandView:
    words = command.words
    bare = render_words(words)
    text = render_words((*command.assignments, *words)) if command.assignments else bare
    writer = is_writer(name)
    return CommandView(
        text, deny_texts(command), tuple(w.value for w in words),
        has_assignments=bool(command.assignments), runs_other=name in WRAPPERS, writer=writer,
        args=tuple(path_args(words[1:], writer or name in NAMED_FILE_CHANGERS, dirs, resolver, context)),
    )


def deny_texts(command: SimpleCommand) -> tuple[str, ...]:
    """The command as written, without its assignments, and named by its basename. When a
    word is computed anywhere (``r${x}m``, ``/bin/r?``, ``git pu$x``), these are raw
    templates (``word_templates``): each computed segment a ``STAR``, and the name every
    basename it can have."""
    words, assignments = command.words, command.assignments
    head = words[0]
    if all(w.static for w in (*assignments, *words)):
        name = head.value.rsplit("/", 1)[-1] or head.value
        texts = [render_words((*assignments, *words)), render_words(words),
                 render_words((Word(name, name), *words[1:]))]
        return tuple(dict.fromkeys(texts))
    texts = [command_template(assignments, words), command_template((), words),
             *(command_template((), words, name) for name in name_templates(head))]
    return tuple(dict.fromkeys(texts))


def path_args(args: Sequence[Word], writer: bool, dirs: list[str] | None, resolver: Resolver,
               context: ShellContext) -> list[PathArg]:
    """The paths the arguments may name: each word, the part after ``=``, a value attached
    to a short option (``-t.git``), and path-like tokens inside a longer word (a script)."""
    found: list[PathArg] = []
    names = context.names
    for word in args:
        if not word.static:
            paths = resolver.paths(word, dirs)
            found.append(PathArg(word.raw, tuple(paths) if paths is not None else None))
            continue
        value = word.value
        interesting = any(n in value for n in names)
        if not value.startswith("-") and (writer or interesting):
            paths = absolute([value], dirs)
            found.append(PathArg(value, tuple(paths) if paths is not None else None))
        if interesting:
            for token in sub_tokens(value):
                paths = absolute([token], dirs)
                found.append(PathArg(token, tuple(paths) if paths is not None else None))
    return found


def sub_tokens(value: str) -> list[str]:
    tokens = [t for t in TOKEN_SPLIT.split(value) if t and t != value]
    if value.startswith("-") and not value.startswith("--"):
        tokens.extend(value[k:] for k in range(2, len(value)))  # -t.git, -rt.git
    return [t for t in dict.fromkeys(tokens) if t]


_DIR_OPTIONS = frozenset({"-L", "-P", "-e", "-@", "--"})


def next_dirs(name: str, args: Sequence[Word], dirs: list[str] | None, resolver: Resolver,
               context: ShellContext) -> list[str] | None:
    """The directories later commands may run in (a ``cd`` may fail: the old ones stay)."""
    if name not in ("cd", "pushd", "popd") or dirs is None:
        return dirs
    operands = [w for w in args if not (w.static and w.value in _DIR_OPTIONS)]
    if name == "popd" or (name == "pushd" and not operands):
        return None
    if not operands:
        return list(dict.fromkeys([*dirs, context.home])) if context.home else None
    target = operands[0]
    if target.static and (target.value == "-" or re.fullmatch(r"[+-][0-9]+", target.value)):
        return None
    texts = resolver.values(target, dirs)
    if texts is None:
        return None
    cdpath = [p for p in context.env.get("CDPATH", "").split(":") if p]
    found = list(dirs)
    for text in texts:
        bases = dirs if text.startswith(("/", "./", "../")) or text in (".", "..") or not cdpath else [*dirs, *cdpath]
        resolved = absolute([text], bases)
        if resolved is None:
            return None
        found.extend(resolved)
    return list(dict.fromkeys(found))


def short(text: str, limit: int = 40) -> str:
    one_line = " ".join(text.split())
    return one_line if len(one_line) <= limit else one_line[: limit - 1] + "…"

