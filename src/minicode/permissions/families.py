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

**Suggestable** commands are the only ones "always allow … in this project" offers a
``NAME *`` rule for: programs safe with *any* arguments — test runners, linters and
formatters, builders (their usual subcommands, not installs), version control subcommands
that do not take a destination or code, read-only inspectors, and the project's own scripts
(``./run_tests.sh``). A ``*`` rule for a writer or a code runner (``awk``, ``sed``, ``make``,
``tee``, ``tar``, ``pip install``, ``docker run`` …) would be wider in effect than in name —
the model could run any code or write anywhere — so such a command is offered only a rule
pinned to its exact words; a person may still write a wider one by hand.
"""

from __future__ import annotations

from typing import Sequence

__all__ = ["CODE_RUNNERS", "FILE_WRITERS", "GIT_SAFE_SUBCOMMANDS", "NAMED_FILE_CHANGERS", "NEVER_SUGGESTED",
           "PROGRAM_RUNNERS", "RUNNERS", "SUGGESTABLE", "SUGGESTABLE_SUBCOMMANDS", "extraction_problem",
           "is_known_program", "is_writer"]

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
    # tests, linters, formatters, type checkers (the options that run code or write files
    # named in them are judged by ``option_risks``; formatters' files outside the workspace
    # need a write rule)
    "pytest", "py.test", "jest", "vitest", "mocha", "ava", "tap", "phpunit", "rspec", "ruff", "black", "isort",
    "flake8", "pylint", "mypy", "dmypy", "pyright", "eslint", "prettier", "tsc", "stylelint", "biome", "shellcheck",
    "shfmt", "gofmt", "rustfmt", "clang-format", "hadolint", "yamllint", "markdownlint", "codespell", "bandit",
    # read-only inspectors
    "ls", "cat", "head", "tail", "wc", "grep", "egrep", "fgrep", "rg", "ag", "tree", "stat", "file", "du", "df",
    "diff", "cmp", "pwd", "which", "type", "whoami", "date", "uname", "echo", "true", "false", "test", "[",
    "nl", "od", "hexdump", "realpath", "readlink", "basename", "dirname", "printenv", "id",
    "uptime", "ps", "free", "sleep", "seq", "cut", "tr", "column", "fold", "comm", "expand", "rev", "tac",
    "md5sum", "sha1sum", "sha256sum", "cksum", "nproc", "locale", "printf", "cd", "touch", "mkdir",
    # builders and package managers (with a subcommand, below)
    "git", "npm", "pnpm", "yarn", "cargo", "go", "uv", "poetry", "pdm", "hatch", "gradle", "gradlew",
    "mvn", "dotnet", "bundle", "rake", "mix", "swift",
})
"""Command names "always allow" may offer a ``NAME *`` rule for: programs that are safe with
any arguments — none runs code given in an argument or writes a file an argument names
outside what the checks see (``option_risks``). Every other command is offered only a rule
pinned to its exact words (``bash(awk '{print $1}' log.txt)``), or none."""

NEVER_SUGGESTED = frozenset({
    "rm", "rmdir", "unlink", "shred", "chmod", "chown", "chgrp", "chattr", "curl", "wget", "ssh", "scp", "sftp", "nc",
    "ncat", "netcat", "telnet", "ftp", "kill", "pkill", "killall", "dd", "mkfs", "shutdown", "reboot", "crontab",
    "systemctl", "launchctl", "at", "batch", "doas", "sudo", "su",
})
"""Commands that destroy, leak or schedule in every use: not even an exact rule is offered."""

GIT_SAFE_SUBCOMMANDS = frozenset({
    "status", "diff", "log", "show", "blame", "ls-files", "rev-parse", "grep", "describe", "shortlog", "rev-list",
    "ls-tree", "cat-file", "whatchanged", "range-diff", "add", "commit", "fetch", "switch",
})
"""git subcommands a ``git SUB *`` rule is offered for: reading, staging, committing (hooks are
protected). Not push (a URL leaks the code), reset/checkout/restore/stash (discard work),
branch/tag/remote/reflog (delete or redirect) … — those get exact rules."""

SUGGESTABLE_SUBCOMMANDS: dict[str, frozenset[str]] = {
    "git": GIT_SAFE_SUBCOMMANDS,
    # no install/add/ci/update: a package's install scripts are code from the registry
    "npm": frozenset({"test", "t", "run", "run-script", "ls", "list", "outdated", "view", "start"}),
    "pnpm": frozenset({"test", "run", "ls", "list", "outdated", "lint"}),
    "yarn": frozenset({"test", "run", "list", "outdated", "lint"}),
    "cargo": frozenset({"build", "test", "check", "clippy", "fmt", "run", "doc", "bench", "tree", "metadata",
                        "nextest"}),
    "go": frozenset({"build", "test", "vet", "fmt", "list", "version"}),  # not run (pkg@version) or env -w
    "uv": frozenset({"run", "tree"}),
    "poetry": frozenset({"run", "show", "check", "build"}),
    "pdm": frozenset({"run", "list", "build"}),
    "hatch": frozenset({"run", "test", "build", "fmt"}),
    "gradle": frozenset({"build", "test", "check", "assemble", "clean", "lint"}),
    "gradlew": frozenset({"build", "test", "check", "assemble", "clean", "lint"}),
    "mvn": frozenset({"test", "verify", "package", "compile", "clean"}),
    "dotnet": frozenset({"build", "test", "restore", "format"}),
    "bundle": frozenset({"exec"}),
    "rake": frozenset({"test", "spec", "build"}),
    "mix": frozenset({"test", "compile", "format"}),
    "swift": frozenset({"build", "test"}),
}
"""Subcommands a ``… *`` rule may be offered for."""

RUNNERS = frozenset({
    ("npm", "run"), ("npm", "run-script"), ("pnpm", "run"), ("yarn", "run"), ("uv", "run"), ("poetry", "run"),
    ("pdm", "run"), ("hatch", "run"), ("bundle", "exec"),
})
"""Subcommands followed by what they run: the rule takes one more word (``npm run test *``);
for those that run any program (``uv run``, ``bundle exec``), that word must be suggestable too."""
PROGRAM_RUNNERS = frozenset({("uv", "run"), ("poetry", "run"), ("pdm", "run"), ("hatch", "run"), ("bundle", "exec")})

NAMED_FILE_CHANGERS = frozenset({
    "black", "isort", "ruff", "autopep8", "yapf", "prettier", "eslint", "gofmt", "goimports", "rustfmt",
    "clang-format", "shfmt", "stylelint", "biome", "markdownlint", "codespell", "dprint", "touch", "mkdir",
})
"""Formatters, ``touch`` and ``mkdir`` change the files their arguments name: those outside
the workspace count as writes (they need a ``write(//…)`` rule)."""


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


_KNOWN_NOT_SUGGESTED = frozenset({
    "less", "more", "man", "make", "gmake", "just", "docker", "podman", "pip", "pip3", "hostname", "uniq", "top",
    "lsof", "composer", "tox", "nox", "coverage", "pre-commit", "clang-tidy",
})
"""Programs once offered ``NAME *`` rules (before finding T19): still known (they run no
command named in their arguments), only no longer safe with any arguments."""


def is_known_program(name: str) -> bool:
    """Whether minicode knows what the command does with its arguments — a builtin, a file
    writer, a code runner or a suggestable command (wrappers are followed elsewhere): an
    unknown one might run a command given in them (``foo rm -f x``)."""
    return (name in _SHELL_BUILTINS or name in SUGGESTABLE or is_writer(name) or name in NEVER_SUGGESTED
            or name in _KNOWN_NOT_SUGGESTED)
