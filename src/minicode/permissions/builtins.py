"""bash builtins that turn plain-looking arguments into code, and variables that hold code.

A builtin that takes a variable *name* evaluates it as an lvalue: in ``printf -v 'a[$(cmd)]' x``,
``test -v 'a[$(cmd)]'``, ``read 'a[$(cmd)]'`` or ``declare 'a[$(cmd)]=1'`` the subscript is
arithmetic and runs the command — with nothing but single-quoted arguments. So a name must
be a plain identifier (``x``, ``my_var``), else the command is unclear. ``let`` is arithmetic;
``declare``/``local``/``typeset``/``export``/``readonly`` with options (``-n`` namerefs, ``-i``
integers) make later plain expansions evaluate code. ``trap`` and ``alias`` store code that
runs later, ``enable`` loads builtins, ``hash -p`` renames programs, ``fc`` reruns history:
unclear, and the code they store is shown to deny rules.

Some variables hold code or decide what runs (``PS4`` with ``set -x``, ``BASH_ENV``, ``PATH``,
``LD_PRELOAD``, ``GIT_SSH_COMMAND``, ``PAGER`` …): assigning one is unclear too.
Pure; standard library only.
"""

from __future__ import annotations

import re
from typing import Callable, Sequence

from dataclasses import dataclass
from minicode.permissions.shell_words import Word

__all__ = ["BuiltinFinding", "check_builtin", "code_variable_problem", "split_assignment"]

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_CODE_VARIABLES = frozenset({
    "PS0", "PS1", "PS2", "PS3", "PS4", "PROMPT_COMMAND", "BASH_ENV", "ENV", "SHELLOPTS", "BASHOPTS", "PATH",
    "CDPATH", "GLOBIGNORE", "LD_PRELOAD", "LD_LIBRARY_PATH", "LD_AUDIT", "PYTHONPATH", "PYTHONSTARTUP", "PYTHONHOME",
    "NODE_OPTIONS", "NODE_PATH", "PERL5OPT", "PERL5LIB", "RUBYOPT", "RUBYLIB", "GIT_SSH", "GIT_SSH_COMMAND",
    "GIT_EXTERNAL_DIFF", "GIT_PAGER", "GIT_EDITOR", "GIT_SEQUENCE_EDITOR", "GIT_ASKPASS", "GIT_PROXY_COMMAND",
    "GIT_CONFIG", "GIT_CONFIG_PARAMETERS", "GIT_CONFIG_COUNT", "GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM",
    "GIT_EXEC_PATH", "GIT_TEMPLATE_DIR", "GIT_DIR", "GIT_COMMON_DIR", "GIT_WORK_TREE", "PAGER", "MANPAGER", "EDITOR",
    "VISUAL", "LESSOPEN", "LESSCLOSE", "SSH_ASKPASS", "SUDO_ASKPASS", "BROWSER", "TERMINAL", "SHELL",
})
_CODE_PREFIXES = ("BASH_FUNC_", "GIT_CONFIG_KEY_", "GIT_CONFIG_VALUE_")
_DECLARERS = frozenset({"declare", "typeset", "local", "export", "readonly"})


@dataclass(frozen=True, slots=True)
class BuiltinFinding:
    """What a builtin does that rules must know: ``unclear`` why it is not understood;
    ``scripts`` code it stores or runs (deny rules are tried on it); ``unknown`` variables
    it sets to values no one can know beforehand (``read x``); ``assigns`` variables it sets
    to a word (``export x=…``)."""

    unclear: str | None = None
    scripts: tuple[str, ...] = ()
    unknown: tuple[str, ...] = ()
    assigns: tuple[tuple[str, Word], ...] = ()


def code_variable_problem(name: str) -> str | None:
    """Why assigning ``name`` is unclear (it holds code or decides what runs), or None."""
    if name in _CODE_VARIABLES or name.startswith(_CODE_PREFIXES):
        return f"an assignment to {name} (it decides what runs)"
    return None


