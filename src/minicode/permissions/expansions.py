"""Which parameter expansions the permission parser understands: only the known-safe forms.

bash runs code from places that look like data. An indexed array's subscript, a substring
offset and every arithmetic context evaluate a variable's *value* as an expression, and an
expression such as ``a[$(touch x)]`` runs the command in it; ``${x@P}`` expands the value as
a prompt, which runs ``$(…)`` in it; ``${!x}`` uses the value as a variable name, subscript
included. ``$_`` (the previous command's last argument), ``$1``… and ``$@`` hand the model's own
text to those places. So an expansion is understood only in these forms:

- ``$NAME``, ``${NAME}``, ``${#NAME}`` (its length);
- ``${NAME:-text}``, ``${NAME-text}``, ``${NAME:+text}``, ``${NAME+text}``, ``${NAME:?text}``,
  ``${NAME?text}`` with plain text (letters, digits, ``_ . / , : % + = @ -``, spaces);
- ``${NAME#pattern}``, ``##``, ``%``, ``%%`` with a plain glob pattern (the above and ``* ?``);
- the special parameters ``$?``, ``$$``, ``$!``, ``$#``, ``$-``, ``$0``.

Everything else — every ``@`` transformation, ``!`` indirection, ``[…]`` subscripts, ``:offset``
substrings, ``/`` substitution, case changes, nested expansions, and the parameters that carry
text the model chose (``$_``, ``$1``…, ``$@``, ``$*``, ``REPLY``, ``OPTARG``, ``BASH_REMATCH``…) — is
*unclear* (``expansion_problem`` says why). Pure; standard library only.
"""

from __future__ import annotations

import re

__all__ = ["MODEL_TEXT_PARAMETERS", "expansion_problem", "name_problem"]

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_HARMLESS_SPECIALS = frozenset("?$!#-0")
MODEL_TEXT_PARAMETERS = frozenset({
    "_", "@", "*", "REPLY", "OPTARG", "MAPFILE", "BASH_REMATCH", "BASH_COMMAND", "BASH_ARGV", "BASH_ARGV0",
    "BASH_EXECUTION_STRING", "READLINE_LINE", "COMP_LINE", "COMP_WORDS",
})
"""Parameters whose value is text an earlier command (the model's) put there."""
_DEFAULT_OPS = ("-", ":-", "+", ":+", "?", ":?")
_PATTERN_OPS = ("##", "#", "%%", "%")
_PLAIN_TEXT = re.compile(r"[A-Za-z0-9_./,:%+=@ -]*")
_PLAIN_GLOB = re.compile(r"[A-Za-z0-9_./,:%+=@ *?-]*")


def name_problem(name: str) -> str | None:
    """Why expanding the parameter ``name`` is not understood, or None."""
    if name.isdigit() and name != "0":
        return f"${name} (a positional parameter: text an earlier command chose)"
    if name in MODEL_TEXT_PARAMETERS:
        what = "the previous command's last argument" if name == "_" else "text an earlier command chose"
        return f"${name} ({what})"
    return None


def expansion_problem(inner: str) -> str | None:
    """Why ``${inner}`` is not understood (see the module docstring), or None."""
    if inner.startswith("#") and len(inner) > 1:
        return _simple_name(inner[1:], f"${{{inner}}}")
    if inner.startswith("!"):
        return f"${{{_short(inner)}}} (indirection: a value used as a variable name can run code)"
    match = _NAME.match(inner) or re.match(r"[0-9]+|[?$!#@*-]", inner)
    if match is None:
        return f"${{{_short(inner)}}}"
    name, rest = match.group(), inner[match.end() :]
    problem = name_problem(name)
    if problem is not None:
        return problem
    if not rest:
        return None
    return _operator_problem(inner, rest)


def _simple_name(name: str, shown: str) -> str | None:
    if _NAME.fullmatch(name) or name in _HARMLESS_SPECIALS or name.isdigit():
        return name_problem(name)
    return f"{_short(shown)} (only ${{#NAME}} is understood)"


def _operator_problem(inner: str, rest: str) -> str | None:
    shown = f"${{{_short(inner)}}}"
    if rest.startswith("["):
        return f"{shown} (an array subscript is evaluated as arithmetic, which can run code)"
    if rest.startswith("@"):
        return f"{shown} (a @ transformation; ${{x@P}} runs commands in the value)"
    if rest.startswith((":=", "=")):
        return f"{shown} (an assignment inside an expansion)"
    for op in _PATTERN_OPS:
        if rest.startswith(op):
            return None if _PLAIN_GLOB.fullmatch(rest[len(op) :]) else f"{shown} (only a plain pattern is understood)"
    for op in sorted(_DEFAULT_OPS, key=len, reverse=True):
        if rest.startswith(op):
            return None if _PLAIN_TEXT.fullmatch(rest[len(op) :]) else f"{shown} (only plain default text is understood)"
    if rest.startswith(":"):
        return f"{shown} (a substring offset is evaluated as arithmetic, which can run code)"
    return f"{shown} (not a form minicode understands)"


def _short(text: str, limit: int = 30) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
