"""Rule patterns compiled to matchers: bash command patterns and path globs. Pure.

Command patterns (``bash(…)``), as Claude Code users know them: ``*`` matches any text
(spaces included); a trailing `` *`` also matches nothing, so ``pytest *`` covers ``pytest``
and ``pytest -q``, but not ``pytestx``. The older ``:*`` suffix is a prefix match: ``npm run
test:*`` covers ``npm run test``, ``npm run test -- -u`` and the colon-named scripts
``npm run test:unit`` (but not ``npm run testx``). Words are compared in canonical form
(``render_words``): runs of blanks are one space and quoting does not matter
(``git "status"`` is ``git status``). ``globs`` are the pattern's forms with each ``*`` as
``STAR``, for deciding whether a command with computed words *could* match (``globs_meet``).

Path patterns (``edit(…)``, ``write(…)``), gitignore-style: ``*`` and ``?`` stay within one
directory level, ``**`` spans levels, ``[…]`` is a character class; a pattern with no ``/``
matches a name at any depth of the workspace (``*.md``, ``.env``); one with a ``/`` is
anchored at the workspace root (``src/**``, ``/src/**``, ``./docs/*.md``); ``//`` starts an
absolute path (``//tmp/**``). A pattern that matches a directory covers what is inside it.
"""

from __future__ import annotations

import re

from dataclasses import dataclass

__all__ = ["NAME_STAR", "STAR", "CommandPattern", "PathPattern", "PatternError", "compile_command", "compile_path", "globs_meet"]

_WILD = object()  # an unquoted * inside a pattern word
STAR = "\x00"  # a wildcard in ``CommandPattern.globs`` and in the texts ``globs_meet`` compares
NAME_STAR = "\x02"
"""In a template only: any text without a blank (a quoted expansion in a command name
cannot split it into words: ``"r$x" v`` never runs ``rm``)."""
_BLANKS = frozenset(" \t\n")


class PatternError(ValueError):
    """A pattern that cannot be compiled; the message says why."""


@dataclass(frozen=True, slots=True)
class CommandPattern:
    regex: re.Pattern[str]
    prefix: tuple[str, ...]
    """The literal words before the first ``*`` (empty: the pattern starts with ``*``)."""
    searcher: re.Pattern[str]
    """``regex`` without its leading ``.*``, for searching inside a text (no backtracking
    from every position)."""
    globs: tuple[str, ...] = ()
    """The texts the pattern stands for, each ``*`` as ``STAR`` (one per optional tail)."""

    def matches(self, text: str) -> bool:
        return self.regex.fullmatch(text) is not None

    def could_match(self, template: str) -> bool:
        """Whether some text the ``template`` stands for (``STAR``: any text, ``NAME_STAR``:
        any text without a blank) matches."""
        return any(globs_meet(glob, template) for glob in self.globs)


@dataclass(frozen=True, slots=True)
class PathPattern:
    regex: re.Pattern[str] | None  # None: every path inside the workspace (a bare rule)
    absolute: bool
    name: re.Pattern[str] | None = None
    """The pattern's last segment (None when it is ``**`` or the rule is bare): whether a
    file of a given name could match when its directory is unknown."""

    def matches(self, relative: str | None, absolute: str) -> bool:
        """Whether the path (``relative`` to the workspace, None when outside it; and its
        ``absolute`` form) or one of its parent directories matches."""
        if self.absolute:
            return self.regex is not None and any(self.regex.fullmatch(p) for p in _with_parents(absolute))
        if relative is None:
            return False
        return self.regex is None or any(self.regex.fullmatch(p) for p in _with_parents(relative))


def compile_command(pattern: str) -> CommandPattern:
    """A ``bash(…)`` pattern; raises PatternError."""
    text = pattern.strip()
    colon_prefix = text.endswith(":*")
    if colon_prefix:
        text = text[:-2].rstrip()
    if ":*" in text:
        raise PatternError(":* may only end a pattern (it means: followed by anything)")
    words = _pattern_words(text)
    if not words:
        raise PatternError("the pattern is empty")
    parts: list[str] = []
    globs = [""]
    for index, word in enumerate(words):
        last = index == len(words) - 1
        if word == [_WILD] and last and index > 0:
            parts.append("(?: .*)?")  # "pytest *" also matches a bare "pytest"
            globs = [g for glob in globs for g in (glob, glob + " " + STAR)]
            continue
        sep = "" if index == 0 else " "
        parts.append(sep + _word_regex(word))
        globs = [glob + sep + _word_glob(word) for glob in globs]
    if colon_prefix:
        parts.append("(?:[ :].*)?")  # "npm run test:*": also "npm run test:unit"
        globs = [g for glob in globs for g in (glob, glob + " " + STAR, glob + ":" + STAR)]
    prefix: list[str] = []
    for word in words:
        if _WILD in word:
            break
        prefix.append("".join(str(p) for p in word))
    source = "".join(parts)
    searchable = source[2:] if source.startswith(".*") else source
    return CommandPattern(re.compile(source, re.DOTALL), tuple(prefix), re.compile(searchable or ".", re.DOTALL),
                          tuple(globs))


