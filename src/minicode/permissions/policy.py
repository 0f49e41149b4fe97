"""The decision for one side-effect call: allowed by a rule, denied by one, or asked.

Order: a matching **deny** rule wins (from any file or the command line); a write to a file
that holds permission rules or to git's hooks/config (``protected``) — or a command naming one —
is always **asked** (no rule or earlier answer covers it); then a
matching **allow** rule allows; otherwise the call is asked (``Verdict`` carries the
narrowest rule the user may save, and the rules that would have allowed it).

bash: allowed only when every simple command (``bash_check``) matches an allow rule and
every file a redirection writes matches a ``write`` rule, and nothing was unclear — except
under the bare ``bash`` rule, which allows every command. Denied when any command matches a
deny rule — also inside wrappers, with assignments or a directory dropped, and, for a
command not fully understood, when the denied command's name appears in it anywhere.

edit/write: the path as given and as resolved (symlinks followed) must both match an allow
rule for that tool; either one matching a deny rule of ``edit`` or ``write`` denies (a file
kept from edits is kept from being overwritten too), and the same deny rules cover files
written by shell redirections.

Pure except for ``realpath`` (injected), which resolves symlinks.
"""

from __future__ import annotations

import enum
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

from minicode.permissions.bash_check import BashAnalysis, CommandView, analyze_bash
from minicode.permissions.patterns import CommandPattern
from minicode.permissions.protected import ProtectedPaths
from minicode.permissions.rules import Effect, Rule, SourcedRule
from minicode.permissions.suggest import suggest_bash, suggest_command, suggest_path

__all__ = ["Outcome", "PermissionPolicy", "Verdict"]

_PATH_TOOLS = ("edit", "write")


class Outcome(enum.Enum):
    ALLOW = "allow"
    DENY = "deny"
    ASK = "ask"


@dataclass(frozen=True, slots=True)
class Verdict:
    outcome: Outcome
    rule: str | None = None
    """ALLOW: the rule(s) that allowed it (comma-separated); DENY: the rule that denied it."""
    suggested: str | None = None
    """ASK: the narrowest rule "always allow" may save (None: no sensible one)."""
    needed: tuple[str, ...] = ()
    """ASK: rules that together would allow this call."""
    unclear: str | None = None
    """ASK: why no rule narrower than ``bash`` can allow it."""
    protected: str | None = None
    """ASK: the permission file it writes; asked every time, never saved as a rule."""

    def hint(self) -> str:
        """For a denial without anyone to ask: what would allow the call."""
        if self.protected is not None:
            return f"it writes {self.protected}, which holds permission rules: only a person can approve that"
        if self.unclear is not None:
            return (f"the command could not be fully understood ({self.unclear}), so only the rule bash "
                    "(every command) or --yes would allow it")
        if not self.needed:
            return "no rule can allow it"
        rules = ", ".join(self.needed)
        flags = " ".join(f"--allow '{r}'" for r in self.needed)
        noun = "the rule" if len(self.needed) == 1 else "the rules"
        return f"{noun} {rules} would allow it ({flags}, or [permissions] allow in the config)"


_ASK = Verdict(Outcome.ASK)


