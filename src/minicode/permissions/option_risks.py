"""Options that make an ordinary-looking program run code or write a file it names.

A rule such as ``bash(tar *)``, ``bash(sort *)`` or ``bash(git log *)`` reads as "list archives",
"sort", "show history", yet ``tar --checkpoint-action=exec=…``, ``zip -TT …``, ``man -P …``,
``make --eval …``, ``sed '1e cmd'`` and ``awk 'BEGIN{system(…)}'`` run programs, and
``sort -o ../x``, ``git log --output=../x``, ``tee ../x``, ``dd of=../x`` or ``pytest --basetemp=…``
write (or empty) a file anywhere. ``check_options(name, args)`` finds these, so a rule
stays as narrow in effect as it is in name:

- ``unclear``: the command runs code given in its arguments (or it cannot be told); it is
  then allowed only by the bare ``bash`` rule — asked otherwise;
- ``writes``: files it writes, which need a ``write`` rule like a redirection (``>``).

Editors (``vim``, ``ex``, ``emacs`` …) run commands from their options, their input and the
files they open: always unclear. Pure; standard library only.
"""

from __future__ import annotations

import re
from typing import Sequence

from dataclasses import dataclass
from minicode.permissions.sed_script import sed_problem
from minicode.permissions.shell_words import Word

__all__ = ["OptionFinding", "check_options"]


@dataclass(frozen=True, slots=True)
class OptionFinding:
    unclear: str | None = None
    writes: tuple[Word, ...] = ()


@dataclass(frozen=True, slots=True)
class _Table:
    runs: frozenset[str] = frozenset()
    """Options (long, or short letters as ``-X``) whose use runs a program or code."""
    writes: frozenset[str] = frozenset()
    """Options whose value is a file the program writes."""
    short_with_arg: str = ""
    """Short option letters that take an argument (getopt), so ``-ofile`` is read right."""
    bundles: bool = True
    """Short options may be bundled (``-xzf``); False for Go's single-dash long options."""


def fs(*items: str) -> frozenset[str]:
    return frozenset(items)


