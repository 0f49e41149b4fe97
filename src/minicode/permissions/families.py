"""Command families the permission checks treat differently. Pure data and two predicates.

**File writers** take a destination path in their arguments, or write files through an
archive, a script or a pattern: ``cp``, ``mv``, ``tar``, ``sed`` (``w`` and ``-i``), ``git apply`` …
(``git``'s writing subcommands are judged by ``git_check``.) Their arguments are checked
harder (a directory that *holds* a protected path counts, and an argument computed at run
time cannot be checked, so the command is asked). **Extractors** (``tar x``, ``unzip``,
``cpio -i``, ``patch`` …) write files named by the data they read: unclear
(``extraction_problem``).

**Code runners** run code given in their arguments (``python3 -c``, ``node -e``, ``awk``,
``perl``); like writers they can write anything.

**Suggestable** commands are the only ones "always allow … in this project" offers a rule
for: test runners, linters and formatters, builders and package managers (their usual
subcommands), version control subcommands that do not take a destination or code, read-only
inspectors, and the project's own scripts (``./run_tests.sh``). A rule for a writer or a
code runner would let the model write anywhere — the rules files and git hooks included — so
it is never offered; a person may still write one by hand.
"""

from __future__ import annotations

from typing import Sequence

__all__ = ["CODE_RUNNERS", "FILE_WRITERS", "GIT_SAFE_SUBCOMMANDS", "SUGGESTABLE", "SUGGESTABLE_SUBCOMMANDS",
           "extraction_problem", "is_known_program", "is_writer"]

FILE_WRITERS = frozenset({
    "cp", "mv", "install", "ln", "link", "rsync", "scp", "sftp", "tar", "gtar", "bsdtar", "unzip", "zip", "7z", "7za",
    "7zr", "unrar", "cpio", "pax", "ar", "dd", "tee", "patch", "sed", "gsed", "truncate", "split", "csplit", "sort",
    "shuf", "gzip", "gunzip", "bzip2", "bunzip2", "xz", "unxz", "zstd", "unzstd", "lz4", "curl", "wget", "chmod",
    "chown", "chgrp", "chattr", "setfacl", "mkfifo", "mknod", "rename", "shred", "uudecode", "xxd", "ed", "ex",
    "sponge", "svn", "hg",
})
"""Commands whose arguments may name where they write (see the module docstring)."""

CODE_RUNNERS = frozenset({
    "python", "python2", "python3", "pypy", "pypy3", "node", "nodejs", "deno", "bun", "ruby", "perl", "php", "lua",
    "luajit", "tclsh", "wish", "awk", "gawk", "mawk", "nawk", "jq", "osascript", "Rscript", "julia", "groovy",
    "java", "jshell", "scala", "kotlin", "swift", "dotnet", "powershell", "pwsh", "expect", "gdb", "sqlite3", "psql",
    "mysql", "vim", "nvim", "emacs", "nohup", "npx", "bunx", "pnpx", "uvx", "pipx",
})
"""Commands that run code given in their arguments (they can write anything)."""


def is_writer(name: str) -> bool:
    """Whether the command (a basename, any version suffix kept: ``python3.12``) writes
    files named or built from its arguments."""
    if name in FILE_WRITERS or name in CODE_RUNNERS:
        return True
    return name.rstrip("0123456789.") in CODE_RUNNERS


SUGGESTABLE = frozenset({
    # tests, linters, formatters, type checkers
    "pytest", "py.test", "tox", "nox", "jest", "vitest", "mocha", "ava", "tap", "phpunit", "rspec", "ruff", "black",
    "isort", "flake8", "pylint", "mypy", "dmypy", "pyright", "eslint", "prettier", "tsc", "stylelint", "biome",
    "shellcheck", "shfmt", "gofmt", "rustfmt", "clang-format", "clang-tidy", "hadolint", "yamllint", "markdownlint",
    "codespell", "pre-commit", "coverage", "bandit",
    # read-only inspectors
    "ls", "cat", "head", "tail", "wc", "grep", "egrep", "fgrep", "rg", "ag", "tree", "stat", "file", "du", "df",
    "diff", "cmp", "pwd", "which", "type", "whoami", "date", "uname", "echo", "true", "false", "test", "[", "less",
    "nl", "od", "hexdump", "realpath", "readlink", "basename", "dirname", "printenv", "id", "hostname",
    "uptime", "ps", "free", "sleep", "seq", "uniq", "cut", "tr", "column", "fold", "comm", "expand", "rev", "tac",
    "md5sum", "sha1sum", "sha256sum", "cksum", "lsof", "top", "nproc", "locale", "printf", "cd", "mkdir", "touch",
    # builders and package managers (with a subcommand, below)
    "git", "npm", "pnpm", "yarn", "cargo", "go", "pip", "pip3", "uv", "poetry", "pdm", "hatch", "gradle", "gradlew",
    "mvn", "dotnet", "bundle", "rake", "mix", "composer", "swift", "just", "make", "docker", "podman",
})
"""Command names "always allow" may offer a rule for (see the module docstring)."""

GIT_SAFE_SUBCOMMANDS = frozenset({
    "status", "diff", "log", "show", "blame", "branch", "ls-files", "rev-parse", "grep", "add", "commit", "stash",
    "switch", "checkout", "restore", "fetch", "pull", "merge", "tag", "describe", "shortlog", "reflog", "remote",
    "cherry-pick", "revert", "reset", "mv", "rm", "rev-list", "ls-tree", "cat-file", "whatchanged", "range-diff",
    "format-patch", "notes", "push",
})

