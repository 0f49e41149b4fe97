"""git invocations that change git's configuration or run a program named in their arguments.

``git config …`` (anything but a read) and ``git -c KEY=VALUE`` / ``--config-env`` set keys such
as ``core.hooksPath``, ``core.fsmonitor``, ``core.pager``, ``core.sshCommand`` or ``alias.*``, which
make later, allowed git commands (``git status``) run programs: they are protected, asked every
time, like a write to ``.git/config``. Options that name a program to run (``rebase --exec``,
``bisect run``, ``submodule foreach``, ``grep -O``, ``--upload-pack``, ``difftool -x``,
``filter-branch --tree-filter`` …) make the command unclear, and the program is shown to deny
rules. ``-C DIR`` and ``--git-dir``/``--work-tree`` are paths (checked like other arguments).
Pure; standard library only.
"""

from __future__ import annotations

from typing import Sequence

from dataclasses import dataclass
from minicode.permissions.shell_words import Word

__all__ = ["GitFinding", "check_git"]

_GLOBAL_WITH_ARG = frozenset({"-C", "-c", "--git-dir", "--work-tree", "--namespace", "--super-prefix",
                              "--config-env", "--list-cmds", "--attr-source"})
_PATH_OPTIONS = frozenset({"-C", "--git-dir", "--work-tree"})
_CONFIG_READS = frozenset({"--get", "--get-all", "--get-regexp", "--get-urlmatch", "--get-color", "--get-colorbool",
                           "-l", "--list", "get", "list", "--show-origin", "--show-scope", "--name-only"})
_CONFIG_WHY = ("git's configuration (core.hooksPath, core.fsmonitor, core.pager, aliases … make later git "
               "commands run programs)")
# subcommand → options whose value is a command git runs
_EXEC_OPTIONS: dict[str, frozenset[str]] = {
    "rebase": frozenset({"-x", "--exec"}),
    "difftool": frozenset({"-x", "--extcmd"}),
    "mergetool": frozenset({"--tool-cmd"}),
    "grep": frozenset({"-O", "--open-files-in-pager"}),
    "fetch": frozenset({"--upload-pack"}),
    "pull": frozenset({"--upload-pack"}),
    "clone": frozenset({"-u", "--upload-pack"}),
    "ls-remote": frozenset({"--upload-pack"}),
    "push": frozenset({"--receive-pack", "--exec"}),
    "archive": frozenset({"--exec"}),
    "send-email": frozenset({"--to-cmd", "--cc-cmd", "--sendmail-cmd", "--smtp-server"}),
}
_RUNS_REST = {"bisect": "run", "submodule": "foreach"}
_ALWAYS_UNCLEAR = {"filter-branch": "git filter-branch runs filters given as code",
                   "filter-repo": "git filter-repo runs callbacks given as code",
                   "instaweb": "git instaweb runs a web server command"}
_APPLY_READS = frozenset({"--check", "--stat", "--numstat", "--summary", "--show-current-patch"})
_CONFIG_SETTERS = {"clone": frozenset({"-c", "--config", "--template"}), "init": frozenset({"--template"})}


@dataclass(frozen=True, slots=True)
class GitFinding:
    """``protected``: what it changes (asked every time); ``unclear``: why no narrow rule
    covers it; ``scripts``: programs it runs (tried by deny rules); ``paths``: path words;
    ``runs_unseen``: whether what is unclear may be a command no rule sees (not for a patch
    applied: only the files it writes are unknown)."""

    protected: str | None = None
    unclear: str | None = None
    scripts: tuple[str, ...] = ()
    paths: tuple[Word, ...] = ()
    runs_unseen: bool = True


def check_git(args: Sequence[Word]) -> GitFinding:
    """What ``git ARGS`` does that rules must know (see the module docstring)."""
    k, paths = 0, []
    protected: str | None = None
    while k < len(args) and args[k].static and args[k].value.startswith("-"):
        option, eq, attached = args[k].value.partition("=")
        value_word = Word(attached, attached) if eq else (args[k + 1] if k + 1 < len(args) else None)
        if option in ("-c", "--config-env") or (option.startswith("-c") and len(option) > 2):
            protected = f"git -c sets {_CONFIG_WHY} for this command"
        if option == "--exec-path" and eq:
            protected = "git --exec-path runs git's programs from another directory"
        if option in _PATH_OPTIONS and value_word is not None:
            paths.append(value_word)
        takes_next = option in _GLOBAL_WITH_ARG and not eq and not (option.startswith("-c") and len(option) > 2)
        k += 2 if takes_next else 1
    if k < len(args) and not args[k].static:
        return GitFinding(protected, "git with a computed subcommand", paths=tuple(paths))
    if k >= len(args):
        return GitFinding(protected, paths=tuple(paths))
    sub, rest = args[k].value, args[k + 1 :]
    return _subcommand(sub, rest, protected, tuple(paths))


def _subcommand(sub: str, rest: Sequence[Word], protected: str | None, paths: tuple[Word, ...]) -> GitFinding:
    if sub == "config" and not any(w.static and w.value in _CONFIG_READS for w in rest):
        protected = f"git config changes {_CONFIG_WHY}"
    setters = _CONFIG_SETTERS.get(sub, frozenset())
    if any(w.static and w.value.partition("=")[0] in setters for w in rest):
        protected = f"git {sub} with configuration or hook templates"
    if sub in ("apply", "am") and not any(w.static and w.value in _APPLY_READS for w in rest):
        return GitFinding(protected, f"git {sub} writes the files a patch names: minicode cannot check them", paths=paths,
                          runs_unseen=False)
    if sub in _ALWAYS_UNCLEAR:
        return GitFinding(protected, _ALWAYS_UNCLEAR[sub], paths=paths)
    if sub in _RUNS_REST:
        word = _RUNS_REST[sub]
        at = next((j for j, w in enumerate(rest) if w.static and w.value == word), None)
        if at is not None:
            script = " ".join(w.value for w in rest[at + 1 :] if w.static)
            return GitFinding(protected, f"git {sub} {word} runs a command", (script,), paths)
    scripts = _exec_values(rest, _EXEC_OPTIONS.get(sub, frozenset()))
    if scripts is not None:
        return GitFinding(protected, f"git {sub} with an option that runs a command", scripts, paths)
    return GitFinding(protected, paths=paths)


def _exec_values(rest: Sequence[Word], options: frozenset[str]) -> tuple[str, ...] | None:
    """The commands given to ``options`` (``--exec=cmd``, ``--exec cmd``, ``-xcmd``); None if none."""
    found: list[str] = []
    hit = False
    for j, word in enumerate(rest):
        if not word.static:
            continue
        option, eq, attached = word.value.partition("=")
        if option in options:
            hit = True
            value = attached if eq else (rest[j + 1].value if j + 1 < len(rest) else "")
            found.append(value)
            continue
        short = next((o for o in options if len(o) == 2 and word.value.startswith(o) and len(word.value) > 2), None)
        if short is not None:
            hit = True
            found.append(word.value[2:])
    return tuple(found) if hit else None
