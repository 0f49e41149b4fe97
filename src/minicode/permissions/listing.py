"""The rules in effect as rows for ``/permissions`` (full screen and pipe mode). Pure."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from minicode.permissions.rules import Effect, Origin, RuleError, SourcedRule

__all__ = ["RuleRow", "removal_target", "rule_rows"]


@dataclass(frozen=True, slots=True)
class RuleRow:
    effect: str  # "allow" | "deny"
    rule: str
    source: str  # the file (relative to the workspace when inside it) or "--allow (this run)"
    removable: bool  # only the workspace's saved rules can be removed from minicode


def rule_rows(rules: Sequence[SourcedRule], workspace: Path) -> list[RuleRow]:
    """Deny rules first (they win), then allow rules; each with where it comes from."""
    ordered = [r for r in rules if r.effect is Effect.DENY] + [r for r in rules if r.effect is Effect.ALLOW]
    return [RuleRow(r.effect.value, r.rule.text, _source(r, workspace), r.origin is Origin.PROJECT) for r in ordered]


def _source(rule: SourcedRule, workspace: Path) -> str:
    if rule.file is None:
        return f"--{rule.effect.value} (this run)"
    try:
        return rule.file.relative_to(workspace).as_posix()
    except ValueError:
        return str(rule.file)


def removal_target(rows: Sequence[RuleRow], target: str, listed: Sequence[str] | None = None) -> str:
    """The rule ``/permissions remove TARGET`` means: a number from the listing the user last
    saw (``listed``, the rules by number; the current ``rows`` when none was shown), or the
    rule as written. Raises RuleError for a number that is not in that listing."""
    target = target.strip()
    if not target.isdigit():
        return target
    numbered = list(listed) if listed is not None else [row.rule for row in rows]
    number = int(target)
    if not 1 <= number <= len(numbered):
        raise RuleError(f"no rule number {number}: /permissions lists {len(numbered)}")
    rule = numbered[number - 1]
    if listed is not None and rule not in {row.rule for row in rows}:
        raise RuleError(f"rule number {number} of the last listing, {rule}, is no longer in effect; "
                        "/permissions lists the rules now")
    return rule
