"""Plain-mode lines about permission rules: what a rule decided, and ``/permissions``.

``approval_line`` turns an ``ApprovalResolved`` into a stderr line: denials by a rule or by
the no-terminal policy always (a headless run must say why a call did not run, and which
rule would allow it); calls allowed by a rule only beside the live progress lines.
``permissions_command`` lists the rules in effect (``/permissions``) and removes one of the
workspace's saved rules (``/permissions remove RULE``). No prompt_toolkit, no rich.
"""

from __future__ import annotations

import asyncio
from typing import Callable

from minicode.agent.approval import ApprovedBy
from minicode.agent.events import ApprovalResolved
from minicode.errors import ConfigError
from minicode.permissions.listing import rule_rows
from minicode.permissions.store import PermissionStore

__all__ = ["approval_line", "permissions_command", "permissions_listing"]

USAGE = "/permissions lists the rules in effect; /permissions remove RULE removes one saved in this workspace"


def approval_line(event: ApprovalResolved, label: str, progress: bool) -> str | None:
    """The stderr line for a decision nobody was asked about, or None."""
    if event.by is ApprovedBy.RULE:
        if not event.allowed:
            return f"minicode: denied {label}: denied by rule {event.rule}"
        return f"minicode: allowed by rule {event.rule}: {label}" if progress else None
    if event.by is ApprovedBy.POLICY and not event.allowed:
        return f"minicode: denied {label}: {event.reason or 'nobody can approve it here'}"
    return None


def permissions_listing(store: PermissionStore) -> list[str]:
    rows = rule_rows(store.rules, store.workspace)
    if not rows:
        return [
            "minicode: no permission rules: every write, edit and bash call is asked",
            "minicode: add rules under [permissions] in the config, with --allow/--deny, or answer "
            f"p (always allow in this project) at a question (saved in {store.shown_file})",
        ]
    width = max(len(row.rule) for row in rows)
    lines = ["minicode: permission rules (deny wins over allow; calls no rule matches are asked):"]
    for row in rows:
        note = " (removable: /permissions remove …)" if row.removable else ""
        lines.append(f"  {row.effect:<5}  {row.rule:<{width}}  {row.source}{note}")
    return lines


async def permissions_command(store: PermissionStore, text: str, out: Callable[[str], None]) -> int:
    """Handle a ``/permissions`` line; returns 0, or 1 when a removal failed."""
    words = text.split(maxsplit=2)
    if len(words) == 1:
        for line in permissions_listing(store):
            out(line)
        return 0
    if words[1] != "remove" or len(words) < 3:
        out(f"minicode: {USAGE}")
        return 1
    try:
        removed = await asyncio.to_thread(store.remove, words[2])
    except ConfigError as e:
        out(f"minicode: error: {e}")
        return 1
    out(f"minicode: removed {removed.effect.value} rule {removed.rule.text} from {store.shown_file}")
    return 0
