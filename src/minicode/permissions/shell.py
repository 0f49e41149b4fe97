"""A conservative bash parser for permission checks: every simple command a string runs.

Why our own and not ``shlex``: ``shlex`` splits words (``punctuation_chars`` even separates
``;``/``&&``/``|``), but it knows nothing of ``$(…)``, backticks, ``<(…)``, here-documents,
line continuations, fd redirections (``2>&1``) or reserved words, and it silently accepts
what bash would run differently. A permission check must see *every* command bash would
run, so this parser follows bash's grammar for the constructs coding agents use and gives
up — ``ShellScript.unclear`` — on everything else (``case``, functions, ``[[ ]]``,
``(( ))``, unbalanced quotes, command substitutions inside ``${…}``, …). Giving up never
allows anything: the caller asks the user.

Pure: strings in, frozen data out. Imports only the standard library.
"""

from __future__ import annotations

import re

from dataclasses import dataclass
from minicode.permissions.shell_words import FD_DUP, MAX_DEPTH, META, Redirect, SimpleCommand, Unclear, Word, WordScanner

__all__ = ["LoopBinding", "Redirect", "ShellScript", "SimpleCommand", "Word", "parse_shell"]

_RESERVED_SKIPPED = frozenset({"{", "}", "!", "if", "then", "elif", "else", "fi", "do", "done", "while", "until"})
_RESERVED_UNCLEAR = {
    "case": "a case statement",
    "select": "a select loop",
    "function": "a function definition",
    "coproc": "a coprocess",
    "[[": "a [[ … ]] conditional",
}
# Longest first: the first prefix that matches is the operator.
_REDIRECTS = ("&>>", "&>", "<<<", "<<-", "<<", "<>", "<&", ">&", ">>", ">|", "<", ">")
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\[[^\]]*\])?\+?=")
_NAMED_FD = re.compile(r"\{[A-Za-z_][A-Za-z0-9_]*\}")


def _short(text: str, limit: int = 40) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


@dataclass(frozen=True, slots=True)
class LoopBinding:
    """``for NAME in WORDS``: the loop variable takes each word's value (``words`` None:
    no ``in`` list, so the positional parameters — text no rule can know)."""

    name: str
    words: tuple[Word, ...] | None


@dataclass(frozen=True, slots=True)
class ShellScript:
    """Every simple command of a script, nested ones (``$(…)``, backticks, ``<(…)``,
    subshells, groups, loop bodies) included; ``unclear`` says why the parse gave up (then
    ``commands`` holds only what was read before that point). ``loops`` are the ``for``
    variables, ``heredocs`` the here-document bodies (data, but a command may read paths
    from them)."""

    commands: tuple[SimpleCommand, ...]
    unclear: str | None = None
    loops: tuple[LoopBinding, ...] = ()
    heredocs: tuple[str, ...] = ()


def parse_shell(source: str) -> ShellScript:
    """The simple commands ``bash -c source`` would run (see the module docstring)."""
    parser = _Parser(source, 0)
    unclear = None
    try:
        parser.parse_list(None)
    except Unclear as e:
        unclear = e.reason
    return ShellScript(tuple(parser.commands), unclear, tuple(parser.loops), tuple(parser.heredoc_bodies))


@dataclass(frozen=True, slots=True)
class _HereDoc:
    delimiter: str
    strip_tabs: bool
    quoted: bool


