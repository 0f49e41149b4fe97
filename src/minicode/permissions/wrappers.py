"""Commands that run other commands: which command (or script) ``sudo``, ``env``, ``xargs``,
``timeout``, ``find -exec``, ``bash -c``, ``eval``, ``watch``, ``source`` … run, so rules see it too.

``inner_of(name, args)`` returns what a wrapper runs: words of a command, a shell script
text, files it writes itself (``find -fprint``, ``time -o``), or why it cannot tell. Options are
read with per-command tables the way getopt does — short options bundled (``-vk 1``: ``k``
takes an argument, attached or the next word), long ones with ``=`` or the next word. An
option the table does not know, or a computed argument, makes the guess unsafe: the wrapper
is then *unclear* (no rule narrower than ``bash`` allows it), and every later word that could
start the command is offered to deny rules (``candidates``), so ``env -iC . rm x`` and
``chrt 10 rm x`` are still denied by ``bash(rm *)``. Pure; standard library only.
"""

from __future__ import annotations

import re
from typing import Callable, Mapping, Sequence

from dataclasses import dataclass, field
from minicode.permissions.shell_words import Word
from minicode.permissions.wrapper_options import (
    FIND_EXEC, FIND_WRITES, HELP, OPTIONS, RUNUSER, SETARCH_ALIASES, SHELLS, SU, UNKNOWABLE, Options, fs,
)

__all__ = ["SHELLS", "WRAPPERS", "Inner", "inner_of"]

_MAX_CANDIDATES = 32


@dataclass(frozen=True, slots=True)
class Inner:
    """What a wrapper runs. ``words``: a command; ``script``: shell text (``bash -c``);
    ``writes``: files the wrapper opens for writing itself; ``unclear``: why it is unknown;
    ``candidates``: commands it might run, tried by deny rules only; ``assignments``: the
    variables ``env`` sets for ``words``."""

    words: tuple[Word, ...] = ()
    script: str | None = None
    writes: tuple[Word, ...] = ()
    unclear: str | None = None
    candidates: tuple[tuple[Word, ...], ...] = ()
    assignments: tuple[Word, ...] = ()  # env NAME=VALUE: set for ``words``





@dataclass(frozen=True, slots=True)
class _Parsed:
    rest: Sequence[Word] = ()
    values: Mapping[str, str] = field(default_factory=dict) # option → its argument ("-c" → script)
    nothing: bool = False  # an option said nothing runs
    unclear: Inner | None = None


WRAPPERS = frozenset({*OPTIONS, *UNKNOWABLE, *SETARCH_ALIASES, *SHELLS, "eval", "find", "watch", "su", "runuser",
                      "flock", "source", "."})
"""Command names whose arguments name another command (no suggested rule is offered)."""


def inner_of(name: str, args: Sequence[Word]) -> list[Inner]:
    """What the command ``name`` (a basename) runs when given ``args``; [] for nothing."""
    if name in UNKNOWABLE:
        return [_unknown(name, args, "its options are not modelled")]
    special: dict[str, Callable[[Sequence[Word]], list[Inner]]] = {
        "find": _find, "eval": _eval, "watch": _watch, "env": _env, "su": _su, "runuser": _runuser,
        "flock": _flock, "time": _time, "source": _source, ".": _source,
        "sudo": lambda a: _as_root("sudo", a), "doas": lambda a: _as_root("doas", a),
    }
    if name in special:
        return special[name](args)
    if name in SHELLS:
        return _shell(name, args)
    if name in SETARCH_ALIASES:
        return _after_options(name, args, OPTIONS["setarch"], leading=0, shell_when_empty=True)
    if name in OPTIONS:
        empty_runs_shell = name in ("setarch", "fakeroot", "chroot", "pkexec")
        return _after_options(name, args, OPTIONS[name], shell_when_empty=empty_runs_shell)
    return []


def _unknown(name: str, args: Sequence[Word], why: str) -> Inner:
    """Unclear, with every later word that could start the command as a candidate — computed
    ones too (``sudo r${x}m``: deny rules match it as a template)."""
    starts = [k for k, w in enumerate(args) if w.value and not w.value.startswith("-")]
    return Inner(unclear=f"could not tell which command {name} runs ({why})",
                 candidates=tuple(tuple(args[k:]) for k in starts[:_MAX_CANDIDATES]))


def _after_options(name: str, args: Sequence[Word], spec: Options, *, leading: int | None = None,
                   shell_when_empty: bool = False) -> list[Inner]:
    parsed = _parse(name, args, spec, leading)
    if parsed.unclear is not None:
        return [parsed.unclear]
    if parsed.nothing:
        return []  # sudo -l, command -v x
    if not parsed.rest:
        return [Inner(unclear=f"{name} without a command runs a shell that reads its input")] if shell_when_empty else []
    return [Inner(words=tuple(parsed.rest))]