_TAR = _Table(
    runs=fs("--checkpoint-action", "--to-command", "--use-compress-program", "--info-script", "--new-volume-script",
            "--rsh-command", "--rmt-command", "-I", "-F"),
    writes=fs("--index-file", "--listed-incremental", "-g"), short_with_arg="bCfFgIKLNTVX",
)
_SORT = _Table(runs=fs("--compress-program"), writes=fs("-o", "--output"), short_with_arg="kotSTy")
_TABLES: dict[str, _Table] = {
    "tar": _TAR, "gtar": _TAR, "bsdtar": _TAR,
    "zip": _Table(runs=fs("-TT", "--unzip-command"), writes=fs("-O", "--output-file", "--logfile-path"),
                  short_with_arg="bnOtx"),
    "man": _Table(runs=fs("-P", "--pager", "-H", "--html", "-B", "--browser", "-C", "--config-file", "-X",
                          "--gxditview"),
                  short_with_arg="CPHBMpTSmeLRr"),
    "sort": _SORT, "gsort": _SORT,
    "shuf": _Table(writes=fs("-o", "--output"), short_with_arg="noi"),
    "less": _Table(runs=fs("-k", "--lesskey-file", "--lesskey-src", "--lesskey-content"),
                   writes=fs("-o", "-O", "--log-file", "--LOG-FILE"), short_with_arg="bhjkoOpPtTxyz"),
    "rsync": _Table(runs=fs("-e", "--rsh", "--rsync-path"), writes=fs("--log-file", "--write-batch",
                                                                      "--only-write-batch"),
                    short_with_arg="eBfMT"),
    "scp": _Table(runs=fs("-S", "-o", "-F", "-J"), short_with_arg="cDFiJlloPS"),
    "sftp": _Table(runs=fs("-S", "-o", "-F", "-J", "-D"), short_with_arg="BbcDFiJloPRSs"),
    "ssh": _Table(runs=fs("-o", "-F", "-J", "-I", "-E"), short_with_arg="BbcDEeFIiJLlmOopQRSWw"),
    "ssh-keygen": _Table(runs=fs("-D", "-O", "-s"), short_with_arg="aCDEefGIJjKMmNnOPrSstVwZz"),
    "ssh-add": _Table(runs=fs("-s", "-S", "-e"), short_with_arg="EeHhSst"),
    "ssh-agent": _Table(runs=fs("-P"), short_with_arg="aEPt"),
    "make": _Table(runs=fs("--eval", "-E", "-f", "--file", "--makefile", "-C", "--directory", "-I",
                           "--include-dir"), short_with_arg="CEfIjloW"),
    "gmake": _Table(runs=fs("--eval", "-E", "-f", "--file", "--makefile", "-C", "--directory", "-I",
                            "--include-dir"), short_with_arg="CEfIjloW"),
    "just": _Table(runs=fs("--shell", "--shell-arg", "-c", "--command", "-f", "--justfile", "-d",
                           "--working-directory", "--set", "--dotenv-path", "--dotenv-filename"),
                   short_with_arg="fdc"),
    "pytest": _Table(writes=fs("--basetemp", "--junitxml", "--junit-xml", "--log-file", "--report-log",
                               "--result-log", "--html"), short_with_arg="kmpcor"),
    "npm": _Table(runs=fs("--script-shell", "--node-options", "--userconfig", "--globalconfig", "--prefix", "-C",
                          "--shell", "--editor", "--browser")),
    "pnpm": _Table(runs=fs("--script-shell", "--node-options", "--config", "--dir", "-C", "--shell-emulator")),
    "yarn": _Table(runs=fs("--cwd", "--use-yarnrc", "--script-shell")),
    "cargo": _Table(runs=fs("--config", "-Z", "--manifest-path", "--target-dir", "-C"), short_with_arg="pjZF"),
    "go": _Table(runs=fs("-exec", "-toolexec", "-overlay", "-modfile", "-C", "-w", "-u"),
                 writes=fs("-o", "-coverprofile", "-cpuprofile", "-memprofile", "-blockprofile", "-mutexprofile",
                           "-trace", "-outputdir"), bundles=False),
    "sdiff": _Table(runs=fs("--diff-program"), writes=fs("-o", "--output"), short_with_arg="oIW"),
    "git": _Table(writes=fs("--output", "--output-directory"), bundles=False),
    # linters, type checkers and inspectors offered as "always allow NAME *"
    "pylint": _Table(runs=fs("--init-hook", "--load-plugins", "--rcfile"), writes=fs("--output")),
    "mypy": _Table(runs=fs("--python-executable", "--plugins"),
                   writes=fs("--cache-dir", "--junit-xml", "--html-report", "--xml-report", "--txt-report",
                             "--linecount-report", "--linecoverage-report", "--lineprecision-report",
                             "--any-exprs-report", "--cobertura-xml-report", "--xslt-html-report",
                             "--xslt-txt-report"), short_with_arg="mpc"),
    "eslint": _Table(runs=fs("--rulesdir", "--plugin", "--resolve-plugins-relative-to", "-c", "--config",
                             "--parser", "--format", "-f"), writes=fs("-o", "--output-file", "--cache-location"),
                     short_with_arg="cfo"),
    "prettier": _Table(runs=fs("--plugin", "--config", "--parser"), writes=fs("--cache-location")),
    "tsc": _Table(writes=fs("--outDir", "--outFile", "--out", "--declarationDir", "--tsBuildInfoFile",
                            "--generateTrace"), runs=fs("--plugins")),
    "rg": _Table(runs=fs("--pre"), short_with_arg="ABCEefgjMmrTt"),
    "ag": _Table(runs=fs("--pager")),
    "tree": _Table(writes=fs("-o"), short_with_arg="LPIo"),
    "clang-tidy": _Table(runs=fs("--load", "-load"), writes=fs("--export-fixes", "-export-fixes"), bundles=False),
    "codespell": _Table(writes=fs("--write-changes")),
    "jest": _Table(runs=fs("--globalSetup", "--globalTeardown", "--testRunner", "--transform", "--setupFiles",
                           "--config", "-c"), writes=fs("--outputFile", "--coverageDirectory", "--cacheDirectory")),
    "vitest": _Table(runs=fs("--config", "-c", "--globalSetup", "--environment"), writes=fs("--outputFile")),
    "mocha": _Table(runs=fs("--require", "-r", "--config", "--ui", "-u", "--reporter", "-R"),
                    writes=fs("--reporter-option")),
}
_TABLES["py.test"] = _TABLES["pytest"]