class PermissionPolicy:
    """Rules in effect for one workspace (see the module docstring)."""

    def __init__(
        self, workspace: Path, rules: Sequence[SourcedRule], protected: Iterable[Path] = (),
        realpath: Callable[[str], str] = os.path.realpath, protected_dirs: Iterable[Path] = (),
    ) -> None:
        self._lexical_root = os.path.abspath(workspace)
        self._realpath = realpath
        self._root = self._resolve(self._lexical_root) or self._lexical_root
        self._rules = tuple(rules)
        self._protected = ProtectedPaths(self._lexical_root, protected, protected_dirs, self._resolve)

    @property
    def rules(self) -> tuple[SourcedRule, ...]:
        return self._rules

    def check(self, tool: str, args: Mapping[str, Any]) -> Verdict:
        """The verdict for a call of ``tool`` with (validated) ``args``."""
        if tool == "bash" and isinstance(args.get("command"), str):
            return self._bash(args["command"])
        if tool in _PATH_TOOLS and isinstance(args.get("path"), str):
            return self._path_tool(tool, args["path"])
        bare = self._first(Effect.DENY, tool, lambda r: r.pattern is None)
        if bare is not None:
            return Verdict(Outcome.DENY, bare.text)
        return _ASK

    # --- bash ----------------------------------------------------------------------------

    def _bash(self, command: str) -> Verdict:
        analysis = analyze_bash(command)
        denied = self._bash_denied(analysis)
        if denied is not None:
            return Verdict(Outcome.DENY, denied.text)
        for target in analysis.writes:
            forms = self._forms(target)
            rule = self._path_rule(Effect.DENY, _PATH_TOOLS, forms, any)
            if rule is not None:
                return Verdict(Outcome.DENY, rule.text)
            protected = self._protected_file(forms)
            if protected is not None:
                return Verdict(Outcome.ASK, protected=protected)
        for view in analysis.commands:
            protected = self._protected.named_in(view.words[1:], self._absolutes)
            if protected is not None:
                return Verdict(Outcome.ASK, protected=protected)
        bare = self._first(Effect.ALLOW, "bash", lambda r: r.pattern is None)
        if bare is not None:
            return Verdict(Outcome.ALLOW, bare.text)
        return self._bash_allowed(analysis)

    def _bash_denied(self, analysis: BashAnalysis) -> Rule | None:
        def matches(rule: Rule) -> bool:
            if rule.command is None:
                return True  # bare "bash": every command
            if any(rule.command.matches(t) for view in analysis.commands for t in view.deny_texts):
                return True
            return bool(analysis.unclear) and _appears_in(rule.command, analysis.source)

        return self._first(Effect.DENY, "bash", matches)

    def _bash_allowed(self, analysis: BashAnalysis) -> Verdict:
        used: list[str] = []
        needed: list[str] = []
        for view in analysis.commands:
            rule = self._command_rule(Effect.ALLOW, view.text)
            if rule is not None:
                used.append(rule.text)
            else:
                needed.append(_needed_for(view))
        for target in analysis.writes:
            forms = self._forms(target)
            rule = self._path_rule(Effect.ALLOW, ("write",), forms, all)
            if rule is not None:
                used.append(rule.text)
            else:
                needed.append(suggest_path("write", forms[0][0]) or f"write(//{forms[0][1].lstrip('/')})")
        unclear = analysis.unclear[0] if analysis.unclear else None
        if used and not needed and unclear is None:
            return Verdict(Outcome.ALLOW, ", ".join(dict.fromkeys(used)))
        return Verdict(Outcome.ASK, suggested=suggest_bash(analysis), needed=tuple(dict.fromkeys(needed)),
                       unclear=unclear)

    # --- edit / write --------------------------------------------------------------------

    def _path_tool(self, tool: str, path: str) -> Verdict:
        forms = self._forms(path)
        rule = self._path_rule(Effect.DENY, _PATH_TOOLS, forms, any)
        if rule is not None:
            return Verdict(Outcome.DENY, rule.text)
        protected = self._protected_file(forms)
        if protected is not None:
            return Verdict(Outcome.ASK, protected=protected)
        rule = self._path_rule(Effect.ALLOW, (tool,), forms, all)
        if rule is not None:
            return Verdict(Outcome.ALLOW, rule.text)
        suggested = suggest_path(tool, forms[0][0])
        return Verdict(Outcome.ASK, suggested=suggested, needed=(suggested,) if suggested else (tool,))

    def _forms(self, path: str) -> list[tuple[str | None, str]]:
        """(relative to the workspace or None, absolute) for the path as written and resolved.
        A path that cannot be resolved (changing under us) gets a form no rule matches, so
        no allow rule covers it (deny rules still see the path as written)."""
        lexical = os.path.normpath(os.path.join(self._lexical_root, path))
        resolved = self._resolve(lexical)
        forms: list[tuple[str | None, str]] = []
        for absolute in dict.fromkeys((lexical, resolved if resolved is not None else "")):
            forms.append((self._relative(absolute) if absolute else None, absolute))
        return forms

    def _resolve(self, path: str) -> str | None:
        """The real path, or None when it cannot be had: realpath raises when a component
        is swapped between its lstat and readlink (another process renaming it)."""
        try:
            return self._realpath(path)
        except (OSError, ValueError):
            return None

    def _relative(self, absolute: str) -> str | None:
        for root in dict.fromkeys((self._root, self._lexical_root)):
            if absolute == root:
                return "."
            if absolute.startswith(root.rstrip("/") + "/"):
                return absolute[len(root.rstrip("/")) + 1 :]
        return None

    def _protected_file(self, forms: Sequence[tuple[str | None, str]]) -> str | None:
        return self._protected.hit(absolute for _, absolute in forms)

    def _absolutes(self, path: str) -> list[str]:
        return [absolute for _, absolute in self._forms(path)]

    def _path_rule(
        self, effect: Effect, tools: Sequence[str], forms: Sequence[tuple[str | None, str]],
        combine: Callable[[Iterable[bool]], bool],
    ) -> Rule | None:
        for tool in tools:
            rule = self._first(
                effect, tool,
                lambda r: r.path is None and combine(rel is not None for rel, _ in forms) or (
                    r.path is not None and combine(r.path.matches(rel, ab) for rel, ab in forms)),
            )
            if rule is not None:
                return rule
        return None

    def _command_rule(self, effect: Effect, text: str) -> Rule | None:
        return self._first(effect, "bash", lambda r: r.command is not None and r.command.matches(text))

    def _first(self, effect: Effect, tool: str, test: Callable[[Rule], bool]) -> Rule | None:
        for sourced in self._rules:
            if sourced.effect is effect and sourced.rule.tool == tool and test(sourced.rule):
                return sourced.rule
        return None


def _needed_for(view: CommandView) -> str:
    """A rule that would allow this one command: the suggestion, else the exact command."""
    suggested = suggest_command(view)
    if suggested is not None:
        return suggested
    if "*" in view.text or "\n" in view.text or ")" in view.text:
        return "bash"
    return f"bash({view.text})"


def _appears_in(pattern: CommandPattern, source: str) -> bool:
    """For a command not fully understood: does the denied command appear in it at all?
    (Its literal words before the first ``*``, as whole words, anywhere in the text.)"""
    if pattern.prefix:
        # "/" may precede the name: /bin/rm is rm
        words = r"\s+".join(re.escape(w) for w in pattern.prefix)
        return re.search(r"(?<![\w.-])" + words + r"(?![\w-])", source) is not None
    return pattern.searcher.search(" ".join(source.split())) is not None
