"""The rules in effect for one session, and the workspace's own rules file.

``PermissionStore`` joins the fixed rules (``--allow``/``--deny``, the configuration files)
with the workspace's saved rules — ``.minicode/local/permissions.toml``, written by "always
allow … in this project" and by ``/permissions`` removals, mode 0600, in a directory whose
own ``.gitignore`` keeps it out of git. Every change re-reads the file first (another run
may have saved a rule meanwhile) and replaces it atomically. The file's rules are honoured
only while its content is what minicode last wrote there (``trust``: a digest kept under
``~/.minicode/``); content written by anything else — a command the model ran, a hand edit — is
warned about and ignored until a person confirms it (``/permissions trust``).

The files and directories holding rules, and git's hooks and configuration, are
*protected* (``protected_entries``): a call writing or naming one is always asked, so no rule
or earlier answer lets the model grant itself permissions or plant code an allowed command
(``git commit``) would run. Blocking file I/O: call ``remember``/``remove``/``trust`` off the
event loop.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping, Sequence

from minicode.statedir import ensure_state_dir
from minicode.errors import ConfigError
from minicode.private_file import write_private
from minicode.permissions.protected import Protected
from minicode.permissions.rules import Effect, Origin, SourcedRule, parse_rule, rules_from_table
from minicode.trust.rules_file import RulesTrust
from minicode.tomlfile import parse_toml

if TYPE_CHECKING:  # the checker (bash parser, command table, matchers) loads at the first check
    from minicode.permissions.policy import PermissionPolicy, Verdict

__all__ = ["PROJECT_RULES_FILE", "PermissionStore", "protected_entries"]

PROJECT_RULES_FILE = Path(".minicode") / "local" / "permissions.toml"
"""The workspace's saved rules, relative to the workspace."""
_DIR_MODE = 0o700
_HEADER = (
    "# Permission rules of this workspace, saved by minicode (\"always allow … in this project\").\n"
    "# Edit by hand or with /permissions; rule syntax: docs/config.md. Kept out of git.\n\n"
)