def split_assignment(word: Word) -> tuple[str, Word] | None:
    """``NAME=VALUE`` (or ``+=``) as (NAME, the VALUE word), None when it is not one."""
    match = re.match(r"([A-Za-z_][A-Za-z0-9_]*)\+?=", word.value)
    if match is None:
        return None
    prefix = match.group()
    pieces = word.pieces
    if not pieces or not isinstance(pieces[0], str) or not pieces[0].startswith(prefix):
        return None  # the name itself came from an expansion
    rest = (pieces[0][len(prefix) :], *pieces[1:])
    parts = tuple(p for p in rest if p != "")
    value = word.value[len(prefix) :]
    static = word.static
    return match.group(1), Word(word.raw, value, static, () if static else parts, word.brace)


def check_builtin(name: str, args: Sequence[Word]) -> BuiltinFinding | None:
    """The finding for the builtin ``name`` with ``args``, or None when it is not one of these."""
    checker = _CHECKERS.get(name)
    if checker is not None:
        return checker(args)
    if name in _DECLARERS:
        return _declare(name, args)
    return None


def _name_problem(word: Word | None, builtin: str) -> str | None:
    if word is None:
        return None
    if not word.static or not _IDENTIFIER.fullmatch(word.value):
        return (f"{builtin} with the variable name {_short(word.raw)}: a name with a subscript or an expansion "
                "is evaluated, which can run code")
    return code_variable_problem(word.value)


def _first_problem(words: Sequence[Word | None], builtin: str) -> str | None:
    return next((p for p in (_name_problem(w, builtin) for w in words) if p is not None), None)


def _options_and_operands(args: Sequence[Word], with_arg: str) -> tuple[dict[str, Word | None], list[Word]] | None:
    """getopt-style short options of a builtin: {"-a": its word}, then the operands; None
    when an option is computed."""
    options: dict[str, Word | None] = {}
    k = 0
    while k < len(args):
        word = args[k]
        if not word.static:
            return None
        value = word.value
        if value == "--":
            k += 1
            break
        if not value.startswith("-") or value == "-":
            break
        for j in range(1, len(value)):
            letter = value[j]
            if letter in with_arg:
                if j + 1 < len(value):
                    options["-" + letter] = Word(value[j + 1 :], value[j + 1 :])
                else:
                    options["-" + letter] = args[k + 1] if k + 1 < len(args) else None
                    k += 1
                break
            options["-" + letter] = None
        k += 1
    return options, list(args[k:])


def _read(args: Sequence[Word]) -> BuiltinFinding:
    parsed = _options_and_operands(args, "adinNptu")
    if parsed is None:
        return BuiltinFinding("read with computed options")
    options, names = parsed
    targets: list[Word | None] = [*names, options.get("-a")]
    problem = _first_problem(targets, "read")
    shown = [w.value for w in targets if w is not None] or ["REPLY"]
    return BuiltinFinding(problem, unknown=tuple(shown))


def _mapfile(args: Sequence[Word]) -> BuiltinFinding:
    parsed = _options_and_operands(args, "dnOsuCc")
    if parsed is None:
        return BuiltinFinding("mapfile with computed options")
    options, names = parsed
    if "-C" in options:
        return BuiltinFinding("mapfile -C runs a callback")
    problem = _first_problem(names[:1], "mapfile")
    return BuiltinFinding(problem, unknown=tuple(w.value for w in names[:1]) or ("MAPFILE",))


def _printf(args: Sequence[Word]) -> BuiltinFinding | None:
    parsed = _options_and_operands(args[:2], "v")
    if parsed is None or "-v" not in parsed[0]:
        return None
    target = parsed[0]["-v"]
    return BuiltinFinding(_name_problem(target, "printf -v"), unknown=(target.value,) if target else ())


