"""Word scanning for the permission parser (``shell``): quotes, escapes and expansions.

``WordScanner`` reads one shell word at a time the way bash does — single and double
quotes, backslashes and line continuations, ``$var``, ``${…}``, ``$(…)``, backticks,
``$((…))``, ``$'…'`` (decoded), ``<(…)`` — keeping every expansion's source text, noting whether
the word is static, and its ``parts`` (literal text and ``Expansion``s, for resolving paths).
Command substitutions are parsed as scripts of their own through ``parse_list``, which the
command-level parser (``shell._Parser``) provides. Parameter expansions are understood only
in the known-safe forms of ``expansions``. Anything it does not understand raises
``Unclear``. Pure; standard library only.
"""

from __future__ import annotations

import re
from typing import Callable, Union

from dataclasses import dataclass
from minicode.permissions.expansions import expansion_problem, name_problem

__all__ = ["FD_DUP", "MAX_DEPTH", "META", "Expansion", "Redirect", "SimpleCommand", "Unclear", "Word", "WordScanner"]

MAX_DEPTH = 24
"""Nesting ($(…) in $(…) …) deeper than this is not analysed (it is asked)."""

META = frozenset(" \t\n;&|()<>")
_BLANKS = " \t"
_WRITING = frozenset({">", ">>", ">|", "&>", "&>>", "<>"})
FD_DUP = re.compile(r"[0-9]*-?")
_PLAIN_RUN = re.compile(r"[^ \t\n;&|()<>'\"\\$`]+")


@dataclass(frozen=True, slots=True)
class Expansion:
    """One expansion inside a word: ``param`` (``name`` is the variable), ``command``
    (``$(…)``, backticks), ``arith`` (numbers only), ``process`` (``<(…)``) or ``tilde``
    (``name`` is the user, "" for the current one)."""

    kind: str
    name: str = ""
    plain: bool = True
    """For ``param``: ``$NAME``/``${NAME}`` (False: an operator changes the value)."""
    quoted: bool = False
    """Inside double quotes: its value is not split into words (nor globbed)."""


Part = Union[str, Expansion]


@dataclass(frozen=True, slots=True)
class Word:
    """One shell word.

    ``value`` is the word after quote removal, with every expansion kept as its source
    text (``"$HOME/x"`` → ``$HOME/x``). ``static`` is True when ``value`` is exactly the one
    argument bash passes: no parameter, command, arithmetic or process expansion, and no
    unquoted glob, brace or tilde expansion. ``parts`` is the word as literal text and
    expansions (empty for a static word: its value is its only part); ``brace`` says an
    unquoted brace expansion (``{a,b}``, ``{1..3}``) is in it.
    """

    raw: str
    value: str
    static: bool = True
    parts: tuple[Part, ...] = ()
    brace: bool = False

    @property
    def pieces(self) -> tuple[Part, ...]:
        return self.parts or (self.value,)


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


