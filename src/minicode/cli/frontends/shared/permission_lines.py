"""Plain-mode lines about permission rules: what a rule decided, and ``/permissions``.

``approval_line`` turns an ``ApprovalResolved`` into a stderr line: denials by a rule or by
the no-terminal policy always (a headless run must say why a call did not run, and which
rule would allow it); calls allowed by a rule only beside the live progress lines.
``startup_lines`` name the project files the model is given and count the rules in effect.
``permissions_command`` lists the rules in effect (``/permissions``) and removes one of the
workspace's saved rules (``/permissions remove RULE``), or puts a rules file minicode did not
write into effect (``/permissions trust``). No prompt_toolkit, no rich.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Callable, Sequence

from minicode.agent.approval import ApprovedBy
from minicode.errors import ConfigError

if TYPE_CHECKING:  # the rule listing loads for /permissions, not for the start-up line
    from minicode.agent.events import ApprovalResolved
    from minicode.permissions.rules import SourcedRule
    from minicode.permissions.store import PermissionStore

__all__ = [
    "USAGE",
    "approval_line",
    "permissions_command",
    "permissions_listing",
    "remove_rule",
    "rules_summary",
    "startup_lines",
    "trust_rules",
]

USAGE = ("/permissions lists the rules in effect; /permissions remove N (or RULE) removes one saved in this "
         "workspace; /permissions trust puts a rules file minicode did not write into effect")


def approval_line(event: ApprovalResolved, label: str, progress: bool) -> str | None:
    """The stderr line for a decision nobody was asked about, or None."""
    if event.by is ApprovedBy.RULE:
        if not event.allowed:
            return f"minicode: denied {label}: denied by rule {event.rule}"
        return f"minicode: allowed by rule {event.rule}: {label}" if progress else None
    if event.by is ApprovedBy.POLICY and not event.allowed:
        return f"minicode: denied {label}: {event.reason or 'nobody can approve it here'}"
    return None


def rules_summary(rules: Sequence[SourcedRule]) -> str | None:
    """``3 allow, 1 deny`` for the rules in effect, or None without any."""
    if not rules:
        return None
    from minicode.permissions.rules import Effect

    allow = sum(1 for r in rules if r.effect is Effect.ALLOW)
    return f"{allow} allow, {len(rules) - allow} deny"


def startup_lines(project_files: Sequence[str], rules: Sequence[SourcedRule]) -> list[str]:
    """What the start-up says besides the session: the project files the model is given
    (AGENTS.md/CLAUDE.md, MiniCode.md) and how many permission rules are in effect."""
    lines = [f"minicode: project files: {', '.join(project_files)}"] if project_files else []
    summary = rules_summary(rules)
    if summary is not None:
        lines.append(f"minicode: permission rules: {summary} (/permissions lists them)")
    return lines


ASKED = "asked"
"""What happens to a call no rule matches, in the full screen."""
UNMATCHED_YES = "approved (--yes)"
UNMATCHED_PLAIN = "asked on the terminal, denied without one"


def permissions_listing(store: PermissionStore, unmatched: str = ASKED) -> list[str]:
    """The numbered rules in effect (deny first), each with where it comes from;
    ``unmatched`` says what happens to a call no rule matches in this run."""
    from minicode.permissions.listing import rule_rows

    rows = rule_rows(store.rules, store.workspace)
    store.listed = tuple(row.rule for row in rows)  # what "remove N" refers to from now on
    untrusted = [f"{store.shown_file} is not in effect: minicode did not write it, or it changed since; "
                 "check it, then /permissions trust"] if store.untrusted else []
    if not rows:
        return [
            *untrusted,
            f"no permission rules: every write, edit and bash call is {unmatched}",
            "add rules under [permissions] in the config, with --allow/--deny, or answer "
            f"'always allow … in this project' at a question (saved in {store.shown_file})",
        ]
    width = max(len(row.rule) for row in rows)
    lines = [*untrusted, f"permission rules (deny wins over allow; calls no rule matches are {unmatched}):"]
    for number, row in enumerate(rows, start=1):
        note = "  (saved here: removable)" if row.removable else ""
        lines.append(f"{number:>3}  {row.effect:<5}  {row.rule:<{width}}  {row.source}{note}")
    if any(row.removable for row in rows):
        lines.append("/permissions remove N (or RULE) removes a rule saved in this workspace")
    return lines


def remove_rule(store: PermissionStore, target: str) -> str:
    """``/permissions remove N|RULE``: the line saying what was removed. Blocking (file I/O);
    raises ConfigError naming why not (not a saved rule: its file or flag)."""
    from minicode.permissions.listing import removal_target, rule_rows

    text = removal_target(rule_rows(store.rules, store.workspace), target, store.listed)
    removed = store.remove(text)
    return f"removed {removed.effect.value} rule {removed.rule.text} from {store.shown_file}"


def trust_rules(store: PermissionStore) -> str:
    """``/permissions trust``: the line saying which rules took effect. Blocking (file I/O);
    raises ConfigError (no file, not valid, the record cannot be written)."""
    rules = store.trust()
    listed = ", ".join(r.rule.text for r in rules) or "no rules"
    return f"trusted {store.shown_file} as it is now: in effect: {listed}"


async def permissions_command(store: PermissionStore, text: str, out: Callable[[str], None], *,
                              yes: bool = False) -> int:
    """Handle a ``/permissions`` line of pipe mode (``yes``: ``--yes`` approves what no rule
    decides); returns 0, or 1 when a change failed."""
    words = text.split(maxsplit=2)
    if len(words) == 1:
        for line in permissions_listing(store, UNMATCHED_YES if yes else UNMATCHED_PLAIN):
            out(f"minicode: {line}")
        return 0
    if words[1:] == ["trust"]:
        action: Callable[[], str] = lambda: trust_rules(store)
    elif words[1] == "remove" and len(words) == 3:
        target = words[2]
        action = lambda: remove_rule(store, target)
    else:
        out(f"minicode: {USAGE}")
        return 1
    try:
        done = await asyncio.to_thread(action)
    except ConfigError as e:
        out(f"minicode: error: {e}")
        return 1
    out(f"minicode: {done}")
    return 0