def _parse(name: str, args: Sequence[Word], spec: Options, leading: int | None = None) -> _Parsed:
    """Options as getopt reads them (see the module docstring)."""
    k = spec.leading if leading is None else leading
    values: dict[str, str] = {}
    while k < len(args):
        word = args[k]
        if not word.static:
            return _Parsed(unclear=_unknown(name, args, "computed arguments"))
        value = word.value
        if value == "--":
            k += 1
            break
        if not value.startswith("-") or value == "-":
            break
        if value in spec.stop:
            return _Parsed(nothing=True)
        step = _long(value, args, k, spec, values) if value.startswith("--") else _short(value, args, k, spec, values)
        if step is None:
            return _Parsed(unclear=_unknown(name, args, f"the option {value.partition('=')[0]}"))
        if step == 0:
            return _Parsed(nothing=True)
        k += step
    k += spec.positional
    return _Parsed(rest=args[k:] if k <= len(args) else (), values=values)


def _long(value: str, args: Sequence[Word], k: int, spec: Options, values: dict[str, str]) -> int | None:
    option, eq, attached = value.partition("=")
    if option in spec.stop:
        return 0
    if option in spec.long_args:
        if eq:
            values[option] = attached
            return 1
        if k + 1 < len(args):
            values[option] = args[k + 1].value
        return 2
    if option in spec.long_optional or (option in spec.long_flags and not eq):
        return 1
    return None


def _short(value: str, args: Sequence[Word], k: int, spec: Options, values: dict[str, str]) -> int | None:
    """A bundle of short options: the number of words it takes, 0 for a stop, None unknown."""
    if spec.digits and value[1:].isdigit():
        return 1
    for j in range(1, len(value)):
        letter = value[j]
        if "-" + letter in spec.stop:
            return 0
        if letter in spec.with_arg:
            if j + 1 < len(value):
                values["-" + letter] = value[j + 1 :]
                return 1
            if k + 1 < len(args):
                values["-" + letter] = args[k + 1].value
            return 2
        if letter in spec.optional:
            return 1  # the rest of the bundle is its argument
        if letter not in spec.flags:
            return None
    return 1


def _env(args: Sequence[Word]) -> list[Inner]:
    if any(w.static and w.value.startswith("-") and not w.value.startswith("--") and "S" in w.value
           or w.static and w.value.startswith("--split-string") for w in args):
        return [_unknown("env", args, "env -S splits a string into a command")]
    parsed = _parse("env", [w for w in args if not (w.static and w.value == "-")], OPTIONS["env"])
    if parsed.unclear is not None:
        return [parsed.unclear]
    rest = list(parsed.rest)
    k = 0
    while k < len(rest) and rest[k].static and "=" in rest[k].value and not rest[k].value.startswith("="):
        k += 1  # NAME=VALUE settings before the command
    return [Inner(words=tuple(rest[k:]), assignments=tuple(rest[:k]))] if rest[k:] else []


def _as_root(name: str, args: Sequence[Word]) -> list[Inner]:
    """``sudo``/``doas``: the command after the options; without one, ``-s``/``-i``
    (``--shell``, ``--login``) run a shell that reads its input (``sudo -s <<< 'rm x'``)."""
    found = _after_options(name, args, OPTIONS[name])
    if found or not any(w.static and (w.value in ("--shell", "--login") or w.value[:1] == "-" and w.value[1:2] != "-"
                                      and ("s" in w.value or "i" in w.value)) for w in args):
        return found
    return [Inner(unclear=f"{name} runs a shell that reads its input")]


def _time(args: Sequence[Word]) -> list[Inner]:
    parsed = _parse("time", args, OPTIONS["time"])
    if parsed.unclear is not None or parsed.nothing:
        return [parsed.unclear] if parsed.unclear is not None else []
    output = parsed.values.get("-o") or parsed.values.get("--output")
    found = [Inner(writes=(Word(output, output),))] if output else []
    return [*found, Inner(words=tuple(parsed.rest))] if parsed.rest else found


def _shell(name: str, args: Sequence[Word]) -> list[Inner]:
    """``bash -c SCRIPT``: the script; ``bash FILE``: nothing seen (a script file runs);
    ``bash`` or ``bash -s``: commands from its input, which no rule can judge."""
    k, command_mode = 0, False
    while k < len(args):
        word = args[k]
        if not word.static:
            return [_unknown(name, args, "computed arguments")]
        value = word.value
        if value == "--":
            k += 1
            break
        if value in ("-o", "+o", "-O", "+O", "--rcfile", "--init-file"):
            k += 2
            continue
        if value.startswith("--") or (value[:1] in "-+" and len(value) > 1):
            if value[:1] == "-" and not value.startswith("--") and "c" in value:
                command_mode = True
            if value[:1] == "-" and not value.startswith("--") and ("s" in value or "i" in value):
                return [Inner(unclear=f"{name} reads the commands it runs from its input")]
            k += 1
            continue
        break
    if command_mode:
        if k >= len(args):
            return [Inner(unclear=f"{name} -c without a command")]
        return [Inner(script=args[k].value)] if args[k].static else [
            Inner(unclear=f"could not tell what {name} -c runs (a computed script)", candidates=((args[k],),))
        ]
    if k >= len(args) or _INPUT.fullmatch(args[k].value):
        return [Inner(unclear=f"{name} reads the commands it runs from its input")]
    return []  # a script file: a program of the project's (like ./run.sh)


