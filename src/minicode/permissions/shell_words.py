"""Word scanning for the permission parser (``shell``): quotes, escapes and expansions.

``WordScanner`` reads one shell word at a time the way bash does — single and double
quotes, backslashes and line continuations, ``$var``, ``${…}``, ``$(…)``, backticks,
``$((…))``, ``$'…'``, ``<(…)`` — keeping every expansion's source text and noting whether
the word is static. Command substitutions are parsed as scripts of their own through
``parse_list``, which the command-level parser (``shell._Parser``) provides. Anything it
does not understand raises ``Unclear``. Pure; standard library only.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable

__all__ = ["FD_DUP", "MAX_DEPTH", "META", "Redirect", "SimpleCommand", "Unclear", "Word", "WordScanner"]

MAX_DEPTH = 24
"""Nesting ($(…) in $(…) …) deeper than this is not analysed (it is asked)."""

META = frozenset(" \t\n;&|()<>")
_BLANKS = " \t"
_WRITING = frozenset({">", ">>", ">|", "&>", "&>>", "<>"})
FD_DUP = re.compile(r"[0-9]*-?")
_PLAIN_RUN = re.compile(r"[^ \t\n;&|()<>'\"\\$`]+")
_BRACE = re.compile(r"\{[^{}]*(?:,|\.\.)[^{}]*\}")


@dataclass(frozen=True, slots=True)
class Word:
    """One shell word.

    ``value`` is the word after quote removal, with every expansion kept as its source
    text (``"$HOME/x"`` → ``$HOME/x``). ``static`` is True when ``value`` is exactly the one
    argument bash passes: no parameter, command, arithmetic or process expansion, and no
    unquoted glob, brace or tilde expansion.
    """

    raw: str
    value: str
    static: bool = True


@dataclass(frozen=True, slots=True)
class Redirect:
    op: str
    target: Word | None  # None for a here-document (its body is data)
    fd: int | None = None

    @property
    def writes(self) -> bool:
        """Whether this opens ``target`` for writing (a file, not a duplicated descriptor)."""
        if self.op in _WRITING:
            return True
        return self.op == ">&" and self.target is not None and not FD_DUP.fullmatch(self.target.value)


@dataclass(frozen=True, slots=True)
class SimpleCommand:
    assignments: tuple[Word, ...]
    words: tuple[Word, ...]
    redirects: tuple[Redirect, ...]


class Unclear(Exception):
    """The text uses something the parser does not follow; ``reason`` says what."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class WordScanner:
    """Position and nesting over ``s``; subclasses parse commands (``parse_list``)."""

    def __init__(self, s: str, depth: int) -> None:
        self.s = s
        self.depth = depth
        self.i = 0
        self.commands: list[SimpleCommand] = []

    def parse_list(self, closer: str | None) -> None:
        raise NotImplementedError

    def nested_script(self, text: str) -> list[SimpleCommand]:
        """The commands of ``text`` parsed as a script one level deeper (backticks)."""
        raise NotImplementedError

    def _nested(self, parse: Callable[[], None]) -> None:
        self.depth += 1
        try:
            parse()
        finally:
            self.depth -= 1

    def _word(self) -> Word:
        start = self.i
        value: list[str] = []
        static = True
        s = self.s
        while self.i < len(s):
            c = s[self.i]
            if c in "<>" and self.i == start and s.startswith(("<(", ">("), self.i):
                self.i += 2
                self._nested(lambda: self.parse_list(")"))
                value.append(s[start : self.i])
                static = False
                continue
            if c in META:
                break
            if c == "\\":
                if self.i + 1 >= len(s):
                    raise Unclear("a backslash at the end")
                if s[self.i + 1] != "\n":
                    value.append(s[self.i + 1])
                self.i += 2
            elif c == "'":
                end = s.find("'", self.i + 1)
                if end < 0:
                    raise Unclear("an unbalanced single quote")
                value.append(s[self.i + 1 : end])
                self.i = end + 1
            elif c == '"':
                static = self._double_quoted(value) and static
            elif c == "$":
                static = self._dollar(value, in_quotes=False) and static
            elif c == "`":
                self._backtick(value)
                static = False
            else:
                # A plain unquoted run, taken whole: looked at once, so scanning stays linear.
                match = _PLAIN_RUN.match(s, self.i)
                run = match.group() if match else c
                if _expands(run, at_word_start=self.i == start):
                    static = False
                value.append(run)
                self.i += len(run)
        return Word(s[start : self.i], "".join(value), static)

    def _double_quoted(self, value: list[str]) -> bool:
        """From the opening quote to after the closing one; False if anything expands."""
        s = self.s
        self.i += 1
        static = True
        while True:
            if self.i >= len(s):
                raise Unclear("an unbalanced double quote")
            c = s[self.i]
            if c == '"':
                self.i += 1
                return static
            if c == "\\" and self.i + 1 < len(s) and s[self.i + 1] in '$`"\\\n':
                if s[self.i + 1] != "\n":
                    value.append(s[self.i + 1])
                self.i += 2
            elif c == "$":
                static = self._dollar(value, in_quotes=True) and static
            elif c == "`":
                self._backtick(value)
                static = False
            else:
                value.append(c)
                self.i += 1

    def _dollar(self, value: list[str], *, in_quotes: bool) -> bool:
        """An expansion starting at ``$``; returns whether the text stays static."""
        s, start = self.s, self.i
        nxt = s[self.i + 1 : self.i + 2]
        if s.startswith("$((", self.i) or nxt == "[":
            self._arithmetic()
        elif nxt == "(":
            self.i += 2
            self._nested(lambda: self.parse_list(")"))
        elif nxt == "{":
            self._parameter_braces()
        elif nxt and (nxt.isalnum() or nxt in "_@*#?$!-"):
            self.i += 2
            if nxt.isalpha() or nxt == "_":
                while self.i < len(s) and (s[self.i].isalnum() or s[self.i] == "_"):
                    self.i += 1
        elif nxt == "'" and not in_quotes:
            end = _ansi_c_end(s, self.i + 2)
            content = s[self.i + 2 : end]
            self.i = end + 1
            value.append(content)
            return "\\" not in content
        elif nxt == '"' and not in_quotes:
            self.i += 1
            return self._double_quoted(value)
        else:
            value.append("$")  # a lone dollar sign is literal
            self.i += 1
            return True
        value.append(s[start : self.i])
        return False

    def _arithmetic(self) -> None:
        opener, closer = ("$((", "))") if self.s.startswith("$((", self.i) else ("$[", "]")
        end = self.s.find(closer, self.i + len(opener))
        if end < 0:
            raise Unclear("an unterminated arithmetic expansion")
        inner = self.s[self.i + len(opener) : end]
        # Numbers and operators only: bash evaluates a variable's value as an expression,
        # and an array subscript in it (a[$(cmd)]) runs a command.
        if not re.fullmatch(r"[0-9+\-*/%<>=!&|^~?:,() \t]*", inner):
            raise Unclear("an arithmetic expansion with variables")
        self.i = end + len(closer)

    def _parameter_braces(self) -> None:
        depth, j = 0, self.i + 1
        while j < len(self.s):
            c = self.s[j]
            if c == "{":
                depth += 1
            elif c == "}":
                depth -= 1
                if depth == 0:
                    inner = self.s[self.i + 2 : j]
                    if "$(" in inner or "`" in inner or "<(" in inner or ">(" in inner:
                        raise Unclear("a command substitution inside ${…}")
                    self.i = j + 1
                    return
            elif c == "\\":
                j += 1
            j += 1
        raise Unclear("an unterminated ${…}")

    def _backtick(self, value: list[str]) -> None:
        """`…`: the inner text, unescaped, is parsed as a script of its own."""
        s, start = self.s, self.i
        j, inner = self.i + 1, []
        while True:
            if j >= len(s):
                raise Unclear("an unbalanced backquote")
            c = s[j]
            if c == "`":
                break
            if c == "\\" and j + 1 < len(s) and s[j + 1] in "`\\$":
                inner.append(s[j + 1])
                j += 2
                continue
            inner.append(c)
            j += 1
        self.i = j + 1
        if self.depth >= MAX_DEPTH:
            raise Unclear("commands nested too deeply")
        self.commands.extend(self.nested_script("".join(inner)))
        value.append(s[start : self.i])

    # --- blanks and comments -------------------------------------------------------------

    def _skip_blanks(self) -> None:
        s = self.s
        while self.i < len(s):
            if s[self.i] in _BLANKS:
                self.i += 1
            elif s.startswith("\\\n", self.i):
                self.i += 2
            else:
                return

    def _skip_comment(self) -> None:
        end = self.s.find("\n", self.i)
        self.i = len(self.s) if end < 0 else end


def _expands(run: str, *, at_word_start: bool) -> bool:
    """Whether an unquoted run undergoes glob (``*``, ``?``, ``[…]``), brace (``{a,b}``,
    ``{1..3}``) or tilde expansion. Linear in the run (no rescans from every ``[`` or ``{``)."""
    if "*" in run or "?" in run or (at_word_start and run.startswith("~")):
        return True
    bracket = run.find("[")
    if bracket >= 0 and run.find("]", bracket + 1) >= 0:
        return True
    return "{" in run and _BRACE.search(run) is not None


def _ansi_c_end(s: str, j: int) -> int:
    """The index of the quote closing a $'…' string that starts at ``j``."""
    while j < len(s):
        if s[j] == "\\":
            j += 2
            continue
        if s[j] == "'":
            return j
        j += 1
    raise Unclear("an unbalanced $'…' quote")
