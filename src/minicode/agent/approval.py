"""The Approver protocol: how the loop asks a person before a side effect.

The loop never shows anything itself; each frontend implements ``Approver``.
"""

from __future__ import annotations

import enum
from typing import Any, Mapping, Protocol

from dataclasses import dataclass

__all__ = ["NO_TERMINAL", "Approval", "ApprovalRequest", "ApprovedBy", "Approver", "AutoApprover", "Decision", "HeadlessApprover"]


class Decision(enum.Enum):
    ALLOW_ONCE = "allow_once"
    ALLOW_SESSION = "allow_session"  # allow this tool for the rest of the session
    ALLOW_ALWAYS = "allow_always"  # allow, and save ``ApprovalRequest.suggested_rule`` for this project
    DENY = "deny"


class ApprovedBy(enum.Enum):
    """Who decided a side-effect call (reported in ``ApprovalResolved`` events)."""

    USER = "user"  # a person answered the question
    SESSION = "session"  # "allow this tool for the session" given earlier
    RULE = "rule"  # a permission rule matched (allow or deny), nobody was asked
    AUTO = "auto"  # --yes
    POLICY = "policy"  # nobody can be asked (no terminal, JSON mode): the frontend's standing answer


@dataclass(frozen=True, slots=True)
class ApprovalRequest:
    """One side-effect tool call awaiting a decision."""

    call_id: str
    tool: str
    target: str  # path or working directory
    detail: str  # argument/command summary
    arguments: Mapping[str, Any]
    body: str = ""  # multi-line preview (start of a written file, mini diff, long command)
    # The narrowest rule that would allow calls like this one in this project (e.g.
    # "bash(pytest *)"), offered as the ALLOW_ALWAYS choice; None: that choice is not offered.
    suggested_rule: str | None = None
    # A write to a file that holds permission rules: asked every time — an approver must not
    # answer it from an earlier "allow for the session" (and no rule is offered for it).
    always_ask: bool = False
    # Only a person may approve it, not --yes: why (a command not fully understood while deny
    # rules are in effect — it might be a denied one). None: --yes may approve it.
    person_only: str | None = None


@dataclass(frozen=True, slots=True)
class Approval:
    decision: Decision
    reason: str | None = None  # typed by the user with a denial, passed to the model
    # No answer can come any more (end of input): the loop denies the rest of the batch and
    # ends the task at once with TaskStatus.INPUT_ENDED (SPEC 9: EOF denies and ends).
    input_ended: bool = False
    by: ApprovedBy = ApprovedBy.USER

    @property
    def allowed(self) -> bool:
        return self.decision is not Decision.DENY


class Approver(Protocol):
    """Answers approval requests.

    Contract: ``approve`` may wait as long as a person needs (the task timeout still runs)
    and is cancellable. When no answer can come any more (pipe mode at end of input) it
    returns a denial with ``input_ended=True``: the loop then denies the remaining calls of
    the batch and ends the task (no more model requests); the frontend ends the session.
    """

    async def approve(self, request: ApprovalRequest) -> Approval: ...


class AutoApprover:
    """``--yes``: approves every side-effect call at once, without asking anyone — except
    one only a person may approve (``person_only``), which it denies saying why."""

    async def approve(self, request: ApprovalRequest) -> Approval:
        if request.person_only is not None:
            return Approval(Decision.DENY, request.person_only, by=ApprovedBy.POLICY)
        return Approval(Decision.ALLOW_ONCE, by=ApprovedBy.AUTO)


NO_TERMINAL = "no terminal to ask for approval"


class HeadlessApprover:
    """Nobody can be asked (pipe or one-shot without a terminal, JSON mode): every call that
    needs approval is denied at once (``ApprovedBy.POLICY``) with ``reason``; the batch adds
    which rule would have allowed it. The task goes on: the model is told and can adapt."""

    def __init__(self, reason: str = NO_TERMINAL) -> None:
        self.reason = reason

    async def approve(self, request: ApprovalRequest) -> Approval:
        return Approval(Decision.DENY, self.reason, by=ApprovedBy.POLICY)
