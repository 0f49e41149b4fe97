"""What a bash command does, as permission rules see it (``analyze_bash``).

Every simple command — nested ones and the commands wrappers run (``sudo rm``, ``xargs rm``,
``find -exec rm``, ``bash -c 'rm …'``) included — becomes a ``CommandView``: the text allow
rules must match, the texts deny rules are tried on (also without variable assignments, with
the command's directory dropped, and with every computed word as a wildcard — ``git $x``
could be ``git push``), and the paths its arguments name (checked against protected files).
Every file a redirection writes is listed (it needs a ``write`` rule). The working directory
is followed through ``cd``/``pushd`` to a known directory (a failed ``cd`` leaves it where it
was, so both count); after a change to an unknown one, relative paths are unclear.
``unclear`` says what could not be understood (then only the bare ``bash`` rule allows the
command). Pure.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field
from typing import Sequence

from minicode.permissions.arg_paths import Bindings, Resolver, ShellContext, absolute
from minicode.permissions.builtins import check_builtin, code_variable_problem, split_assignment
from minicode.permissions.families import FILE_WRITERS, NAMED_FILE_CHANGERS, extraction_problem, is_writer
from minicode.permissions.git_check import check_git
from minicode.permissions.option_risks import check_options
from minicode.permissions.shell import ShellScript, parse_shell
from minicode.permissions.shell_words import SimpleCommand, Word
from minicode.permissions.wrappers import WRAPPERS, inner_of

__all__ = ["STAR", "BashAnalysis", "CommandView", "PathArg", "ShellContext", "WriteTarget", "analyze_bash",
           "render_words"]

MAX_NESTING = 6
"""``bash -c "sudo sh -c '…'"`` deeper than this is not followed (it is asked)."""
STAR = "\x00"
"""In a deny text: a computed word, which could be any text (bash strings hold no NUL)."""
_HARMLESS = re.compile(r"/dev/(null|stdout|stderr|tty|fd/[0-9]+)")
_TOKEN_SPLIT = re.compile(r"[\s'\"(),;:=<>|&`]+")
_GLOB_CHARS = re.compile(r"\[[^\]]*\]|[*?]")


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


def render_words(words: Sequence[Word]) -> str:
    """Words as one canonical line: static words quoted only where needed (``shlex.quote``),
    words with expansions as written. ``git  "status"`` and ``git status`` look the same."""
    return " ".join(shlex.quote(w.value) if w.static else w.raw for w in words)


def _template(words: Sequence[Word]) -> str:
    """Like ``render_words``, with a computed word as ``STAR`` — its blank included, since
    an empty expansion vanishes with it (``git push $x`` may be ``git push``)."""
    return "".join((" " if k else "") + shlex.quote(w.value) if w.static else STAR for k, w in enumerate(words))


def analyze_bash(source: str, context: ShellContext | None = None) -> BashAnalysis:
    collector = _Collector(context or ShellContext())
    collector.script(source, 0, [collector.context.root])
    return BashAnalysis(
        source, tuple(collector.commands), tuple(collector.writes), tuple(collector.unclear),
        tuple(collector.deny_only), tuple(collector.deny_names), tuple(collector.extra_args),
    )


@dataclass
class _Collector:
    context: ShellContext
    commands: list[CommandView] = field(default_factory=list)
    writes: list[WriteTarget] = field(default_factory=list)
    unclear: list[str] = field(default_factory=list)
    deny_only: list[CommandView] = field(default_factory=list)
    deny_names: list[str] = field(default_factory=list)
    extra_args: list[PathArg] = field(default_factory=list)

    def note(self, reason: str) -> None:
        if reason not in self.unclear:
            self.unclear.append(reason)

    def script(self, text: str, depth: int, dirs: list[str] | None) -> None:
        if depth > MAX_NESTING:
            self.note("commands nested too deeply")
            return
        if STAR in text:
            self.note("a NUL character")
        parsed = parse_shell(text)
        if parsed.unclear is not None:
            self.note(parsed.unclear)
        resolver = Resolver(self.context, _bindings(parsed))
        for body in parsed.heredocs:
            self.extra(Word(body, body), dirs, resolver)
        for loop in parsed.loops:
            for word in loop.words or ():
                self.extra(word, dirs, resolver)
        for command in parsed.commands:
            dirs = self.command(command, depth, dirs, resolver)

    def command(self, command: SimpleCommand, depth: int, dirs: list[str] | None, resolver: Resolver) -> list[str] | None:
        for redirect in command.redirects:
            if redirect.target is None:
                continue
            if redirect.writes:
                self.write(redirect.target, dirs, resolver)
            elif redirect.op == "<<<":
                self.extra(redirect.target, dirs, resolver)
        for assignment in command.assignments:
            self._assignment(assignment)
        if not command.words:
            if command.assignments:  # `X=1` alone changes what later commands do
                text = render_words(command.assignments)
                self.commands.append(CommandView(text, (text,), (), has_assignments=True))
            return dirs
        head = command.words[0]
        if not head.static:
            self.note(f"the command name is computed ({_short(head.raw)})")
            if head.parts and all(isinstance(p, str) for p in head.parts):  # a glob: /bin/r? is rm
                self.deny_only.append(_view(command, _glob_name(head.value), dirs, resolver, self.context))
            return dirs
        name = head.value.rsplit("/", 1)[-1] or head.value
        view = _view(command, name, dirs, resolver, self.context)
        view = self._findings(view, name, command.words[1:], depth, dirs, resolver)
        self.commands.append(view)
        self._unknown_paths(view, dirs)
        if view.runs_other:
            self.wrapped(name, command.words[1:], depth, dirs, resolver)
        return _next_dirs(name, command.words[1:], dirs, resolver, self.context)

    def _assignment(self, word: Word) -> None:
        split = split_assignment(word)
        problem = code_variable_problem(split[0]) if split is not None else None
        if problem is not None:
            self.note(problem)

    def _findings(self, view: CommandView, name: str, args: Sequence[Word], depth: int,
                  dirs: list[str] | None, resolver: Resolver) -> CommandView:
        """Builtins that evaluate names or store code, options that run code or write a file
        (``option_risks``), and git's configuration and exec options."""
        builtin = check_builtin(name, args)
        if builtin is not None:
            if builtin.unclear is not None:
                self.note(builtin.unclear)
            for script in builtin.scripts:
                self.script(script, depth + 1, dirs)
        extraction = extraction_problem(name, [w.value for w in args])
        if extraction is not None:
            self.note(f"{name} {extraction}")
        risk = check_options(name, args)
        if risk is not None:
            if risk.unclear is not None:
                self.note(risk.unclear)
            for target in risk.writes:
                self.write(target, dirs, resolver)
        self._outside_writes(view, dirs)
        if name != "git":
            return view
        git = check_git(args)
        if git.unclear is not None:
            self.note(git.unclear)
        for script in git.scripts:
            self.script(script, depth + 1, dirs)
        return CommandView(view.text, view.deny_texts, view.words, view.has_assignments, view.runs_other,
                           view.writer, view.args, git.protected)

    def _outside_writes(self, view: CommandView, dirs: list[str] | None) -> None:
        """The paths outside the workspace of a file writer or a formatter count as files it
        writes: a rule such as ``bash(cp *)`` or ``bash(black *)`` then needs a ``write(//…)``
        rule to reach them (reads included, conservatively: ``cp /etc/x .`` is asked)."""
        name = view.words[0].rsplit("/", 1)[-1]
        if name not in FILE_WRITERS and name not in NAMED_FILE_CHANGERS:
            return
        if name in ("sed", "gsed") and not any(w.startswith(("-i", "--in-place")) for w in view.words[1:]):
            return  # sed writes only in place (its w commands are option_risks'); /a/,/b/p is a script
        root = self.context.root.rstrip("/") + "/"
        for arg in view.args:
            outside = [p for p in arg.paths or () if not (p + "/").startswith(root) and not _HARMLESS.fullmatch(p)]
            if outside:
                self.writes.append(WriteTarget(arg.shown, tuple(outside)))

    def _unknown_paths(self, view: CommandView, dirs: list[str] | None) -> None:
        for arg in view.args:
            if arg.paths is not None:
                continue
            if dirs is None and not arg.shown.startswith(("/", "~", "$HOME")):
                self.note(f"a relative path ({_short(arg.shown)}) after the directory changed to one minicode "
                          "cannot know")
            elif view.writer:
                self.note(f"{view.words[0]} with an argument computed at run time ({_short(arg.shown)}): minicode "
                          "cannot check what it writes")

    def wrapped(self, name: str, args: Sequence[Word], depth: int, dirs: list[str] | None, resolver: Resolver) -> None:
        for inner in inner_of(name, args):
            if inner.unclear is not None:
                self.note(inner.unclear)
            for target in inner.writes:
                self.write(target, dirs, resolver)
            for candidate in inner.candidates:
                head = candidate[0].value
                self.deny_only.append(_view(SimpleCommand((), candidate, ()), head.rsplit("/", 1)[-1] or head,
                                            dirs, resolver, self.context))
            if inner.script is not None:
                self.script(inner.script, depth + 1, dirs)
            if inner.words:
                if depth + 1 > MAX_NESTING:
                    self.note("commands nested too deeply")
                else:
                    self.command(SimpleCommand(inner.assignments, inner.words, ()), depth + 1, dirs, resolver)

    def write(self, target: Word, dirs: list[str] | None, resolver: Resolver) -> None:
        texts = resolver.values(target, dirs)
        if texts is None:
            self.note(f"a redirection to a computed path ({_short(target.raw)})")
            return
        texts = [t for t in texts if not _HARMLESS.fullmatch(t)]
        if not texts:
            return
        paths = absolute(texts, dirs)
        if paths is None:
            self.note(f"a redirection to {_short(target.value)} after the directory changed to one minicode "
                      "cannot know")
            self.deny_names.extend(texts)
            return
        self.writes.append(WriteTarget(target.value if target.static else target.raw, tuple(paths)))

    def extra(self, word: Word, dirs: list[str] | None, resolver: Resolver) -> None:
        """Paths in text a command may read names from (protected names only)."""
        names = self.context.names
        texts = resolver.values(word, dirs) if not word.static else [word.value]
        for text in texts or ():
            for token in _TOKEN_SPLIT.split(text):
                if token and any(n in token for n in names):
                    paths = absolute([token], dirs)
                    self.extra_args.append(PathArg(token, tuple(paths) if paths is not None else None))