_INPUT = re.compile(r"-|/dev/(stdin|fd/[0-9]+)|/proc/(self|[0-9]+)/fd/[0-9]+")
"""Script files that are the command's own input (``bash /dev/stdin <<< 'rm x'``)."""


def _source(args: Sequence[Word]) -> list[Inner]:
    """``source FILE`` / ``. FILE`` runs the file's commands in this shell: a file of the
    project's is a program like ``./run.sh``; the command's own input, a process
    substitution (``. <(echo rm x)``) or a computed name hides what runs."""
    if not args:
        return []
    script = args[0]
    if not script.static or _INPUT.fullmatch(script.value):
        return [Inner(unclear=f"source runs commands from its input or a computed file ({script.raw[:40]})")]
    return []




def _su(args: Sequence[Word]) -> list[Inner]:
    """``su [options] [-] [user [args]]``: ``-c`` runs a script; the args go to the user's shell."""
    return _run_as("su", [w for w in args if not (w.static and w.value == "-")], SU)


def _runuser(args: Sequence[Word]) -> list[Inner]:
    """``runuser -u user [--] command`` runs the command; otherwise like ``su``."""
    return _run_as("runuser", [w for w in args if not (w.static and w.value == "-")], RUNUSER)


def _run_as(name: str, args: Sequence[Word], spec: Options) -> list[Inner]:
    parsed = _parse(name, args, spec)
    if parsed.unclear is not None or parsed.nothing:
        return [parsed.unclear] if parsed.unclear is not None else []
    script = parsed.values.get("-c") or parsed.values.get("--command") or parsed.values.get("--session-command")
    if script is not None:
        return [Inner(script=script)]
    if "-u" in parsed.values or "--user" in parsed.values:
        return [Inner(words=tuple(parsed.rest))] if parsed.rest else []
    if len(parsed.rest) > 1:  # arguments for the user's shell (su user -c …, a script)
        return [_unknown(name, args, "arguments for the user's shell")]
    return [Inner(unclear=f"{name} runs a shell that reads its input")]


def _flock(args: Sequence[Word]) -> list[Inner]:
    spec = Options("sxnuoFv", "wEc", long_flags=fs("--shared", "--exclusive", "--nonblock", "--nb", "--unlock",
                                                      "--close", "--no-fork", "--verbose"),
                    long_args=fs("--timeout", "--wait", "--conflict-exit-code", "--command"), stop=HELP)
    parsed = _parse("flock", args, spec)
    if parsed.unclear is not None or parsed.nothing:
        return [parsed.unclear] if parsed.unclear is not None else []
    script = parsed.values.get("-c") or parsed.values.get("--command")
    if script is not None:
        return [Inner(script=script)]
    rest = parsed.rest[1:]  # the lock file (or a descriptor: then nothing runs)
    return [Inner(words=tuple(rest))] if rest else []


def _eval(args: Sequence[Word]) -> list[Inner]:
    if all(w.static for w in args):
        # Seen for deny rules; eval itself stays unclear, so no allow rule covers it.
        return [Inner(unclear="eval runs text as a command"), Inner(script=" ".join(w.value for w in args))]
    return [Inner(unclear="eval runs text as a command", candidates=(tuple(args),) if args else ())]


def _watch(args: Sequence[Word]) -> list[Inner]:
    spec = Options("bBceghptwx", "nqd", long_flags=fs("--beep", "--color", "--no-color", "--errexit", "--exec",
                                                         "--chgexit", "--no-title", "--no-wrap", "--precise",
                                                         "--no-linewrap"),
                    long_args=fs("--interval", "--equexit"), long_optional=fs("--differences"), stop=HELP)
    parsed = _parse("watch", args, spec)
    if parsed.unclear is not None or not parsed.rest:
        return [parsed.unclear] if parsed.unclear is not None else []
    if not all(w.static for w in parsed.rest):
        return [_unknown("watch", args, "computed arguments")]
    return [Inner(script=" ".join(w.value for w in parsed.rest))]  # watch runs its words with sh -c


def _find(args: Sequence[Word]) -> list[Inner]:
    found: list[Inner] = []
    k = 0
    while k < len(args):
        if not args[k].static:  # a computed word could be -exec, -delete or -fprint
            return [*found, _unknown("find", args, "computed arguments")]
        value = args[k].value
        if value in FIND_EXEC:
            end = next((j for j in range(k + 1, len(args)) if args[j].static and args[j].value in (";", "+")), None)
            if end is None or end == k + 1:
                return [*found, Inner(unclear=f"could not read find {value}")]
            found.append(Inner(words=tuple(args[k + 1 : end])))
            k = end + 1
            continue
        if value in FIND_WRITES:
            if k + 1 >= len(args):
                return [*found, Inner(unclear=f"could not read find {value}")]
            found.append(Inner(writes=(args[k + 1],)))
            k += 1 + FIND_WRITES[value]
            continue
        k += 1
    return found
