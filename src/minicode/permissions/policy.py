"""The decision for one side-effect call: allowed by a rule, denied by one, or asked.

Order: a matching **deny** rule wins (from any file or the command line); a call that writes
or names a protected path (``protected``: the files holding permission rules, git's hooks and
configuration) — or changes git's configuration — is always **asked** (no rule or earlier
answer covers it); then a matching **allow** rule allows; otherwise the call is asked
(``Verdict`` carries the narrowest rule the user may save, and the rules that would have
allowed it).

bash: allowed only when every simple command (``bash_check``) matches an allow rule and
every file a redirection writes matches a ``write`` rule, and nothing was unclear — except
under the bare ``bash`` rule, which allows every command — except, while deny rules are in
effect, one in which a command may run that no rule saw (``BashAnalysis.hidden``: a computed
command name, a parse that stopped …). Denied when any command matches a deny rule — also
inside wrappers, with assignments or a directory dropped, with a word computed anywhere
matched as a template that *could* make it match (``word_templates``: ``r${x}m`` can be
``rm``), and, for a command not fully understood, when the denied command's name appears in
it anywhere. With any deny rule in effect, a command not fully understood is for a person to
approve (``Verdict.person_only``), not ``--yes``.

edit/write: the path as given and as resolved (symlinks followed) must each be allowed by a
rule for that tool; either one matching a deny rule of ``edit`` or ``write`` denies (a file
kept from edits is kept from being overwritten too), and the same deny rules cover files
written by shell redirections.

Pure except for ``realpath`` and ``isfile`` (injected), which look at the file system.
"""

from __future__ import annotations

import fnmatch
import os
import re
import shlex
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

from minicode.permissions.bash_check import ShellContext, analyze_bash
from minicode.permissions.bash_views import STAR, BashAnalysis, CommandView
from minicode.permissions.families import is_known_program
from minicode.permissions.patterns import NAME_STAR, CommandPattern
from minicode.permissions.protected import Hit, Protected, ProtectedPaths
from minicode.permissions.rules import Effect, Rule, SourcedRule
from minicode.permissions.suggest import suggest_bash, suggest_command, suggest_path
from minicode.permissions.verdict import Outcome, Verdict

__all__ = ["Outcome", "PermissionPolicy", "Verdict"]

_PATH_TOOLS = ("edit", "write")
_RULES_FILE = "which holds permission rules"
Form = tuple[str | None, str]  # (relative to the workspace or None, absolute)