def globs_meet(a: str, b: str) -> bool:
    """Whether two texts with ``STAR`` wildcards (any text, spaces included) have a match in
    common; ``b`` may also hold ``NAME_STAR`` (any text without a blank). Linear in
    ``len(b)`` per character of ``a`` (a pattern is short)."""
    # states: positions (i, j) reachable with a[:i] and b[:j] standing for the same text
    frontier = {(0, 0)}
    seen = set(frontier)
    while frontier:
        nxt: set[tuple[int, int]] = set()
        for i, j in frontier:
            if i == len(a) and j == len(b):
                return True
            steps = []
            if i < len(a) and a[i] == STAR:
                steps.append((i + 1, j))  # the star in a ends
                if j < len(b):
                    steps.append((i, j + 1))  # …or takes b[j]
            if j < len(b) and b[j] == STAR:
                steps.append((i, j + 1))
                if i < len(a):
                    steps.append((i + 1, j))
            if j < len(b) and b[j] == NAME_STAR:
                steps.append((i, j + 1))
                if i < len(a) and a[i] != STAR and a[i] not in _BLANKS:
                    steps.append((i + 1, j))
            if i < len(a) and j < len(b) and a[i] == b[j] and a[i] != STAR:
                steps.append((i + 1, j + 1))
            for step in steps:
                if step not in seen:
                    seen.add(step)
                    nxt.add(step)
        frontier = nxt
    return False


def _pattern_words(text: str) -> list[list[object]]:
    """Split on unquoted blanks; each word a list of literal strings and _WILD."""
    words: list[list[object]] = []
    current: list[object] | None = None
    i = 0
    while i < len(text):
        c = text[i]
        if c in " \t":
            current = None
            i += 1
            continue
        if current is None:
            current = []
            words.append(current)
        if c == "*":
            current.append(_WILD)
            i += 1
        elif c in "'\"":
            end = text.find(c, i + 1)
            if end < 0:
                raise PatternError("an unbalanced quote")
            current.append(text[i + 1 : end])
            i = end + 1
        elif c == "\\" and i + 1 < len(text):
            current.append(text[i + 1])
            i += 2
        else:
            current.append(c)
            i += 1
    return words


def _word_glob(word: list[object]) -> str:
    """The word raw, without quoting: templates are raw too (``word_templates``)."""
    return "".join(STAR if piece is _WILD else str(piece) for piece in word)


def _word_regex(word: list[object]) -> str:
    if _WILD not in word:
        import shlex

        return re.escape(shlex.quote("".join(str(p) for p in word)))
    parts: list[str] = []
    for piece in word:
        if piece is _WILD:
            if not parts or parts[-1] != ".*":  # "**" is "*": no nested backtracking
                parts.append(".*")
        else:
            parts.append(re.escape(str(piece)))
    return "".join(parts)


def compile_path(pattern: str) -> PathPattern:
    """An ``edit(…)``/``write(…)`` pattern; raises PatternError."""
    text = pattern.strip()
    if not text:
        raise PatternError("the pattern is empty")
    if text.startswith("~"):
        raise PatternError("~ is not expanded: write the absolute path as //home/…")
    if "\\" in text:
        raise PatternError("use / to separate directories (a backslash is not allowed)")
    absolute = text.startswith("//")
    body = text[2:] if absolute else text.removeprefix("./").lstrip("/")
    anchored = absolute or text.startswith(("/", "./")) or "/" in body.rstrip("/")
    if text.endswith("/"):
        body = body.rstrip("/") + "/**"
    segments = [s for s in body.split("/") if s not in ("", ".")]
    if not segments:
        raise PatternError("the pattern names no path")
    if ".." in segments:
        raise PatternError(".. is not allowed in a path pattern")
    regex = _segments_regex(segments)
    if absolute:
        regex = "/" + regex
    elif not anchored:
        regex = "(?:.*/)?" + regex
    name = None if segments[-1] == "**" else re.compile(_glob_segment(segments[-1]), re.DOTALL)
    return PathPattern(re.compile(regex, re.DOTALL), absolute, name)


def _segments_regex(segments: list[str]) -> str:
    out: list[str] = []
    for index, segment in enumerate(segments):
        last = index == len(segments) - 1
        if segment == "**":
            out.append(".*" if last else "(?:[^/]+/)*")
        else:
            out.append(_glob_segment(segment) + ("" if last else "/"))
    return "".join(out)


def _glob_segment(segment: str) -> str:
    out: list[str] = []
    i = 0
    while i < len(segment):
        c = segment[i]
        if c == "*":
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "[":
            end = segment.find("]", i + 2)
            if end < 0:
                raise PatternError("an unclosed [ in a path pattern")
            inner = segment[i + 1 : end]
            negate = inner[:1] in ("!", "^")
            body = re.escape(inner[1:] if negate else inner).replace("\\-", "-")
            out.append(f"[{'^' if negate else ''}{body}]")
            i = end
        else:
            out.append(re.escape(c))
        i += 1
    return "".join(out)


def _with_parents(path: str) -> list[str]:
    """``a/b/c`` → ``a``, ``a/b``, ``a/b/c`` (``/x/y`` → ``/x``, ``/x/y``)."""
    parts = path.split("/")
    found = ["/".join(parts[: k + 1]) for k in range(len(parts))]
    return [p for p in found if p not in ("", "/")]
