"""A ``SKILL.md`` taken apart: its front matter's ``name`` and ``description``, and its body.

The Agent Skills format (agentskills.io, the one Claude Code, Codex and opencode read) puts
YAML front matter between two ``---`` lines at the top of the file. Why no YAML library: the
only values minicode reads are two strings, and a full YAML parser on a file from a cloned
repository buys aliases, tags and typed values nobody needs here. What real skills write for
those two strings is read exactly as YAML reads it: plain, ``'single'`` and ``"double"``
quoted scalars, plain ones continued on indented lines, and block scalars (``|``, ``>``,
with ``-``/``+``). Every other key (``license``, ``metadata``, ``allowed-tools`` …) is
skipped with its indented lines, never interpreted: a skill grants nothing, so
``allowed-tools`` means nothing here. What is not YAML or not supported for the two values
(a flow collection, an alias, a tab indent, ``a: b`` in a plain value, a duplicate key) is a
``FrontMatterError`` naming the line, never a guess.

The rules of the format checked here: ``name`` 1–64 characters of lowercase letters, digits
and single hyphens inside (no leading/trailing/double ``-``), equal to the folder's name;
``description`` non-empty, at most 1,024 characters. Pure.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["DESCRIPTION_MAX_CHARS", "NAME_MAX_CHARS", "FrontMatterError", "SkillText", "parse_skill"]

NAME_MAX_CHARS = 64
DESCRIPTION_MAX_CHARS = 1024
_MAX_FRONT_LINES = 200
"""Front matter longer than this is not front matter someone meant (a missing closing line)."""
_NAME = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
_KEY = re.compile(r"([A-Za-z0-9_][A-Za-z0-9_.-]*)[ \t]*:(?:[ \t]+(.*))?$")
_READ = ("name", "description")
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "0": "\0", "\\": "\\", '"': '"', "/": "/", " ": " ",
            "a": "\a", "b": "\b", "e": "\x1b", "f": "\f", "v": "\v", "N": "\x85", "_": "\xa0"}


class FrontMatterError(ValueError):
    """What is wrong with a SKILL.md's front matter, for a notice naming the file."""


@dataclass(frozen=True, slots=True)
class SkillText:
    """A valid SKILL.md: its two values and the instructions after the front matter."""

    name: str
    description: str
    body: str


def parse_skill(text: str, folder: str) -> SkillText:
    """``text`` of ``folder``/SKILL.md; raises ``FrontMatterError`` saying what is wrong."""
    lines = text.removeprefix("\ufeff").split("\n")
    lines = [line.removesuffix("\r") for line in lines]
    if not lines or lines[0].rstrip() != "---":
        raise FrontMatterError("it does not start with front matter (a '---' line, then name: and description:)")
    end = next((i for i in range(1, min(len(lines), _MAX_FRONT_LINES + 2)) if lines[i].rstrip() == "---"), None)
    if end is None:
        raise FrontMatterError(f"its front matter has no closing '---' line within {_MAX_FRONT_LINES} lines")
    values = _values(lines[1:end])
    name, description = values.get("name"), values.get("description")
    if not name:
        raise FrontMatterError("its front matter has no name")
    if len(name) > NAME_MAX_CHARS or not _NAME.fullmatch(name):
        raise FrontMatterError(f"name {name[:80]!r} is not 1-{NAME_MAX_CHARS} lowercase letters, digits and "
                               "single hyphens (not at either end)")
    if name != folder:
        raise FrontMatterError(f"name {name!r} differs from its folder's name {folder[:80]!r}")
    if not description or not description.strip():
        raise FrontMatterError("its front matter has no description")
    if len(description) > DESCRIPTION_MAX_CHARS:
        raise FrontMatterError(f"its description is {len(description):,} characters; the limit is "
                               f"{DESCRIPTION_MAX_CHARS:,}")
    return SkillText(name, description.strip(), "\n".join(lines[end + 1 :]).strip("\n"))


def _values(lines: list[str]) -> dict[str, str]:
    """The ``name`` and ``description`` strings of the front matter's ``lines``."""
    found: dict[str, str] = {}
    seen: set[str] = set()
    i = 0
    while i < len(lines):
        number, line = i + 2, lines[i]  # line 1 is the opening ---
        i += 1
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if line[0] in " \t":
            raise FrontMatterError(f"line {number} is indented but belongs to no key")
        match = _KEY.match(line)
        if match is None:
            raise FrontMatterError(f"line {number} is not 'key: value' ({_shown(line)})")
        key, value = match.group(1), (match.group(2) or "").strip()
        if key in seen:
            raise FrontMatterError(f"line {number}: {key} is given twice")
        seen.add(key)
        start = i
        while i < len(lines) and (not lines[i].strip() or lines[i][0] in " \t"):
            i += 1
        if key in _READ:
            found[key] = _scalar(key, value, _trailing_blank_cut(lines[start:i]), number)
    return found