class PermissionStore:
    """Checks calls against the rules in effect; saves and removes the workspace's rules.

    ``env`` gives ``HOME`` (where the trusted digest is kept: without it the file is honoured
    as it is) and the environment the bash analysis expands; ``user_dirs`` are the per-user
    configuration directories (protected)."""

    def __init__(self, workspace: Path, fixed: Sequence[SourcedRule], protected: Sequence[Path] = (), *,
                 env: Mapping[str, str] | None = None, user_dirs: Sequence[Path] = ()) -> None:
        self.workspace = workspace
        self.file = workspace / PROJECT_RULES_FILE
        self._fixed = tuple(fixed)
        self._env = dict(env) if env is not None else None
        home = self._env.get("HOME") if self._env is not None else None
        self._trust = RulesTrust.for_home(home, workspace)
        self._entries = protected_entries(workspace, protected, user_dirs, home)
        self.warnings: list[str] = []
        self.untrusted = False
        """The file holds content minicode did not write: its rules are not in effect."""
        self.listed: tuple[str, ...] | None = None
        """The rules of the last ``/permissions`` listing shown, by number (``remove N`` means
        that listing's N, not a renumbered one after earlier removals)."""
        self._project = tuple(self._load())
        self._policy: PermissionPolicy | None = None  # built at the first check, not at start

    # --- checking ------------------------------------------------------------------------

    def check(self, tool: str, args: Mapping[str, Any]) -> Verdict:
        if self._policy is None:
            self._policy = self._build()
        return self._policy.check(tool, args)

    @property
    def rules(self) -> tuple[SourcedRule, ...]:
        """Every rule in effect: command line, this workspace's file, config files."""
        cli = tuple(r for r in self._fixed if r.origin is Origin.COMMAND_LINE)
        rest = tuple(r for r in self._fixed if r.origin is not Origin.COMMAND_LINE)
        return (*cli, *self._project, *rest)

    # --- changing the workspace's file ---------------------------------------------------

    def remember(self, text: str) -> str:
        """Save ``text`` as an allow rule of this workspace; returns the file (as shown).
        Raises ConfigError (a bad rule, the file changed outside minicode, or it cannot be
        read or written)."""
        rule = parse_rule(text)
        current = self._current()
        if not any(r.effect is Effect.ALLOW and r.rule.text == rule.text for r in current):
            current.append(SourcedRule(rule, Effect.ALLOW, Origin.PROJECT, self.file))
            self._write(current)
        self._use(current)
        return self.shown_file

    def remove(self, text: str) -> SourcedRule:
        """Remove the workspace rule written ``text`` (allow or deny); returns it.

        A rule from elsewhere cannot be removed here: the error names its file (or the flag)."""
        wanted = text.strip()
        current = self._current()
        kept = [r for r in current if r.rule.text != wanted]
        if len(kept) == len(current):
            raise ConfigError(self._not_removable(wanted))
        removed = next(r for r in current if r.rule.text == wanted)
        self._write(kept)
        self._use(kept)
        return removed

    def trust(self) -> tuple[SourcedRule, ...]:
        """``/permissions trust``: a person confirms the file as it is now; its rules take
        effect (returned). Raises ConfigError (no file, invalid, or the record failed)."""
        data = self._bytes()
        if data is None:
            raise ConfigError(f"there is no {self.shown_file} to trust")
        rules = self._parse(data)
        if self._trust is not None:
            try:
                self._trust.record(data)
            except OSError as e:
                raise ConfigError(f"{self._trust.record_file}: cannot record the trusted rules ({e.strerror})") from e
        self._use(rules)
        return tuple(rules)

    @property
    def shown_file(self) -> str:
        return PROJECT_RULES_FILE.as_posix()

    def _use(self, rules: Sequence[SourcedRule]) -> None:
        self._project = tuple(rules)
        self.untrusted = False
        self._policy = None

    def _not_removable(self, wanted: str) -> str:
        elsewhere = next((r for r in self._fixed if r.rule.text == wanted), None)
        if elsewhere is None:
            return f"no rule {wanted} in {self.shown_file}"
        if elsewhere.file is None:
            return f"{wanted} was given on the command line ({elsewhere.effect.value}) for this run only"
        return f"{wanted} comes from {elsewhere.file}: edit that file to remove it"

    # --- the file ------------------------------------------------------------------------

    def _build(self) -> PermissionPolicy:
        from minicode.permissions.policy import PermissionPolicy

        return PermissionPolicy(self.workspace, self.rules, self._entries, env=self._env)

    def _load(self) -> list[SourcedRule]:
        """The rules in effect at start: those of a trusted file (else a warning). A file
        nobody trusts never stops the start, whatever it holds."""
        try:
            data = self._bytes()
        except ConfigError as e:
            return self._distrust(f"{e}: its rules are not in effect")
        if data is None:
            return []
        if self._trust.trusted(data) if self._trust is not None else self._env is None:
            return self._parse(data)
        try:
            count = f"its {len(self._parse(data))} rule(s) are"
        except ConfigError:
            count = "it is not a valid rules file, and its rules are"
        # Without $HOME there is no record of what minicode wrote: a file a cloned repository
        # ships would be as good as the user's own (a CI job or a service often has no HOME).
        why = ("was not written by minicode, or changed since it last did" if self._trust is not None
               else "cannot be checked without $HOME (where minicode records what it wrote)")
        return self._distrust(f"{self.shown_file} {why}: {count} not in effect. "
                              "Check it, then run /permissions trust to use it")

    def _distrust(self, warning: str) -> list[SourcedRule]:
        self.untrusted = True
        self.warnings.append(warning)
        return []

    def _current(self) -> list[SourcedRule]:
        """The file's rules before a change; the change is refused when its content is not
        trusted (it would bless rules nobody approved)."""
        data = self._bytes()
        if data is None:
            return []
        if self._trust is not None and not self._trust.trusted(data):
            self.untrusted = True
            raise ConfigError(f"{self.shown_file} changed outside minicode: check it and run /permissions trust "
                              "before saving or removing rules")
        return self._parse(data)

    def _bytes(self) -> bytes | None:
        try:
            if self.file.is_symlink():
                raise ConfigError(f"{self.file}: is a symbolic link; refusing to read or write through it")
            if not self.file.exists():
                return None
            if not self.file.is_file():
                raise ConfigError(f"{self.file}: the permission rules file is not a regular file")
            return self.file.read_bytes()
        except OSError as e:
            raise ConfigError(f"{self.file}: cannot access the permission rules ({e.strerror})") from e

    def _parse(self, data: bytes) -> list[SourcedRule]:
        parsed = parse_toml(data, self.file, "permission rules file")
        unknown = [key for key in parsed if key != "permissions"]
        if unknown:
            raise ConfigError(f"{self.file}: unknown table or key {unknown[0]!r} (allowed: [permissions])")
        return rules_from_table(parsed.get("permissions", {}), str(self.file), Origin.PROJECT, self.file)

    def _write(self, rules: Sequence[SourcedRule]) -> None:
        import tomli_w  # lazily: only saving a rule writes TOML

        table = {
            effect.value: [r.rule.text for r in rules if r.effect is effect]
            for effect in (Effect.ALLOW, Effect.DENY)
            if any(r.effect is effect for r in rules)
        }
        data = (_HEADER + tomli_w.dumps({"permissions": table}, multiline_strings=False, indent=4)).encode("utf-8")
        try:
            self._ensure_dir()
            if self.file.is_symlink():
                raise ConfigError(f"{self.file}: is a symbolic link; refusing to write through it")
            if self._trust is not None:
                self._trust.record(data)  # first: a file nobody recorded would not be honoured
            write_private(self.file, data)
        except OSError as e:
            raise ConfigError(f"{self.file}: cannot save the permission rules ({e.strerror})") from e

    def _ensure_dir(self) -> None:
        directory = self.file.parent
        ensure_state_dir(self.workspace)
        directory.mkdir(mode=_DIR_MODE, parents=True, exist_ok=True)
        ignore = directory / ".gitignore"
        if not ignore.exists() and not ignore.is_symlink():
            ignore.write_text("# minicode: this directory holds per-workspace settings, never committed\n*\n",
                              encoding="utf-8")