def _bindings(parsed: ShellScript) -> Bindings:
    """Variables the script sets (flow-insensitive: a use may come before or after)."""
    found: dict[str, list[Word] | None] = {}

    def bind(name: str, words: Sequence[Word] | None) -> None:
        if words is None or found.get(name, []) is None:
            found[name] = None
        else:
            found.setdefault(name, []).extend(words)  # type: ignore[union-attr]

    for loop in parsed.loops:
        bind(loop.name, loop.words)
    for command in parsed.commands:
        if not command.words:
            for assignment in command.assignments:
                split = split_assignment(assignment)
                if split is not None:
                    bind(split[0], [split[1]])
            continue
        head = command.words[0]
        name = head.value.rsplit("/", 1)[-1] if head.static else ""
        finding = check_builtin(name, command.words[1:]) if name else None
        if finding is not None:
            for variable in finding.unknown:
                bind(variable, None)
            for variable, value in finding.assigns:
                bind(variable, [value])
    return found


def _view(command: SimpleCommand, name: str, dirs: list[str] | None, resolver: Resolver,
          context: ShellContext) -> CommandView:
    words = command.words
    bare = render_words(words)
    text = render_words((*command.assignments, *words)) if command.assignments else bare
    writer = is_writer(name)
    return CommandView(
        text, _deny_texts(command, name), tuple(w.value for w in words),
        has_assignments=bool(command.assignments), runs_other=name in WRAPPERS, writer=writer,
        args=tuple(_path_args(words[1:], writer or name in NAMED_FILE_CHANGERS, dirs, resolver, context)),
    )