def _trailing_blank_cut(block: list[str]) -> list[str]:
    while block and not block[-1].strip():
        block = block[:-1]
    return block


def _scalar(key: str, value: str, more: list[str], number: int) -> str:
    """One string value that starts as ``value`` on line ``number`` and goes on in ``more``."""
    if any(line[: len(line) - len(line.lstrip(" \t"))].count("\t") for line in more):
        raise FrontMatterError(f"line {number}: {key} is indented with a tab (YAML allows only spaces)")
    if value[:1] in ("|", ">"):
        return _block(key, value, more, number)
    if value[:1] in ("'", '"'):
        return _quoted(key, " ".join([value, *(m.strip() for m in more)]) if more else value, number)
    if value[:1] in ("[", "{") or (not value and more and more[0].lstrip()[:1] in ("-", "[", "{")):
        raise FrontMatterError(f"line {number}: {key} must be a string, not a list or mapping")
    if value[:1] in ("&", "*", "!", "%", "@", "`"):
        raise FrontMatterError(f"line {number}: {key} starts with {value[0]!r}: anchors, aliases, tags and "
                               "reserved characters are not supported (quote the value)")
    parts = [value, *(m.strip() for m in more)]
    text = " ".join(p for p in (_uncommented(p) for p in parts) if p)
    if re.search(r":(\s|$)", text):
        raise FrontMatterError(f"line {number}: {key} contains ': ', which YAML reads as a mapping (quote the value)")
    return "" if text in ("~", "null", "Null", "NULL") else text


def _uncommented(part: str) -> str:
    """A plain scalar's line without its `` # comment``."""
    cut = re.search(r"(^|\s)#", part)
    return (part[: cut.start()] if cut else part).strip()


def _quoted(key: str, text: str, number: int) -> str:
    quote = text[0]
    out: list[str] = []
    i = 1
    while i < len(text):
        c = text[i]
        if c == quote:
            if quote == "'" and text[i + 1 : i + 2] == "'":
                out.append("'")
                i += 2
                continue
            rest = text[i + 1 :].strip()
            if rest and not rest.startswith("#"):
                raise FrontMatterError(f"line {number}: {key} has text after its closing quote ({_shown(rest)})")
            return "".join(out)
        if c == "\\" and quote == '"':
            i = _escape(text, i + 1, out, key, number)
            continue
        out.append(c)
        i += 1
    raise FrontMatterError(f"line {number}: {key} has no closing {quote}")


def _escape(text: str, i: int, out: list[str], key: str, number: int) -> int:
    """One escape of a double-quoted scalar at ``text[i]`` appended to ``out``; the next index."""
    c = text[i : i + 1]
    if c in _ESCAPES:
        out.append(_ESCAPES[c])
        return i + 1
    width = {"x": 2, "u": 4, "U": 8}.get(c)
    digits = text[i + 1 : i + 1 + width] if width else ""
    if width and len(digits) == width and all(d in "0123456789abcdefABCDEF" for d in digits):
        code = int(digits, 16)
        if code <= 0x10FFFF and not 0xD800 <= code <= 0xDFFF:
            out.append(chr(code))
            return i + 1 + width
    raise FrontMatterError(f"line {number}: {key} has an invalid escape \\{c}")


def _block(key: str, value: str, more: list[str], number: int) -> str:
    """A ``|`` (literal) or ``>`` (folded) block scalar, chomped as its indicator says."""
    header = _uncommented(value)
    if not re.fullmatch(r"[|>][-+]?", header):
        raise FrontMatterError(f"line {number}: {key}'s block indicator {_shown(header)} is not supported "
                               "(use |, |-, >, or >-)")
    content = [line for line in more if line.strip()]
    if not content:
        return ""
    indent = min(len(line) - len(line.lstrip(" ")) for line in content)
    rows = [line[indent:] if line.strip() else "" for line in more]
    if header[0] == "|":
        text = "\n".join(rows)
    else:  # folded: a single line break is a space; blank lines stay line breaks
        text, pending = "", 0
        for row in rows:
            if not row:
                pending += 1
                continue
            text += ("\n" * pending if pending else " ") + row if text else row
            pending = 0
    return text if header.endswith("-") else text + "\n"


def _shown(text: str) -> str:
    """A short, quoted piece of the file for a message (it is untrusted text)."""
    return repr(text[:60] + ("…" if len(text) > 60 else ""))