class _Pieces:
    """A word being read: its value text and its parts (literal text and expansions)."""

    __slots__ = ("parts", "text")

    def __init__(self) -> None:
        self.text: list[str] = []
        self.parts: list[Part] = []

    def append(self, literal: str) -> None:
        if not literal:
            return
        self.text.append(literal)
        if self.parts and isinstance(self.parts[-1], str):
            self.parts[-1] += literal
        else:
            self.parts.append(literal)

    def expansion(self, source: str, expansion: Expansion) -> None:
        self.text.append(source)
        self.parts.append(expansion)


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
        value = _Pieces()
        static = True
        braces = _Braces()
        s = self.s
        while self.i < len(s):
            c = s[self.i]
            if c in "<>" and self.i == start and s.startswith(("<(", ">("), self.i):
                self.i += 2
                self._nested(lambda: self.parse_list(")"))
                value.expansion(s[start : self.i], Expansion("process"))
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
                at_start = self.i == start
                self.i += len(run)
                if _expands(run, at_word_start=at_start):
                    static = False
                if braces.read(run):
                    static = False
                if at_start and run.startswith("~"):
                    user, slash, rest = run[1:].partition("/")
                    value.expansion("~" + user, Expansion("tilde", user))
                    run = slash + rest
                value.append(run)
        text = "".join(value.text)
        return Word(s[start : self.i], text, static, () if static else tuple(value.parts), braces.found)

    def _double_quoted(self, value: _Pieces) -> bool:
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
                self._backtick(value, in_quotes=True)
                static = False
            else:
                value.append(c)
                self.i += 1

    def heredoc_body(self) -> None:
        """The whole text as the body of an unquoted here-document (double-quote rules, but
        a double quote is an ordinary character): its expansions are checked and parsed."""
        s, value = self.s, _Pieces()
        while self.i < len(s):
            c = s[self.i]
            if c == "\\" and self.i + 1 < len(s) and s[self.i + 1] in "$`\\\n":
                self.i += 2
            elif c == "$":
                self._dollar(value, in_quotes=True)
            elif c == "`":
                self._backtick(value)
            else:
                self.i += 1

    def _dollar(self, value: _Pieces, *, in_quotes: bool) -> bool:
        """An expansion starting at ``$``; returns whether the text stays static. Raises
        Unclear for a parameter expansion outside the known-safe forms (``expansions``)."""
        s, start = self.s, self.i
        nxt = s[self.i + 1 : self.i + 2]
        if s.startswith("$((", self.i) or nxt == "[":
            self._arithmetic()
            expansion = Expansion("arith", quoted=in_quotes)
        elif nxt == "(":
            self.i += 2
            self._nested(lambda: self.parse_list(")"))
            expansion = Expansion("command", quoted=in_quotes)
        elif nxt == "{":
            name, plain = self._parameter_braces()
            expansion = Expansion("param", name, plain, in_quotes)
        elif nxt and (nxt.isalnum() or nxt in "_@*#?$!-"):
            self.i += 2
            if nxt.isalpha() or nxt == "_":
                while self.i < len(s) and (s[self.i].isalnum() or s[self.i] == "_"):
                    self.i += 1
            name = s[start + 1 : self.i]
            problem = name_problem(name)
            if problem is not None:
                raise Unclear(f"an expansion of {problem}")
            expansion = Expansion("param", name, quoted=in_quotes)
        elif nxt == "'" and not in_quotes:
            end = _ansi_c_end(s, self.i + 2)
            value.append(_ansi_c_decode(s[self.i + 2 : end]))
            self.i = end + 1
            return True
        elif nxt == '"' and not in_quotes:
            self.i += 1
            return self._double_quoted(value)
        else:
            value.append("$")  # a lone dollar sign is literal
            self.i += 1
            return True
        value.expansion(s[start : self.i], expansion)
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
            raise Unclear("an arithmetic expansion with variables (a variable's value is evaluated, which can run code)")
        self.i = end + len(closer)

    def _parameter_braces(self) -> tuple[str, bool]:
        """``${…}`` up to its closing brace; returns the parameter's name and whether it is
        expanded plainly (``${NAME}``). Only the forms of ``expansions`` are understood."""
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
                    problem = expansion_problem(inner)
                    if problem is not None:
                        raise Unclear(f"the expansion {problem}")
                    self.i = j + 1
                    name = re.match(r"[A-Za-z_][A-Za-z0-9_]*|[0-9]+|.", inner)
                    if inner.startswith("#") or name is None:
                        return "#", False  # a length: digits
                    return name.group(), name.group() == inner
            elif c == "\\":
                j += 1
            j += 1
        raise Unclear("an unterminated ${…}")

    def _backtick(self, value: _Pieces, *, in_quotes: bool = False) -> None:
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
        value.expansion(s[start : self.i], Expansion("command", quoted=in_quotes))

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
    """Whether an unquoted run undergoes glob (``*``, ``?``, ``[…]``) or tilde expansion.
    Linear in the run (no rescans from every ``[``)."""
    if "*" in run or "?" in run or (at_word_start and run.startswith("~")):
        return True
    bracket = run.find("[")
    return bracket >= 0 and run.find("]", bracket + 1) >= 0


class _Braces:
    """Brace expansion across the unquoted runs of one word: an unquoted ``{``, then an
    unquoted ``,`` or ``..``, then an unquoted ``}`` — quoted text between them does not stop
    it (``{r,"x"}m`` is ``rm xm``), a quoted ``,`` or ``}`` is no part of it."""

    __slots__ = ("found", "opened", "separated")

    def __init__(self) -> None:
        self.found = self.opened = self.separated = False

    def read(self, run: str) -> bool:
        """Take the next unquoted run; True once a brace expansion is complete."""
        if self.found or not ("{" in run or self.opened):
            return self.found
        for k, c in enumerate(run):
            if c == "{":
                self.opened = True
            elif self.opened and (c == "," or run.startswith("..", k)):
                self.separated = True
            elif c == "}" and self.separated:
                self.found = True
                break
        return self.found


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


_SIMPLE_ESCAPES = {"a": "\a", "b": "\b", "e": "\x1b", "E": "\x1b", "f": "\f", "n": "\n", "r": "\r", "t": "\t",
                   "v": "\v", "\\": "\\", "'": "'", '"': '"', "?": "?"}
_ANSI_ESCAPE = re.compile(r"\\(?:([abeEfnrtv\\'\"?])|([0-7]{1,3})|x([0-9A-Fa-f]{1,2})|u([0-9A-Fa-f]{1,4})"
                          r"|U([0-9A-Fa-f]{1,8})|c(.))", re.DOTALL)


def _ansi_c_decode(content: str) -> str:
    """The text of ``$'…'`` as bash decodes it (``$'\\x72m'`` is ``rm``), so rules see it."""

    def one(m: re.Match[str]) -> str:
        simple, octal, hex2, u4, u8, ctrl = m.groups()
        if simple is not None:
            return _SIMPLE_ESCAPES[simple]
        if ctrl is not None:
            return chr(ord(ctrl.upper()) ^ 0x40) if ctrl != "?" else "\x7f"
        code = int(octal, 8) if octal is not None else int(hex2 or u4 or u8, 16)
        return chr(code) if code <= 0x10FFFF and not 0xD800 <= code <= 0xDFFF else "\ufffd"

    return _ANSI_ESCAPE.sub(one, content).partition("\x00")[0]  # bash ends the word at a NUL