SUGGESTABLE_SUBCOMMANDS: dict[str, frozenset[str]] = {
    "git": GIT_SAFE_SUBCOMMANDS,
    "npm": frozenset({"test", "t", "run", "run-script", "install", "i", "ci", "ls", "list", "outdated", "audit",
                      "view", "start", "build"}),
    "pnpm": frozenset({"test", "run", "install", "i", "add", "ls", "list", "outdated", "audit", "build", "lint"}),
    "yarn": frozenset({"test", "run", "install", "add", "list", "outdated", "audit", "build", "lint"}),
    "cargo": frozenset({"build", "test", "check", "clippy", "fmt", "run", "doc", "bench", "tree", "metadata",
                        "update", "add", "nextest"}),
    "go": frozenset({"build", "test", "vet", "fmt", "run", "mod", "list", "version", "env"}),
    "pip": frozenset({"install", "list", "show", "freeze", "check"}),
    "pip3": frozenset({"install", "list", "show", "freeze", "check"}),
    "uv": frozenset({"run", "pip", "sync", "add", "lock", "tree"}),
    "poetry": frozenset({"run", "install", "add", "show", "lock", "check", "build"}),
    "pdm": frozenset({"run", "install", "add", "list", "lock", "build"}),
    "hatch": frozenset({"run", "test", "build", "fmt"}),
    "gradle": frozenset({"build", "test", "check", "assemble", "clean", "lint"}),
    "gradlew": frozenset({"build", "test", "check", "assemble", "clean", "lint"}),
    "mvn": frozenset({"test", "verify", "package", "compile", "install", "clean"}),
    "dotnet": frozenset({"build", "test", "run", "restore", "format"}),
    "bundle": frozenset({"exec", "install"}),
    "rake": frozenset({"test", "spec", "build"}),
    "mix": frozenset({"test", "compile", "format", "deps.get"}),
    "composer": frozenset({"install", "test", "update", "dump-autoload"}),
    "swift": frozenset({"build", "test", "run"}),
    "just": frozenset(),  # any recipe: a project file, like make's
    "make": frozenset(),
    "docker": frozenset({"ps", "images", "logs", "inspect", "version", "info", "build", "compose"}),
    "podman": frozenset({"ps", "images", "logs", "inspect", "version", "info", "build", "compose"}),
}
"""Subcommands a rule may be offered for (an empty set: any, as for ``make``'s targets)."""


_EXTRACT_WHY = "extracts files whose names are inside {what}: minicode cannot check where they go"


def extraction_problem(name: str, args: Sequence[str]) -> str | None:
    """Why the command writes files named by data it reads — an archive's members, a
    patch's file names — which no check of its arguments can see (``tar xf r.tar`` may
    create ``.git/hooks/pre-commit``), or None. Listing and testing modes are fine."""
    base = name
    if base in ("tar", "gtar", "bsdtar"):
        first = args[0] if args else ""
        bundled = first if first and not first.startswith("-") else ""  # tar xf: old-style options
        if "x" in bundled or any(_short_has(a, "x") or a in ("--extract", "--get") for a in args):
            return _EXTRACT_WHY.format(what="the archive")
    elif base in ("unzip", "funzip", "bsdunzip"):
        if not any(a in ("-l", "-t", "-v", "-Z", "-p", "-c", "-z") for a in args):
            return _EXTRACT_WHY.format(what="the archive")
    elif base == "cpio":
        if any(_short_has(a, "i") or a == "--extract" for a in args):
            return _EXTRACT_WHY.format(what="the archive")
    elif base in ("7z", "7za", "7zr", "unrar", "unar", "ar"):
        if args and args[0].lstrip("-") in ("x", "e"):
            return _EXTRACT_WHY.format(what="the archive")
    elif base == "pax":
        if any(_short_has(a, "r") for a in args):
            return _EXTRACT_WHY.format(what="the archive")
    elif base in ("patch", "gpatch"):
        if not any(a in ("--dry-run", "--version", "--help") for a in args):
            return _EXTRACT_WHY.format(what="the patch")
    return None


def _short_has(arg: str, letter: str) -> bool:
    return arg.startswith("-") and not arg.startswith("--") and letter in arg[1:]


_SHELL_BUILTINS = frozenset({
    "echo", "printf", "test", "[", "cd", "pushd", "popd", "dirs", "export", "unset", "read", "mapfile", "readarray",
    "true", "false", ":", "set", "shopt", "type", "declare", "typeset", "local", "readonly", "return", "exit",
    "shift", "wait", "jobs", "kill", "umask", "ulimit", "getopts", "hash", "help", "history", "let", "printenv",
    "pwd", "times", "trap", "alias", "unalias", "break", "continue", "disown", "bg", "fg", "suspend", "logout",
    "caller", "compgen", "complete", "compopt", "enable", "fc", "bind",
})


def is_known_program(name: str) -> bool:
    """Whether minicode knows what the command does with its arguments — a builtin, a file
    writer, a code runner or a suggestable command (wrappers are followed elsewhere): an
    unknown one might run a command given in them (``foo rm -f x``)."""
    return name in _SHELL_BUILTINS or name in SUGGESTABLE or is_writer(name) or name in ("rm", "rmdir", "unlink")