_EDITORS = frozenset({"vi", "vim", "nvim", "view", "vimdiff", "gvim", "rvim", "ex", "emacs", "emacsclient", "ed",
                      "red", "vile", "kak", "mg", "joe", "jed"})
_AWKS = frozenset({"awk", "gawk", "mawk", "nawk", "busybox-awk"})
_SEDS = frozenset({"sed", "gsed"})
_MAKES = frozenset({"make", "gmake", "just"})
_AWK_CODE = re.compile(r"system\s*\(|\||>|@load|@include|\bgetline\b|\bfflush\b|\bclose\s*\(|ENVIRON|PROCINFO")
_ASSIGNMENT = re.compile(r"[A-Za-z_.][A-Za-z0-9_.]*\+?:?=")


def check_options(name: str, args: Sequence[Word]) -> OptionFinding | None:
    """What ``name`` (a basename) given ``args`` runs or writes (see the module docstring)."""
    if name in _EDITORS:
        return OptionFinding(f"{name} runs commands given in its options, its input or the files it opens")
    if name in _AWKS:
        return _awk(name, args)
    if name in _SEDS:
        problem = sed_problem(name, args)
        return OptionFinding(problem) if problem else None
    if name == "tee":
        return OptionFinding(writes=tuple(w for w in _operands(args) if not _is_harmless(w)))
    if name == "dd":
        targets = [w for w in args if w.value.startswith("of=")]
        if any(not w.static for w in targets):
            return OptionFinding("dd with a computed of= (minicode cannot check what it writes)")
        return OptionFinding(writes=tuple(Word(w.value[3:], w.value[3:]) for w in targets))
    if name == "crontab" and not _only_listing(args):
        return OptionFinding("crontab installs commands that run later, on their own")
    if name == "git":
        return _git(args)
    table = _TABLES.get(name)
    if table is None:
        return None
    unclear, writes = _scan(name, args, table)
    if unclear is None and name in _MAKES:
        assigned = next((w for w in args if not w.static or _ASSIGNMENT.match(w.value)), None)
        if assigned is not None:
            unclear = f"{name} with a variable set on its command line ({_short(assigned.raw)}) may change what runs"
    return OptionFinding(unclear, tuple(writes)) if unclear or writes else None


_GIT_O_WRITERS = frozenset({"archive", "format-patch"})


def _git(args: Sequence[Word]) -> OptionFinding | None:
    """``--output=FILE`` (log, diff, show …), ``archive -o FILE``, ``format-patch -o DIR`` and
    ``worktree add PATH`` write where their argument says."""
    values = [w.value for w in args]
    sub = next((v for v in values if v in _GIT_O_WRITERS or v == "worktree"), None)
    table = _TABLES["git"]
    if sub in _GIT_O_WRITERS:
        table = _Table(writes=table.writes | {"-o"}, bundles=False)
    unclear, writes = _scan("git", args, table)
    if sub == "worktree" and "add" in values:
        after = values.index("add") + 1
        path = next((w for w in args[after:] if not w.value.startswith("-")), None)
        if path is not None:
            writes.append(path)
    return OptionFinding(unclear, tuple(writes)) if unclear or writes else None


