"""Approvers of the full-screen UI: the in-app prompt (a Future the agent awaits) and --yes
(``AutoApprover``, re-exported from ``agent.approval``).

``TuiApprover.approve`` publishes a ``PendingApproval`` and waits on its Future; the key
bindings answer it (``y`` once, ``a`` this tool for the session, ``n`` deny, then an optional
reason + Enter). Cancelling the waiting task (Esc, Ctrl+C) withdraws the prompt. The approver
never draws anything: the controller shows ``pending`` and is told of changes via ``on_change``.
Imports no prompt_toolkit.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Callable

from minicode.agent.approval import Approval, ApprovalRequest, AutoApprover, Decision

__all__ = ["AutoApprover", "PendingApproval", "TuiApprover"]

_KEYS = {"y": Decision.ALLOW_ONCE, "a": Decision.ALLOW_SESSION, "n": Decision.DENY}


@dataclass(slots=True)
class PendingApproval:
    request: ApprovalRequest
    future: asyncio.Future[Approval]
    asking_reason: bool = False
    """``n`` was pressed; the user may now type a reason (Enter sends, even empty)."""
    reason: str = field(default="")


class TuiApprover:
    """Asks in the UI. ``on_change(pending_or_None, approval_or_None)`` runs on every transition."""

    def __init__(self, on_change: Callable[[PendingApproval | None, Approval | None], None]) -> None:
        self.pending: PendingApproval | None = None
        self._on_change = on_change
        self._session_tools: set[str] = set()

    async def approve(self, request: ApprovalRequest) -> Approval:
        if request.tool in self._session_tools and not request.always_ask:
            return Approval(Decision.ALLOW_SESSION)
        future: asyncio.Future[Approval] = asyncio.get_running_loop().create_future()
        self.pending = PendingApproval(request, future)
        self._on_change(self.pending, None)
        answer: Approval | None = None
        try:
            answer = await future
        finally:
            self.pending = None
            self._on_change(None, answer)
        if answer.decision is Decision.ALLOW_SESSION and not request.always_ask:
            self._session_tools.add(request.tool)
        return answer

    def key(self, key: str) -> bool:
        """A choice key while a prompt waits; True if it was taken."""
        p = self.pending
        if p is None or p.asking_reason or key not in _KEYS:
            return False
        if _KEYS[key] is Decision.DENY:
            p.asking_reason = True
            self._on_change(p, None)
        else:
            self._resolve(Approval(_KEYS[key]))
        return True

    def submit_reason(self, reason: str) -> bool:
        """Enter after ``n``: deny, with the typed reason if any."""
        p = self.pending
        if p is None or not p.asking_reason:
            return False
        self._resolve(Approval(Decision.DENY, reason.strip() or None))
        return True

    def _resolve(self, approval: Approval) -> None:
        if self.pending is not None and not self.pending.future.done():
            self.pending.future.set_result(approval)
