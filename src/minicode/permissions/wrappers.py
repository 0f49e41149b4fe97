"""Commands that run other commands: which command (or script) ``sudo``, ``env``, ``xargs``,
``timeout``, ``find -exec``, ``bash -c``, ``eval``, ``watch`` … run, so rules see it too.

``inner_of(name, args)`` returns what a wrapper runs: words of a command, a shell script
text, files it writes itself (``find -fprint``), or why it cannot tell (then nothing that
wrapper runs can be allowed by a rule narrower than ``bash``). Options are skipped with
small per-command tables; an option we do not know that might take an argument makes the
guess unsafe, so only the options listed here are trusted. Pure; standard library only.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

from minicode.permissions.shell_words import Word

__all__ = ["SHELLS", "WRAPPERS", "Inner", "inner_of"]


@dataclass(frozen=True, slots=True)
class Inner:
    """What a wrapper runs. ``words``: a command; ``script``: shell text (``bash -c``);
    ``writes``: files the wrapper opens for writing itself; ``unclear``: why it is unknown."""

    words: tuple[Word, ...] = ()
    script: str | None = None
    writes: tuple[Word, ...] = ()
    unclear: str | None = None


@dataclass(frozen=True, slots=True)
class _Options:
    with_arg: frozenset[str] = frozenset()  # options whose argument is the next word
    stop: frozenset[str] = frozenset()  # options after which nothing is run (sudo -l, command -v)
    positional: int = 0  # words between the options and the command (timeout's DURATION)


SHELLS = frozenset({"bash", "sh", "zsh", "dash", "ksh", "mksh", "ash", "yash"})

_OPTIONS: dict[str, _Options] = {
    "sudo": _Options(
        frozenset({"-u", "-g", "-h", "-p", "-C", "-D", "-r", "-t", "-U", "-T", "--user", "--group", "--host",
                   "--prompt", "--close-from", "--chdir", "--role", "--type", "--other-user", "--command-timeout"}),
        frozenset({"-e", "--edit", "-l", "--list", "-v", "--validate", "-k", "-K", "--reset-timestamp",
                   "--remove-timestamp", "-V", "--version", "--help"}),
    ),
    "doas": _Options(frozenset({"-u", "-C"}), frozenset({"-L"})),
    "nice": _Options(frozenset({"-n", "--adjustment"})),
    "nohup": _Options(),
    "setsid": _Options(),
    "time": _Options(frozenset({"-f", "-o", "--format", "--output"})),
    "timeout": _Options(frozenset({"-s", "-k", "--signal", "--kill-after"}), positional=1),
    "stdbuf": _Options(frozenset({"-i", "-o", "-e", "--input", "--output", "--error"})),
    "ionice": _Options(frozenset({"-c", "-n", "--class", "--classdata"}), frozenset({"-p", "-P", "-u", "--pid",
                                                                                     "--pgid", "--uid"})),
    "unbuffer": _Options(),
    "busybox": _Options(),
    "command": _Options(stop=frozenset({"-v", "-V"})),
    "builtin": _Options(),
    "exec": _Options(frozenset({"-a"})),
    "xargs": _Options(frozenset({"-a", "-d", "-E", "-I", "-L", "-n", "-P", "-s", "--arg-file", "--delimiter",
                                 "--max-lines", "--max-args", "--max-procs", "--max-chars", "--process-slot-var"})),
    "env": _Options(frozenset({"-u", "--unset", "-C", "--chdir"})),
}
_UNKNOWABLE = {
    "chrt": "chrt", "taskset": "taskset", "flock": "flock", "parallel": "parallel", "script": "script",
    "nsenter": "nsenter", "unshare": "unshare", "chroot": "chroot", "firejail": "firejail", "strace": "strace",
    "ltrace": "ltrace", "gdb": "gdb", "valgrind": "valgrind", "perf": "perf", "systemd-run": "systemd-run",
}
_FIND_EXEC = frozenset({"-exec", "-execdir", "-ok", "-okdir"})
_FIND_WRITES = {"-fprint": 1, "-fprint0": 1, "-fls": 1, "-fprintf": 2}

WRAPPERS = frozenset({*_OPTIONS, *_UNKNOWABLE, *SHELLS, "eval", "find", "watch", "su", "runuser"})
"""Command names whose arguments name another command (no suggested rule is offered)."""


def inner_of(name: str, args: Sequence[Word]) -> list[Inner]:
    """What the command ``name`` (a basename) runs when given ``args``; [] for nothing."""
    if name in _UNKNOWABLE:
        return [Inner(unclear=f"could not tell which command {name} runs")]
    special: dict[str, Callable[[Sequence[Word]], list[Inner]]] = {
        "find": _find, "eval": _eval, "watch": _watch, "env": _env, "su": _su, "runuser": _su,
    }
    if name in special:
        return special[name](args)
    if name in SHELLS:
        return _shell(name, args)
    if name in _OPTIONS:
        return _after_options(name, args, _OPTIONS[name])
    return []


def _after_options(name: str, args: Sequence[Word], spec: _Options) -> list[Inner]:
    rest = _skip_options(name, args, spec)
    if isinstance(rest, Inner):
        return [rest]
    if rest is None or not rest:
        return []  # nothing is run (sudo -l, command -v x, exec with redirections only)
    return [Inner(words=tuple(rest))]


def _skip_options(name: str, args: Sequence[Word], spec: _Options) -> Sequence[Word] | Inner | None:
    """The words after the options (and positional arguments); None when the options say
    nothing runs; an unclear Inner when an option cannot be read."""
    k = 0
    while k < len(args):
        word = args[k]
        if not word.static:
            return Inner(unclear=f"could not tell which command {name} runs (computed arguments)")
        value = word.value
        if value == "--":
            k += 1
            break
        if not value.startswith("-") or value == "-":
            break
        if value in spec.stop:
            return None
        k += 2 if value in spec.with_arg else 1
    k += spec.positional
    return args[k:] if k <= len(args) else []


def _env(args: Sequence[Word]) -> list[Inner]:
    if any(w.static and (w.value in ("-S", "--split-string") or w.value.startswith("--split-string=")) for w in args):
        return [Inner(unclear="could not tell which command env -S runs")]
    rest = _skip_options("env", args, _OPTIONS["env"])
    if not isinstance(rest, Sequence):
        return [rest] if isinstance(rest, Inner) else []
    k = 0
    while k < len(rest) and rest[k].static and "=" in rest[k].value and not rest[k].value.startswith("="):
        k += 1  # NAME=VALUE settings before the command
    return [Inner(words=tuple(rest[k:]))] if rest[k:] else []


def _shell(name: str, args: Sequence[Word]) -> list[Inner]:
    """``bash -c SCRIPT``: the script; ``bash FILE``: nothing seen (a script file runs);
    ``bash`` or ``bash -s``: commands from its input, which no rule can judge."""
    k, command_mode = 0, False
    while k < len(args):
        word = args[k]
        if not word.static:
            return [Inner(unclear=f"could not tell what {name} runs (computed arguments)")]
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
            Inner(unclear=f"could not tell what {name} -c runs (a computed script)")
        ]
    if k >= len(args):
        return [Inner(unclear=f"{name} reads the commands it runs from its input")]
    return []


def _su(args: Sequence[Word]) -> list[Inner]:
    for k, word in enumerate(args):
        if not word.static:
            return [Inner(unclear="could not tell what su runs (computed arguments)")]
        if word.value in ("-c", "--command") and k + 1 < len(args):
            script = args[k + 1]
            return [Inner(script=script.value)] if script.static else [Inner(unclear="su -c runs a computed script")]
        if word.value.startswith("--command="):
            return [Inner(script=word.value.partition("=")[2])]
    return []


def _eval(args: Sequence[Word]) -> list[Inner]:
    unclear = Inner(unclear="eval runs text as a command")
    if all(w.static for w in args):
        # Seen for deny rules; eval itself stays unclear, so no allow rule covers it.
        return [unclear, Inner(script=" ".join(w.value for w in args))]
    return [unclear]


def _watch(args: Sequence[Word]) -> list[Inner]:
    spec = _Options(frozenset({"-n", "--interval", "-q", "--equexit"}))
    rest = _skip_options("watch", args, spec)
    if isinstance(rest, Inner) or not rest:
        return [rest] if isinstance(rest, Inner) else []
    if not all(w.static for w in rest):
        return [Inner(unclear="could not tell what watch runs (computed arguments)")]
    return [Inner(script=" ".join(w.value for w in rest))]  # watch runs its words with sh -c


def _find(args: Sequence[Word]) -> list[Inner]:
    found: list[Inner] = []
    k = 0
    while k < len(args):
        value = args[k].value if args[k].static else ""
        if value in _FIND_EXEC:
            end = next((j for j in range(k + 1, len(args)) if args[j].static and args[j].value in (";", "+")), None)
            if end is None or end == k + 1:
                return [*found, Inner(unclear=f"could not read find {value}")]
            found.append(Inner(words=tuple(args[k + 1 : end])))
            k = end + 1
            continue
        if value in _FIND_WRITES:
            if k + 1 >= len(args):
                return [*found, Inner(unclear=f"could not read find {value}")]
            found.append(Inner(writes=(args[k + 1],)))
            k += 1 + _FIND_WRITES[value]
            continue
        k += 1
    return found