def _scan(name: str, args: Sequence[Word], table: _Table) -> tuple[str | None, list[Word]]:
    """getopt-style reading of the options: a risky one gives a reason, a write option its file."""
    writes: list[Word] = []
    k = 0
    while k < len(args):
        word = args[k]
        value = word.value
        if value == "--":
            break
        if not word.static and value.startswith("-"):
            return f"{name} with a computed option ({_short(word.raw)})", writes
        option, attached = _option(value, table)
        if option is None:
            if name in ("tar", "gtar", "bsdtar") and k == 0 and value and not value.startswith("-"):
                option, attached = _old_tar(value, table)  # tar cIf: old-style bundled letters
            if option is None:
                k += 1
                continue
        takes = option.startswith("--") or option in table.writes or option[1:] in table.short_with_arg
        if attached is None and takes and option.startswith("-") and not option.startswith("--"):
            attached_word: Word | None = args[k + 1] if k + 1 < len(args) else None
            k += 1
        elif attached is None and option.startswith("--") and (option in table.writes or option in table.runs):
            attached_word = args[k + 1] if k + 1 < len(args) and not args[k + 1].value.startswith("-") else None
            k += 1 if attached_word is not None else 0
        else:
            attached_word = Word(attached, attached) if attached is not None else None
        if option in table.runs:
            return f"{name} {option} runs a program or code given in its arguments", writes
        if option in table.writes and attached_word is not None and not _is_harmless(attached_word):
            writes.append(attached_word)
        k += 1
    return None, writes


def _option(value: str, table: _Table) -> tuple[str | None, str | None]:
    """(the option, its attached value) for ``--opt=v``, ``--opt``, ``-ov``, ``-abc``; (None, None)."""
    if value.startswith("--") and len(value) > 2:
        option, eq, rest = value.partition("=")
        known = [o for o in (*table.runs, *table.writes) if o.startswith("--") and o.startswith(option)]
        if option not in table.runs and option not in table.writes and len(known) == 1:
            option = known[0]  # getopt_long takes unambiguous abbreviations (--checkpoint-a)
        return option, rest if eq else None
    if value.startswith("-") and len(value) > 1:
        if value in table.runs or value in table.writes:
            return value, None  # a whole word option: zip -TT, go -exec
        if "=" in value and value.split("=", 1)[0] in (*table.runs, *table.writes):
            head, _, rest = value.partition("=")
            return head, rest  # go -o=x
        if not table.bundles:
            return None, None
        for j, letter in enumerate(value[1:], start=1):
            option = "-" + letter
            if option in table.runs:
                return option, value[j + 1 :] or None
            if letter in table.short_with_arg:
                return option, value[j + 1 :] or None
        return None, None
    return None, None


def _old_tar(value: str, table: _Table) -> tuple[str | None, str | None]:
    for letter in value:
        if "-" + letter in table.runs:
            return "-" + letter, ""
    return None, None


def _operands(args: Sequence[Word]) -> list[Word]:
    found: list[Word] = []
    options = True
    for word in args:
        if options and word.value == "--":
            options = False
        elif options and word.value.startswith("-") and word.value != "-":
            continue
        else:
            found.append(word)
    return found


def _awk(name: str, args: Sequence[Word]) -> OptionFinding | None:
    """awk's program is code: ``system()``, pipes, ``print > file`` and extensions are asked."""
    k = 0
    while k < len(args):
        word = args[k]
        value = word.value
        if not word.static:
            return OptionFinding(f"{name} with a computed argument ({_short(word.raw)})")
        if value in ("-v", "-F"):
            k += 2
            continue
        if value.startswith(("-v", "-F")) or value in ("--", "-"):
            k += 1
            continue
        if value.startswith("-"):
            return OptionFinding(f"{name} {_short(value)}: an option that loads or runs code minicode cannot see")
        if _AWK_CODE.search(value):
            return OptionFinding(f"{name} program that runs commands or writes files ({_short(value)})")
        return None  # the program; the rest are files and assignments
    return None


def _only_listing(args: Sequence[Word]) -> bool:
    """``crontab -l`` (``-u USER`` allowed): listing only."""
    values = [w.value for w in args]
    if not all(w.static for w in args) or "-l" not in values:
        return False
    rest = list(values)
    rest.remove("-l")
    if rest[:1] == ["-u"] and len(rest) == 2:
        rest = []
    return not rest


def _is_harmless(word: Word) -> bool:
    return word.static and re.fullmatch(r"/dev/(null|stdout|stderr|tty|fd/[0-9]+)|-", word.value) is not None


def _short(text: str, limit: int = 40) -> str:
    one_line = " ".join(text.split())
    return one_line if len(one_line) <= limit else one_line[: limit - 1] + "…"
