"""sed scripts that run a command or write a file: GNU sed's ``e`` command and ``s///e`` flag
run a shell, ``w``/``W`` and ``s///w`` write a file, ``-f`` runs a script file no one can see.
``sed_problem`` reads the options and the script (addresses, commands, substitutions) and
says why a script is not harmless; text it cannot read counts. Pure; standard library only.
"""

from __future__ import annotations

import re
from typing import Sequence

from minicode.permissions.shell_words import Word

__all__ = ["sed_problem"]


def sed_problem(name: str, args: Sequence[Word]) -> str | None:
    """sed's ``e`` command and ``s///e`` run a shell; ``w``/``W`` and ``s///w`` write a file."""
    scripts: list[str] = []
    operands: list[str] = []
    k = 0
    while k < len(args):
        word = args[k]
        value = word.value
        if not word.static:
            return f"{name} with a computed argument ({_short(word.raw)})"
        k += 1
        if value.startswith("--"):
            option, eq, rest = value.partition("=")
            if option == "--sandbox":
                return None  # GNU sed refuses e, w and r then
            if option.startswith("--f"):
                return f"{name} {option} runs a script file minicode cannot see"
            if option.startswith("--e"):
                scripts.append(rest if eq else (args[k].value if k < len(args) else ""))
                k += 0 if eq else 1
            elif option.startswith("--l") and not eq:
                k += 1  # --line-length N
            continue
        if value.startswith("-") and len(value) > 1:
            for j, letter in enumerate(value[1:], start=1):
                attached = value[j + 1 :]
                if letter == "f":
                    return f"{name} -f runs a script file minicode cannot see"
                if letter == "e":
                    scripts.append(attached if attached else (args[k].value if k < len(args) else ""))
                    k += 0 if attached else 1
                    break
                if letter in "il":
                    k += 1 if letter == "l" and not attached else 0
                    break  # -i.bak: a suffix; -l N: a number
            continue
        operands.append(value)
    if not scripts and operands:
        scripts.append(operands[0])
    for script in scripts:
        problem = _sed_script_problem(script)
        if problem is not None:
            return f"{name} script {_short(script)}: {problem}"
    return None


_SED_ADDRESS = re.compile(r"[+~]?(?:[0-9]+(?:~[0-9]+)?|\$|/(?:[^/\\\n]|\\.)*/[IM]*|\\([^\n\\])(?:(?!\1).)*\1[IM]*)")


def _sed_script_problem(script: str) -> str | None:
    """Why a sed script may run a command or write a file, or None; unreadable text counts."""
    pos = 0
    while pos < len(script):
        char = script[pos]
        if char in " \t\n;{}!":
            pos += 1
            continue
        match = _SED_ADDRESS.match(script, pos)
        end = match.end() if match else pos
        if end > pos:
            pos = end
            if pos < len(script) and script[pos] == ",":
                pos += 1
            continue
        if char in "ewW":
            return "the e command runs a shell" if char == "e" else "the w command writes a file"
        if char in "sy":
            pos = _sed_substitution(script, pos)
            if pos < 0:
                return "a substitution minicode cannot read"
            flags = re.match(r"[0-9gpiImMeEw]*", script[pos:])
            flag_text = flags.group() if flags else ""
            if "e" in flag_text:
                return "the e flag runs the result as a command"
            if "w" in flag_text:
                return "the w flag writes a file"
            pos += len(flag_text)
            continue
        if char in "aic#":
            end = script.find("\n", pos)
            pos = len(script) if end < 0 else end  # text to the end of the line
            continue
        if char in "bt:TlLqQv":
            end = min((i for i in (script.find(";", pos), script.find("\n", pos)) if i >= 0), default=len(script))
            pos = end
            continue
        if char in "pPdDnNgGhHxz=F":
            pos += 1
            continue
        if char in "rR":
            end = script.find("\n", pos)
            pos = len(script) if end < 0 else end
            continue
        return f"the command {char!r} is not one minicode knows"
    return None


def _sed_substitution(script: str, pos: int) -> int:
    """The position after ``s/pattern/replacement/`` (or ``y/…/…/``), or -1."""
    if pos + 1 >= len(script):
        return -1
    delimiter = script[pos + 1]
    if delimiter in "\\\n":
        return -1
    k = pos + 2
    for _ in range(2):
        while k < len(script) and script[k] != delimiter:
            k += 2 if script[k] == "\\" else 1
        if k >= len(script):
            return -1
        k += 1
    return k


def _short(text: str, limit: int = 40) -> str:
    one_line = " ".join(text.split())
    return one_line if len(one_line) <= limit else one_line[: limit - 1] + "…"
