"""What a bash command does, as permission rules see it (``analyze_bash``).

Every simple command — nested ones and the commands wrappers run (``sudo rm``, ``xargs rm``,
``find -exec rm``, ``bash -c 'rm …'``) included — becomes a ``CommandView``: the text allow
rules must match, and the texts deny rules are tried on (also without variable assignments
and with the command's directory dropped, so ``FOO=1 /bin/rm`` is still ``rm``). Every file
a redirection writes is listed (it needs a ``write`` rule); ``unclear`` says what could not
be understood (then only the bare ``bash`` rule allows the command). Pure.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field
from typing import Sequence

from minicode.permissions.shell import parse_shell
from minicode.permissions.shell_words import SimpleCommand, Word
from minicode.permissions.wrappers import WRAPPERS, inner_of

__all__ = ["BashAnalysis", "CommandView", "analyze_bash", "render_words"]

MAX_NESTING = 6
"""``bash -c "sudo sh -c '…'"`` deeper than this is not followed (it is asked)."""
_HARMLESS = re.compile(r"/dev/(null|stdout|stderr|tty|fd/[0-9]+)")
_DIR_CHANGERS = frozenset({"cd", "pushd", "popd"})


@dataclass(frozen=True, slots=True)
class CommandView:
    text: str
    """What allow rules must match: assignments, then the words (canonical quoting)."""
    deny_texts: tuple[str, ...]
    """What deny rules are tried on (``text``, without assignments, basename of the command)."""
    words: tuple[str, ...]
    """The words' values (for the suggested rule)."""
    has_assignments: bool = False
    runs_other: bool = False
    """A wrapper (sudo, xargs, bash -c …): the commands it runs are views of their own."""


@dataclass(frozen=True, slots=True)
class BashAnalysis:
    source: str
    commands: tuple[CommandView, ...]
    writes: tuple[str, ...]
    """Files redirections write (as written: relative to the workspace, or absolute)."""
    unclear: tuple[str, ...]
    """Why the command is not fully understood (empty: every part was)."""


def render_words(words: Sequence[Word]) -> str:
    """Words as one canonical line: static words quoted only where needed (``shlex.quote``),
    words with expansions as written. ``git  "status"`` and ``git status`` look the same."""
    return " ".join(shlex.quote(w.value) if w.static else w.raw for w in words)


def analyze_bash(source: str) -> BashAnalysis:
    collector = _Collector()
    collector.script(source, 0, False)
    return BashAnalysis(source, tuple(collector.commands), tuple(collector.writes), tuple(collector.unclear))


@dataclass
class _Collector:
    commands: list[CommandView] = field(default_factory=list)
    writes: list[str] = field(default_factory=list)
    unclear: list[str] = field(default_factory=list)

    def note(self, reason: str) -> None:
        if reason not in self.unclear:
            self.unclear.append(reason)

    def script(self, text: str, depth: int, dir_changed: bool) -> None:
        if depth > MAX_NESTING:
            self.note("commands nested too deeply")
            return
        parsed = parse_shell(text)
        if parsed.unclear is not None:
            self.note(parsed.unclear)
        dir_changed = dir_changed or any(_changes_dir(c) for c in parsed.commands)
        for command in parsed.commands:
            self.command(command, depth, dir_changed)

    def command(self, command: SimpleCommand, depth: int, dir_changed: bool) -> None:
        for redirect in command.redirects:
            if redirect.writes and redirect.target is not None:
                self.write(redirect.target, dir_changed)
        if not command.words:
            if command.assignments:  # `X=1` alone changes what later commands do
                text = render_words(command.assignments)
                self.commands.append(CommandView(text, (text,), (), has_assignments=True))
            return
        head = command.words[0]
        if not head.static:
            self.note(f"the command name is computed ({_short(head.raw)})")
            return
        name = head.value.rsplit("/", 1)[-1] or head.value
        runs_other = name in WRAPPERS
        self.commands.append(_view(command, name, runs_other))
        if runs_other:
            self.wrapped(name, command.words[1:], depth, dir_changed)

    def wrapped(self, name: str, args: Sequence[Word], depth: int, dir_changed: bool) -> None:
        for inner in inner_of(name, args):
            if inner.unclear is not None:
                self.note(inner.unclear)
            for target in inner.writes:
                self.write(target, dir_changed)
            if inner.script is not None:
                self.script(inner.script, depth + 1, dir_changed)
            if inner.words:
                if depth + 1 > MAX_NESTING:
                    self.note("commands nested too deeply")
                else:
                    self.command(SimpleCommand((), inner.words, ()), depth + 1, dir_changed)

    def write(self, target: Word, dir_changed: bool) -> None:
        if not target.static:
            self.note(f"a redirection to a computed path ({_short(target.raw)})")
        elif _HARMLESS.fullmatch(target.value):
            return
        elif dir_changed and not target.value.startswith("/"):
            self.note(f"a redirection to {_short(target.value)} after the directory changed (cd)")
        else:
            self.writes.append(target.value)


def _view(command: SimpleCommand, name: str, runs_other: bool) -> CommandView:
    words = command.words
    bare = render_words(words)
    text = render_words((*command.assignments, *words)) if command.assignments else bare
    denies = [text, bare]
    if name != words[0].value:
        denies.append(render_words((Word(name, name), *words[1:])))
    return CommandView(
        text, tuple(dict.fromkeys(denies)), tuple(w.value for w in words),
        has_assignments=bool(command.assignments), runs_other=runs_other,
    )


def _changes_dir(command: SimpleCommand) -> bool:
    if not command.words:
        return False
    head = command.words[0]
    return not head.static or head.value.rsplit("/", 1)[-1] in _DIR_CHANGERS


def _short(text: str, limit: int = 40) -> str:
    one_line = " ".join(text.split())
    return one_line if len(one_line) <= limit else one_line[: limit - 1] + "…"
