"""The rules in effect for one session, and the workspace's own rules file.

``PermissionStore`` joins the fixed rules (``--allow``/``--deny``, the configuration files)
with the workspace's saved rules — ``.minicode/local/permissions.toml``, written by "always
allow … in this project" and by ``/permissions`` removals, mode 0600, in a directory whose
own ``.gitignore`` keeps it out of git. Every change re-reads the file first (another run
may have saved a rule meanwhile) and replaces it atomically. The files holding rules, and
git's hooks and configuration, are *protected*: a write to them is always asked, so no rule
or earlier answer lets the model grant itself permissions or plant code an allowed command
(``git commit``) would run. Blocking file I/O: call ``remember``/``remove`` off the event loop.
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path
from typing import Any, Mapping, Sequence

from minicode.errors import ConfigError
from minicode.permissions.policy import PermissionPolicy, Verdict
from minicode.permissions.rules import Effect, Origin, SourcedRule, parse_rule, rules_from_table
from minicode.tomlfile import read_toml

__all__ = ["PROJECT_RULES_FILE", "PermissionStore"]

PROJECT_RULES_FILE = Path(".minicode") / "local" / "permissions.toml"
"""The workspace's saved rules, relative to the workspace."""
_FILE_MODE = 0o600
_DIR_MODE = 0o700
_HEADER = (
    "# Permission rules of this workspace, saved by minicode (\"always allow … in this project\").\n"
    "# Edit by hand or with /permissions; rule syntax: docs/config.md. Kept out of git.\n\n"
)


class PermissionStore:
    """Checks calls against the rules in effect; saves and removes the workspace's rules."""

    def __init__(self, workspace: Path, fixed: Sequence[SourcedRule], protected: Sequence[Path] = ()) -> None:
        self.workspace = workspace
        self.file = workspace / PROJECT_RULES_FILE
        self._fixed = tuple(fixed)
        self._protected = (*protected, self.file)
        self._project = tuple(self._read())
        self._policy = self._build()

    # --- checking ------------------------------------------------------------------------

    def check(self, tool: str, args: Mapping[str, Any]) -> Verdict:
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
        Raises ConfigError (a bad rule, or the file cannot be read or written)."""
        rule = parse_rule(text)
        current = self._read()
        if not any(r.effect is Effect.ALLOW and r.rule.text == rule.text for r in current):
            current.append(SourcedRule(rule, Effect.ALLOW, Origin.PROJECT, self.file))
            self._write(current)
        self._project = tuple(current)
        self._policy = self._build()
        return self.shown_file

    def remove(self, text: str) -> SourcedRule:
        """Remove the workspace rule written ``text`` (allow or deny); returns it.

        A rule from elsewhere cannot be removed here: the error names its file (or the flag)."""
        wanted = text.strip()
        current = self._read()
        kept = [r for r in current if r.rule.text != wanted]
        if len(kept) == len(current):
            raise ConfigError(self._not_removable(wanted))
        removed = next(r for r in current if r.rule.text == wanted)
        self._write(kept)
        self._project = tuple(kept)
        self._policy = self._build()
        return removed

    @property
    def shown_file(self) -> str:
        return PROJECT_RULES_FILE.as_posix()

    def _not_removable(self, wanted: str) -> str:
        elsewhere = next((r for r in self._fixed if r.rule.text == wanted), None)
        if elsewhere is None:
            return f"no rule {wanted} in {self.shown_file}"
        if elsewhere.file is None:
            return f"{wanted} was given on the command line ({elsewhere.effect.value}) for this run only"
        return f"{wanted} comes from {elsewhere.file}: edit that file to remove it"

    # --- the file ------------------------------------------------------------------------

    def _build(self) -> PermissionPolicy:
        git = self.workspace / ".git"
        return PermissionPolicy(self.workspace, self.rules, (*self._protected, git / "config"),
                                protected_dirs=(git / "hooks",))

    def _read(self) -> list[SourcedRule]:
        try:
            present = self.file.exists() or self.file.is_symlink()
        except OSError as e:
            raise ConfigError(f"{self.file}: cannot access the permission rules ({e.strerror})") from e
        if not present:
            return []
        data = read_toml(self.file, "permission rules file")
        unknown = [key for key in data if key != "permissions"]
        if unknown:
            raise ConfigError(f"{self.file}: unknown table or key {unknown[0]!r} (allowed: [permissions])")
        return rules_from_table(data.get("permissions", {}), str(self.file), Origin.PROJECT, self.file)

    def _write(self, rules: Sequence[SourcedRule]) -> None:
        import tomli_w  # lazily: only saving a rule writes TOML

        table = {
            effect.value: [r.rule.text for r in rules if r.effect is effect]
            for effect in (Effect.ALLOW, Effect.DENY)
            if any(r.effect is effect for r in rules)
        }
        text = _HEADER + tomli_w.dumps({"permissions": table}, multiline_strings=False, indent=4)
        try:
            self._ensure_dir()
            if self.file.is_symlink():
                raise ConfigError(f"{self.file}: is a symbolic link; refusing to write through it")
            _atomic_write(self.file, text.encode("utf-8"))
        except OSError as e:
            raise ConfigError(f"{self.file}: cannot save the permission rules ({e.strerror})") from e

    def _ensure_dir(self) -> None:
        directory = self.file.parent
        directory.mkdir(mode=_DIR_MODE, parents=True, exist_ok=True)
        ignore = directory / ".gitignore"
        if not ignore.exists() and not ignore.is_symlink():
            ignore.write_text("# minicode: this directory holds per-workspace settings, never committed\n*\n",
                              encoding="utf-8")


def _atomic_write(path: Path, data: bytes) -> None:
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(6)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, _FILE_MODE)
    try:
        try:
            os.fchmod(fd, _FILE_MODE)  # a restrictive umask must not matter, a loose one neither
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