class _Parser(WordScanner):
    """Lists, pipelines, simple commands, redirections and here-documents."""

    def __init__(self, s: str, depth: int) -> None:
        super().__init__(s, depth)
        self.heredocs: list[_HereDoc] = []
        self.heredoc_bodies: list[str] = []
        self.loops: list[LoopBinding] = []

    def nested_script(self, text: str) -> list[SimpleCommand]:
        nested = _Parser(text, self.depth + 1)
        try:
            nested.parse_list(None)
        finally:
            self.loops.extend(nested.loops)
            self.heredoc_bodies.extend(nested.heredoc_bodies)
        return nested.commands

    # --- lists ---------------------------------------------------------------------------

    def parse_list(self, closer: str | None) -> None:
        """Commands until ``closer`` (")" of a subshell or substitution) or the end."""
        if self.depth > MAX_DEPTH:
            raise Unclear("commands nested too deeply")
        while True:
            self._skip_blanks()
            if self.i >= len(self.s):
                if closer is not None:
                    raise Unclear(f"a missing {closer!r}")
                if self.heredocs:
                    raise Unclear("a here-document without its body")
                return
            c = self.s[self.i]
            if c == "#":
                self._skip_comment()
            elif c == "\n":
                self.i += 1
                self._read_heredocs()
            elif c == ")":
                if closer != ")":
                    raise Unclear("an unbalanced ')'")
                self.i += 1
                return
            elif c in ";&|" and not self.s.startswith("&>", self.i):
                self._separator()
            elif c == "(":
                if self.s.startswith("((", self.i):
                    raise Unclear("an arithmetic command (( … ))")
                self.i += 1
                self._nested(lambda: self.parse_list(")"))
                self._simple_command(after_compound=True)  # redirections of the subshell
            else:
                self._simple_command()

    def _separator(self) -> None:
        for op in (";;&", ";;", ";&"):
            if self.s.startswith(op, self.i):
                raise Unclear("a case statement")
        for op in ("&&", "||", "|&", ";", "&", "|"):
            if self.s.startswith(op, self.i):
                self.i += len(op)
                return

    # --- simple commands -----------------------------------------------------------------

    def _simple_command(self, after_compound: bool = False) -> None:
        assignments: list[Word] = []
        words: list[Word] = []
        redirects: list[Redirect] = []
        while True:
            self._skip_blanks()
            if self.i >= len(self.s):
                break
            c = self.s[self.i]
            if self.s.startswith(("<(", ">("), self.i):
                if after_compound:
                    raise Unclear("a word after a compound command")
                words.append(self._word())
                continue
            if c in "<>" or self.s.startswith("&>", self.i):
                redirects.append(self._redirect(None))
                continue
            if c in "\n;&|)":
                break
            if c == "(":
                raise Unclear("a function definition or an unexpected '('")
            if c == "#":
                self._skip_comment()
                break
            word = self._word()
            if self.i < len(self.s) and self.s[self.i] in "<>" and not self.s.startswith(("<(", ">("), self.i):
                if word.raw.isdigit():
                    redirects.append(self._redirect(int(word.raw)))
                    continue
                if _NAMED_FD.fullmatch(word.raw):
                    raise Unclear("a redirection to a named file descriptor")
            if after_compound:
                raise Unclear("a word after a compound command")
            if not words and self._command_position_word(word, assignments):
                continue
            words.append(word)
        if assignments or words or redirects:
            self.commands.append(SimpleCommand(tuple(assignments), tuple(words), tuple(redirects)))

    def _command_position_word(self, word: Word, assignments: list[Word]) -> bool:
        """Handle a word before the command name; True when it was consumed here."""
        assignment = _ASSIGNMENT.match(word.raw)
        if assignment:
            if assignment.group(1):
                raise Unclear(f"an assignment to an array element ({_short(word.raw)}): its subscript is evaluated "
                              "as arithmetic, which can run code")
            assignments.append(word)
            return True
        if assignments or word.raw != word.value:  # quoted: a command named "if" is a command
            return False
        if word.raw in _RESERVED_UNCLEAR:
            raise Unclear(_RESERVED_UNCLEAR[word.raw])
        if word.raw in _RESERVED_SKIPPED:
            return True
        if word.raw == "time":
            self._skip_blanks()
            if self.s.startswith("-p", self.i) and self.s[self.i + 2 : self.i + 3] in ("", " ", "\t", "\n"):
                self.i += 2
            return True
        if word.raw == "for":
            self._for_clause()
            return True
        return False

    def _for_clause(self) -> None:
        """``for NAME [in WORDS]``: words, not a command (substitutions in them still are)."""
        self._skip_blanks()
        if self.s.startswith("((", self.i):
            raise Unclear("an arithmetic for loop")
        words: list[Word] = []
        while self.i < len(self.s) and self.s[self.i] not in "\n;&|)":
            if self.s[self.i] in "<>(":
                raise Unclear("an unexpected token in a for loop")
            words.append(self._word())
            self._skip_blanks()
        if words:
            listed = len(words) > 1 and words[1].raw == "in"
            self.loops.append(LoopBinding(words[0].value, tuple(words[2:]) if listed else None))

    def _redirect(self, fd: int | None) -> Redirect:
        op = next(o for o in _REDIRECTS if self.s.startswith(o, self.i))
        self.i += len(op)
        self._skip_blanks()
        if self.i >= len(self.s) or self.s[self.i] in META - {"<", ">"}:
            raise Unclear(f"a redirection {op} without a target")
        if self.s.startswith(("<(", ">("), self.i) and op not in ("<", ">"):
            raise Unclear("a process substitution as a redirection target")
        target = self._word()
        if not target.raw:
            raise Unclear(f"a redirection {op} without a target")
        if op in ("<<", "<<-"):
            quoted = target.raw != target.value or not target.static
            self.heredocs.append(_HereDoc(target.value, op == "<<-", quoted))
            return Redirect(op, None, fd)
        if op == "<&" and not FD_DUP.fullmatch(target.value):
            raise Unclear("a <& redirection from a file")
        return Redirect(op, target, fd)

    def _read_heredocs(self) -> None:
        """After a newline: the bodies of the here-documents started on that line."""
        pending, self.heredocs = self.heredocs, []
        for doc in pending:
            body_start = self.i
            while True:
                if self.i >= len(self.s):
                    raise Unclear(f"a here-document without its end line {doc.delimiter!r}")
                end = self.s.find("\n", self.i)
                end = len(self.s) if end < 0 else end
                line = self.s[self.i : end]
                self.i = min(end + 1, len(self.s))
                if (line.lstrip("\t") if doc.strip_tabs else line) == doc.delimiter:
                    break
            body = self.s[body_start : self.i]
            self.heredoc_bodies.append(body)
            if not doc.quoted:  # expanded like a double-quoted string: checked like one
                nested = _Parser(body, self.depth + 1)
                nested.heredoc_body()
                self.commands.extend(nested.commands)