def protected_entries(workspace: Path, rule_files: Sequence[Path], user_dirs: Sequence[Path],
                      home: str | None) -> list[Protected]:
    """Every protected path of a workspace, with what it is (see ``protected``)."""
    config_file = "minicode's configuration, which holds permission rules"
    entries = [Protected(f, config_file) for f in rule_files]
    entries += [
        Protected(workspace / "config" / "config.toml", config_file),
        Protected(workspace / PROJECT_RULES_FILE.parent, "minicode's settings for this workspace (its saved "
                  "permission rules)", directory=True),
        # sessions, the undo journal, input history: a planted message or a rewritten "undo"
        Protected(workspace / PROJECT_RULES_FILE.parent.parent, "minicode's own state for this workspace "
                  "(sessions, undo snapshots, input history)", directory=True),
    ]
    entries += [Protected(d, "minicode's per-user configuration, which holds permission rules", directory=True)
                for d in user_dirs]
    if home and os.path.isabs(home):
        entries.append(Protected(Path(home) / ".minicode", "minicode's per-user state (the record of trusted "
                                 "rules)", directory=True))
        git_user = "git's per-user configuration, which can make every repository's git commands run programs"
        entries += [Protected(Path(home) / ".gitconfig", git_user),
                    Protected(Path(home) / ".config" / "git", git_user, directory=True)]
    for git_dir, common in _git_dirs(workspace):
        entries += [
            Protected(common / "hooks", "git's hooks, which run code on git commands", directory=True),
            Protected(common / "config", "git's configuration, which can make git commands run programs"),
            Protected(git_dir / "config.worktree", "git's configuration, which can make git commands run programs"),
            Protected(common / "modules", "the submodules' git configuration and hooks", directory=True),
        ]
    return entries


def _git_dirs(workspace: Path) -> list[tuple[Path, Path]]:
    """(git directory, common directory) of the workspace: ``.git`` itself, and where a
    ``.git`` *file* (a worktree, a submodule) points."""
    dot_git = workspace / ".git"
    found = [(dot_git, dot_git)]
    try:
        if dot_git.is_file():
            text = dot_git.read_text(encoding="utf-8", errors="replace").strip()
            if text.startswith("gitdir:"):
                git_dir = (workspace / text[len("gitdir:") :].strip()).resolve()
                common = git_dir
                commondir = git_dir / "commondir"
                if commondir.is_file():
                    common = (git_dir / commondir.read_text(encoding="utf-8", errors="replace").strip()).resolve()
                found.append((git_dir, common))
    except OSError:
        pass  # unreadable: the workspace's .git paths are still protected
    return found
