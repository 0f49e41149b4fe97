"""The verdict for one side-effect call, and the hint a headless denial gives. Pure."""

from __future__ import annotations

import enum

from dataclasses import dataclass

__all__ = ["Outcome", "Verdict"]


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
    """ASK: the protected path it writes or names; asked every time, never saved as a rule."""
    protected_reason: str | None = None
    """ASK: what that path is, as "it writes .git/hooks, git's hooks, which run code …"."""
    person_only: bool = False
    """ASK: only a person may approve it — not ``--yes`` (a command not fully understood while
    deny rules are in effect: it might be one of the denied commands)."""
    note: str | None = None
    """ASK: more about the path (it leads elsewhere through a symbolic link)."""
    hidden: bool = False
    """ASK (with ``person_only``): a command may run that no rule saw, and deny rules are in
    effect — not even the bare ``bash`` rule allows it."""

    def hint(self) -> str:
        """For a denial without anyone to ask: what would allow the call."""
        if self.protected is not None:
            reason = self.protected_reason or f"it writes {self.protected}, which holds permission rules"
            return f"{reason}: no rule can allow that, only a person at the prompt (or --yes)"
        if self.unclear is not None and self.hidden:
            return (f"the command could not be fully understood ({self.unclear}) and deny rules are in effect, "
                    "so only a person would allow it")
        if self.unclear is not None:
            who = "a person" if self.person_only else "--yes"
            return (f"the command could not be fully understood ({self.unclear}), so only the rule bash "
                    f"(every command) or {who} would allow it")
        if not self.needed:
            return "no rule can allow it"
        rules = ", ".join(self.needed)
        flags = " ".join(f"--allow '{r}'" for r in self.needed)
        noun = "the rule" if len(self.needed) == 1 else "the rules"
        note = f"; {self.note}" if self.note else ""
        return f"{noun} {rules} would allow it ({flags}, or [permissions] allow in the config){note}"

    def yes_refusal(self) -> str:
        """Why ``--yes`` does not approve a ``person_only`` call."""
        if self.hidden:
            return (f"deny rules are in effect and the command could not be fully understood ({self.unclear}): "
                    "it may run a denied command, so --yes does not approve it, only a person can")
        return (f"deny rules are in effect and the command could not be fully understood ({self.unclear}): "
                "--yes does not approve it, only a person can (or the rule bash, which allows every command)")