class PermissionPolicy:
    """Rules in effect for one workspace (see the module docstring)."""

    def __init__(
        self, workspace: Path, rules: Sequence[SourcedRule], protected: Iterable[Protected | Path] = (),
        realpath: Callable[[str], str] = os.path.realpath, protected_dirs: Iterable[Path] = (),
        env: Mapping[str, str] | None = None, isfile: Callable[[str], bool] = os.path.isfile,
    ) -> None:
        self._isfile = isfile
        self._lexical_root = os.path.abspath(workspace)
        self._realpath = realpath
        self._root = self._resolve(self._lexical_root) or self._lexical_root
        self._rules = tuple(rules)
        entries = [p if isinstance(p, Protected) else Protected(p, _RULES_FILE) for p in protected]
        entries += [Protected(d, "a protected directory", directory=True) for d in protected_dirs]
        env = dict(env or {})
        self._protected = ProtectedPaths(self._lexical_root, entries, self._resolve, env.get("HOME") or None)
        self._context = ShellContext(self._lexical_root, env.get("HOME") or None, env, self._protected.names)
        self._has_deny = any(r.effect is Effect.DENY for r in self._rules)

    @property
    def rules(self) -> tuple[SourcedRule, ...]:
        return self._rules

    def check(self, tool: str, args: Mapping[str, Any]) -> Verdict:
        """The verdict for a call of ``tool`` with (validated) ``args``."""
        if tool == "bash" and isinstance(args.get("command"), str):
            return self._bash(args["command"])
        if tool in _PATH_TOOLS and isinstance(args.get("path"), str):
            return self._path_tool(tool, args["path"])
        if "__" in tool:  # an MCP server's tool: server__tool
            return self._mcp(tool)
        bare = self._first(Effect.DENY, tool, lambda r: r.pattern is None)
        if bare is not None:
            return Verdict(Outcome.DENY, bare.text)
        return Verdict(Outcome.ASK)

    def _mcp(self, name: str) -> Verdict:
        """Deny first, then allow; tool names match case-sensitively (servers' names are)."""

        def matches(rule: Rule) -> bool:
            return rule.pattern is None or fnmatch.fnmatchcase(name, rule.pattern)

        for effect in (Effect.DENY, Effect.ALLOW):
            rule = self._first(effect, "mcp", matches)
            if rule is not None:
                return Verdict(Outcome.DENY if effect is Effect.DENY else Outcome.ALLOW, rule.text)
        return Verdict(Outcome.ASK, suggested=f"mcp({name})", needed=(f"mcp({name})",))

    # --- bash ----------------------------------------------------------------------------

    def _bash(self, command: str) -> Verdict:
        analysis = analyze_bash(command, self._context)
        denied = self._bash_denied(analysis) or self._writes_denied(analysis)
        if denied is not None:
            return Verdict(Outcome.DENY, denied.text)
        protected = self._bash_protected(analysis)
        if protected is not None:
            return protected
        bare = self._first(Effect.ALLOW, "bash", lambda r: r.pattern is None)
        if bare is not None and not (self._has_deny and analysis.hidden):
            return Verdict(Outcome.ALLOW, bare.text)
        return self._bash_allowed(analysis)

    def _bash_denied(self, analysis: BashAnalysis) -> Rule | None:
        views = (*analysis.commands, *analysis.deny_only)

        def matches(rule: Rule) -> bool:
            if rule.command is None:
                return True  # bare "bash": every command
            if any(_deny_matches(rule.command, t) for view in views for t in view.deny_texts):
                return True
            return bool(analysis.unclear) and _appears_in(rule.command, analysis.source)

        return self._first(Effect.DENY, "bash", matches)

    def _writes_denied(self, analysis: BashAnalysis) -> Rule | None:
        named = [a.paths for v in analysis.commands if v.writer for a in v.args if a.paths]
        for paths in (*(t.paths for t in analysis.writes), *named):  # a redirection, or a writer's path (tee .env)
            for path in paths:
                rule = self._path_rule(Effect.DENY, _PATH_TOOLS, self._abs_forms(path), any)
                if rule is not None:
                    return rule
        for name in analysis.deny_names:  # after a cd to an unknown directory: by name
            base = os.path.basename(os.path.normpath(name))
            for tool in _PATH_TOOLS:
                rule = self._first(Effect.DENY, tool, lambda r: r.path is not None and r.path.name is not None
                                   and r.path.name.fullmatch(base) is not None)
                if rule is not None:
                    return rule
        return None

    def _bash_protected(self, analysis: BashAnalysis) -> Verdict | None:
        for target in analysis.writes:
            hit = self._protected.hit(target.paths)
            if hit is not None:
                return _protected_verdict("writes", hit)
        for view in analysis.commands:
            if view.protected is not None:
                return Verdict(Outcome.ASK, protected=".git/config", protected_reason=view.protected)
            found = self._view_protected(view)
            if found is not None:
                return found
        for arg in analysis.extra_args:
            hit = self._protected.hit(arg.paths or ())
            if hit is not None:
                return _protected_verdict("names", hit)
        return None

    def _view_protected(self, view: CommandView) -> Verdict | None:
        how = "writes" if view.writer else "names"
        known = [arg.paths for arg in view.args if arg.paths is not None]
        for paths in known:
            hit = self._protected.hit(paths)
            if hit is not None:
                return _protected_verdict(how, hit)
        if not view.writer:
            return None
        for paths in known:  # cp -r hooks .git/ writes .git/hooks
            hit = self._protected.holder(paths)
            if hit is not None:
                return _protected_verdict("writes into the directory holding", hit)
        if any(self._protected.is_root(p) for paths in known for p in paths):
            for paths in known:  # cp -r x/config . replaces config/
                hit = next((h for h in map(self._protected.top_entry, paths) if h is not None), None)
                if hit is not None:
                    return _protected_verdict("may replace", hit)
            others = [p for paths in known for p in paths if not self._protected.is_root(p)]
            if not all(self._isfile(p) for p in others):  # cp -r x/. . may bring x/.git/hooks
                return Verdict(Outcome.ASK, protected=".", protected_reason=(
                    f"{view.words[0]} writes into the workspace root from something other than plain files, "
                    "which may replace .git/hooks, .git/config or the rules files"))
        return None

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
            for path in target.paths:
                rules, missing = self._path_allowed("write", self._abs_forms(path))
                used.extend(rules)
                needed.extend(missing)
        unclear = analysis.unclear[0] if analysis.unclear else None
        if used and not needed and unclear is None:
            return Verdict(Outcome.ALLOW, ", ".join(dict.fromkeys(used)))
        hidden = self._has_deny and bool(analysis.hidden)
        unclear = analysis.hidden[0] if hidden else unclear or self._may_run_denied(analysis)
        return Verdict(Outcome.ASK, suggested=suggest_bash(analysis), needed=tuple(dict.fromkeys(needed)),
                       unclear=unclear, person_only=unclear is not None and self._has_deny, hidden=hidden)

    def _may_run_denied(self, analysis: BashAnalysis) -> str | None:
        """Why a program minicode does not know may run a denied command given in its
        arguments (``setpriv2 rm -f x``), or None: not for ``--yes`` to approve (an allow rule
        for the program itself still allows it)."""
        if not self._has_deny:
            return None
        for view in analysis.commands:
            name = view.words[0].rsplit("/", 1)[-1] if view.words else ""
            if not name or view.runs_other or is_known_program(name):
                continue
            for start in range(1, len(view.words)):
                text = " ".join(shlex.quote(w) for w in view.words[start:])
                if self._first(Effect.DENY, "bash", lambda r: r.command is not None and r.command.matches(text)):
                    return f"{name} is a program minicode does not know, and it may run {_short(text)}"
        return None

    # --- edit / write --------------------------------------------------------------------

    def _path_tool(self, tool: str, path: str) -> Verdict:
        forms = self._forms(path)
        rule = self._path_rule(Effect.DENY, _PATH_TOOLS, forms, any)
        if rule is not None:
            return Verdict(Outcome.DENY, rule.text)
        hit = self._protected.hit(absolute for _, absolute in forms)
        if hit is not None:
            return _protected_verdict("writes", hit)
        rules, missing = self._path_allowed(tool, forms)
        if not missing:
            return Verdict(Outcome.ALLOW, ", ".join(dict.fromkeys(rules)))
        suggested = suggest_path(tool, forms[0][0]) if len(missing) == 1 and forms[0][0] is not None else None
        if suggested is not None and suggested not in missing:
            suggested = None  # the path as written is allowed; the one it leads to is not
        return Verdict(Outcome.ASK, suggested=suggested, needed=tuple(dict.fromkeys(missing)),
                       note=self._leads_note(path, forms))

    def _path_allowed(self, tool: str, forms: Sequence[Form]) -> tuple[list[str], list[str]]:
        """The rules allowing each form, and for each form no rule allows, the rule that would."""
        used: list[str] = []
        missing: list[str] = []
        for form in forms:
            rule = self._path_rule(Effect.ALLOW, (tool,), (form,), all)
            if rule is not None:
                used.append(rule.text)
                continue
            relative, absolute = form
            if relative is None:
                missing.append(f"{tool}(//{absolute.lstrip('/')})" if absolute else tool)
            else:
                missing.append(suggest_path(tool, relative) or f"{tool}(/{relative})")
        return used, missing

    def _leads_note(self, path: str, forms: Sequence[Form]) -> str | None:
        if len(forms) < 2:
            return None
        (_, lexical), (relative, resolved) = forms[0], forms[1]
        if not resolved:
            return None
        where = relative if relative is not None else resolved
        outside = "" if relative is not None else ", outside the workspace"
        return f"{path} leads to {where}{outside} through a symbolic link"

    def _forms(self, path: str) -> list[Form]:
        """(relative to the workspace or None, absolute) for the path as written and resolved.
        A path that cannot be resolved (changing under us) gets a form no rule matches, so
        no allow rule covers it (deny rules still see the path as written)."""
        return self._abs_forms(os.path.normpath(os.path.join(self._lexical_root, path)))

    def _abs_forms(self, lexical: str) -> list[Form]:
        resolved = self._resolve(lexical)
        return [(self._relative(a) if a else None, a) for a in dict.fromkeys((lexical, resolved or ""))]

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

    def _path_rule(
        self, effect: Effect, tools: Sequence[str], forms: Sequence[Form], combine: Callable[[Iterable[bool]], bool],
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


def _protected_verdict(how: str, hit: Hit) -> Verdict:
    return Verdict(Outcome.ASK, protected=hit.shown, protected_reason=f"it {how} {hit.shown}, {hit.what}")


def _deny_matches(pattern: CommandPattern, text: str) -> bool:
    """A deny text with computed segments (a template) is denied when it *could* match."""
    return pattern.could_match(text) if STAR in text or NAME_STAR in text else pattern.matches(text)


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


def _short(text: str, limit: int = 40) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