def _test(args: Sequence[Word]) -> BuiltinFinding | None:
    operands = [args[k + 1] for k, w in enumerate(args[:-1]) if w.static and w.value in ("-v", "-R")]
    problem = _first_problem(operands, "test -v")
    return BuiltinFinding(problem) if problem else None


def _declare(name: str, args: Sequence[Word]) -> BuiltinFinding:
    words = [w for w in args if not (w.static and w.value in ("-p", "--"))]
    if any(not w.static or w.value[:1] in "-+" for w in words if split_assignment(w) is None):
        if any(not w.static and split_assignment(w) is None for w in words):
            return BuiltinFinding(f"{name} with a computed name")
        option = next(w.value for w in words if w.value[:1] in "-+" and split_assignment(w) is None)
        return BuiltinFinding(f"{name} {option} (namerefs and integer variables make later expansions run code)")
    assigns: list[tuple[str, Word]] = []
    for word in words:
        split = split_assignment(word)
        variable = split[0] if split else word.value
        problem = _name_problem(Word(variable, variable), name)
        if problem is not None:
            return BuiltinFinding(problem)
        if split is not None:
            assigns.append(split)
    return BuiltinFinding(assigns=tuple(assigns))


def _unset(args: Sequence[Word]) -> BuiltinFinding:
    names = [w for w in args if not (w.static and w.value in ("-v", "-f", "-n", "--"))]
    return BuiltinFinding(_first_problem(names, "unset"))


def _getopts(args: Sequence[Word]) -> BuiltinFinding:
    target = args[1] if len(args) > 1 else None
    return BuiltinFinding(_name_problem(target, "getopts"), unknown=(target.value, "OPTARG") if target else ())


def _wait(args: Sequence[Word]) -> BuiltinFinding | None:
    parsed = _options_and_operands(args, "p")
    if parsed is None or "-p" not in parsed[0]:
        return None
    target = parsed[0]["-p"]
    return BuiltinFinding(_name_problem(target, "wait -p"), unknown=(target.value,) if target else ())


def _trap(args: Sequence[Word]) -> BuiltinFinding | None:
    operands = [w for w in args if not (w.static and w.value in ("-l", "-p", "--"))]
    if len(operands) < 2 or (operands[0].static and operands[0].value in ("", "-")):
        return None  # printing, or resetting/ignoring signals
    action = operands[0]
    scripts = (action.value,) if action.static else ()
    return BuiltinFinding("trap stores a command that runs later", scripts=scripts)


def _alias(args: Sequence[Word]) -> BuiltinFinding | None:
    definitions = [split_assignment(w) for w in args if "=" in w.value]
    if not definitions:
        return None
    scripts = tuple(d[1].value for d in definitions if d is not None)
    return BuiltinFinding("alias defines a command that runs later", scripts=scripts)


def _hash(args: Sequence[Word]) -> BuiltinFinding | None:
    if any(not w.static or (w.value.startswith("-") and "p" in w.value) for w in args):
        return BuiltinFinding("hash -p makes a command name run another program")
    return None


def _completion(args: Sequence[Word]) -> BuiltinFinding | None:
    if any(not w.static or (w.value.startswith("-") and ("C" in w.value or "F" in w.value)) for w in args):
        return BuiltinFinding("a completion command that runs a command")
    return None


_CHECKERS: dict[str, Callable[[Sequence[Word]], BuiltinFinding | None]] = {
    "read": _read, "mapfile": _mapfile, "readarray": _mapfile, "printf": _printf, "test": _test, "[": _test,
    "unset": _unset, "getopts": _getopts, "wait": _wait, "trap": _trap, "alias": _alias, "hash": _hash,
    "compgen": _completion, "complete": _completion,
    "let": lambda args: BuiltinFinding("let evaluates arithmetic, which can run code"),
    "enable": lambda args: BuiltinFinding("enable loads or switches off builtins"),
    "fc": lambda args: BuiltinFinding("fc runs commands from the history"),
}


def _short(text: str, limit: int = 40) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