def _deny_texts(command: SimpleCommand, name: str) -> tuple[str, ...]:
    """The command as written, without its assignments, and named by its basename; with
    ``STAR`` for computed words when there are any (a glob in the name is one already,
    and then only the name's form counts: ``/bin/r?`` is tried as ``r…``)."""
    words, assignments = command.words, command.assignments
    if all(w.static for w in (*assignments, *words)) and STAR not in name:
        texts = [render_words((*assignments, *words)), render_words(words),
                 render_words((Word(name, name), *words[1:]))]
        return tuple(dict.fromkeys(texts))
    rest = "".join(" " + shlex.quote(w.value) if w.static else STAR for w in words[1:])
    if STAR in name:
        return (name + rest,)
    texts = [_template((*assignments, *words)), _template(words), shlex.quote(name) + rest]
    return tuple(dict.fromkeys(texts))


def _path_args(args: Sequence[Word], writer: bool, dirs: list[str] | None, resolver: Resolver,
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
            for token in _sub_tokens(value):
                paths = absolute([token], dirs)
                found.append(PathArg(token, tuple(paths) if paths is not None else None))
    return found


def _sub_tokens(value: str) -> list[str]:
    tokens = [t for t in _TOKEN_SPLIT.split(value) if t and t != value]
    if value.startswith("-") and not value.startswith("--"):
        tokens.extend(value[k:] for k in range(2, len(value)))  # -t.git, -rt.git
    return [t for t in dict.fromkeys(tokens) if t]


def _glob_name(pattern: str) -> str:
    """A glob in a command name as a deny text: its basename, each wildcard a ``STAR``."""
    base = pattern.rsplit("/", 1)[-1] or pattern
    return _GLOB_CHARS.sub(STAR, base)


_DIR_OPTIONS = frozenset({"-L", "-P", "-e", "-@", "--"})


def _next_dirs(name: str, args: Sequence[Word], dirs: list[str] | None, resolver: Resolver,
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


def _short(text: str, limit: int = 40) -> str:
    one_line = " ".join(text.split())
    return one_line if len(one_line) <= limit else one_line[: limit - 1] + "…"

