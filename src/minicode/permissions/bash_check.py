"""What a bash command does, as permission rules see it (``analyze_bash``).

Every simple command — nested ones and the commands wrappers run (``sudo rm``, ``xargs rm``,
``find -exec rm``, ``bash -c 'rm …'``) included — becomes a ``CommandView``: the text allow
rules must match, the texts deny rules are tried on (also without variable assignments, with
the command's directory dropped, and as templates when a word is computed anywhere in it —
``git $x`` could be ``git push``, ``r${x}m`` could be ``rm``: ``word_templates``), and the
paths its arguments name (checked against protected files);
the types and the view-building helpers are in ``bash_views``.
Every file a redirection writes is listed (it needs a ``write`` rule). The working directory
is followed through ``cd``/``pushd`` to a known directory (a failed ``cd`` leaves it where it
was, so both count); after a change to an unknown one, relative paths are unclear.
``unclear`` says what could not be understood (then only the bare ``bash`` rule allows the
command), ``hidden`` which of it may hide a command that no rule saw (then, while deny rules
are in force, not even the bare rule does). Pure.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Sequence

from minicode.permissions.arg_paths import Bindings, Resolver, ShellContext, absolute
from minicode.permissions.builtins import check_builtin, code_variable_problem, split_assignment
from minicode.permissions.families import FILE_WRITERS, NAMED_FILE_CHANGERS, extraction_problem
from minicode.permissions.git_check import check_git
from minicode.permissions.option_risks import check_options
from minicode.permissions.shell import ShellScript, parse_shell
from minicode.permissions.shell_words import SimpleCommand, Word
from minicode.permissions.bash_views import (
    STAR,
    TOKEN_SPLIT,
    BashAnalysis,
    CommandView,
    PathArg,
    WriteTarget,
    command_view,
    next_dirs,
    render_words,
    short,
)
from minicode.permissions.wrappers import inner_of

__all__ = ["ShellContext", "analyze_bash"]

MAX_NESTING = 6
"""``bash -c "sudo sh -c '…'"`` deeper than this is not followed (it is asked)."""
_HARMLESS = re.compile(r"/dev/(null|stdout|stderr|tty|fd/[0-9]+)")


def analyze_bash(source: str, context: ShellContext | None = None) -> BashAnalysis:
    collector = _Collector(context or ShellContext())
    collector.script(source, 0, [collector.context.root])
    return BashAnalysis(
        source, tuple(collector.commands), tuple(collector.writes), tuple(collector.unclear),
        tuple(collector.deny_only), tuple(collector.deny_names), tuple(collector.extra_args), tuple(collector.hidden),
    )


@dataclass(slots=True)
class _Collector:
    """What the analysis found so far."""

    context: ShellContext
    commands: list[CommandView] = field(default_factory=list)
    writes: list[WriteTarget] = field(default_factory=list)
    unclear: list[str] = field(default_factory=list)
    deny_only: list[CommandView] = field(default_factory=list)
    deny_names: list[str] = field(default_factory=list)
    extra_args: list[PathArg] = field(default_factory=list)
    hidden: list[str] = field(default_factory=list)

    def note(self, reason: str) -> None:
        """Something not understood that may hide a command (``BashAnalysis.hidden``)."""
        self.note_path(reason)
        if reason not in self.hidden:
            self.hidden.append(reason)

    def note_path(self, reason: str) -> None:
        """Something not understood about a path or a file written, not about what runs."""
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
            # r${x}m, /bin/r?, $(echo rm): tried by deny rules as a template (word_templates)
            self.note(f"the command name is computed ({short(head.raw)})")
            self.deny_only.append(command_view(command, "", dirs, resolver, self.context))
            return dirs
        name = head.value.rsplit("/", 1)[-1] or head.value
        view = command_view(command, name, dirs, resolver, self.context)
        view = self._findings(view, name, command.words[1:], depth, dirs, resolver)
        self.commands.append(view)
        self._unknown_paths(view, dirs)
        if view.runs_other:
            self.wrapped(name, command.words[1:], depth, dirs, resolver)
        return next_dirs(name, command.words[1:], dirs, resolver, self.context)

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
            self.note_path(f"{name} {extraction}")
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
            (self.note if git.runs_unseen else self.note_path)(git.unclear)
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
                self.note_path(f"a relative path ({short(arg.shown)}) after the directory changed to one "
                               "minicode cannot know")
            elif view.writer:
                self.note_path(f"{view.words[0]} with an argument computed at run time ({short(arg.shown)}): "
                               "minicode cannot check what it writes")

    def wrapped(self, name: str, args: Sequence[Word], depth: int, dirs: list[str] | None, resolver: Resolver) -> None:
        for inner in inner_of(name, args):
            if inner.unclear is not None:
                self.note(inner.unclear)
            for target in inner.writes:
                self.write(target, dirs, resolver)
            for candidate in inner.candidates:
                head = candidate[0].value if candidate[0].static else ""
                self.deny_only.append(command_view(SimpleCommand((), candidate, ()), head.rsplit("/", 1)[-1] or head,
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
            self.note_path(f"a redirection to a computed path ({short(target.raw)})")
            return
        texts = [t for t in texts if not _HARMLESS.fullmatch(t)]
        if not texts:
            return
        paths = absolute(texts, dirs)
        if paths is None:
            self.note_path(f"a redirection to {short(target.value)} after the directory changed to one minicode "
                           "cannot know")
            self.deny_names.extend(texts)
            return
        self.writes.append(WriteTarget(target.value if target.static else target.raw, tuple(paths)))

    def extra(self, word: Word, dirs: list[str] | None, resolver: Resolver) -> None:
        """Paths in text a command may read names from (protected names only)."""
        names = self.context.names
        texts = resolver.values(word, dirs) if not word.static else [word.value]
        for text in texts or ():
            for token in TOKEN_SPLIT.split(text):
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
