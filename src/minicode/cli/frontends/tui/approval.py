"""Approvers of the full-screen UI: the in-app question (a Future the agent awaits) and --yes
(``AutoApprover``, re-exported from ``agent.approval``).

The question owns a list of choices built from the request (``choices_for``): allow once,
allow the tool for the session, "always allow <rule> in this project" when the request
suggests a rule, and deny (then an optional reason). One choice is highlighted; the keys move
the highlight and Enter confirms it — never a letter, so no typed text answers anything.
``AnswerGate`` is the rule for when Enter may answer: only while the draft is empty (or the
user moved to the choices with Tab) and not within ``ANSWER_GRACE`` of the question appearing
or of the last draft edit, so an Enter that ends a sentence as the question pops up is not an
answer. Cancelling the waiting task (Esc, Ctrl+C) withdraws the question. Nothing here draws:
the controller shows ``pending`` and is told of changes via ``on_change``. No prompt_toolkit.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Callable

from minicode.agent.approval import Approval, ApprovalRequest, AutoApprover, Decision

__all__ = [
    "ANSWER_GRACE",
    "ANSWER_WORDS",
    "MIN_REVIEW_SIZE",
    "AnswerGate",
    "AutoApprover",
    "Choice",
    "PendingApproval",
    "TuiApprover",
    "choices_for",
]

ANSWER_GRACE = 0.6
"""Seconds Enter is ignored after the question appears and after the draft last changed."""
MIN_REVIEW_SIZE = (40, 12)
"""Columns and rows below which a call cannot be reviewed (the panel would hide the tool line
and its preview): the panel says so and takes no answer until the window grows."""
ANSWER_WORDS = frozenset({"y", "yes", "n", "no", "a", "always", "p", "ok", "allow", "deny", "1", "2", "3", "4"})
"""A draft that is only one of these, sent while a question waits, was meant as an answer:
it is neither an answer nor queued as a task (it stays in the draft, and the UI says how)."""


@dataclass(frozen=True, slots=True)
class Choice:
    decision: Decision
    label: str


def choices_for(request: ApprovalRequest) -> tuple[Choice, ...]:
    """The answers offered for ``request``, in order; the first is highlighted at first.
    "For this session" of bash says that it means every command, not this one; a request that
    must be asked every time (``always_ask``: a permission-rules file) does not offer it."""
    tool = request.tool
    session = "Allow every bash command for this session" if tool == "bash" else f"Allow every {tool} call for this session"
    out = [Choice(Decision.ALLOW_ONCE, "Allow once")]
    if not request.always_ask:  # a rules file is asked every time: "for the session" would not hold
        out.append(Choice(Decision.ALLOW_SESSION, session))
    if request.suggested_rule:
        out.append(Choice(Decision.ALLOW_ALWAYS, f"Always allow `{request.suggested_rule}` in this project"))
    out.append(Choice(Decision.DENY, "Deny (then say why, optional)"))
    return tuple(out)


_STANDING = (Decision.ALLOW_SESSION, Decision.ALLOW_ALWAYS)
"""Answers that allow more than this call."""


@dataclass(slots=True)
class PendingApproval:
    request: ApprovalRequest
    future: asyncio.Future[Approval]
    choices: tuple[Choice, ...]
    selected: int = 0
    asking_reason: bool = False
    """Deny was confirmed; the user may now type a reason (Enter sends, even empty)."""

    @property
    def choice(self) -> Choice:
        return self.choices[self.selected]


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
        self.pending = PendingApproval(request, future, choices_for(request))
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

    def forget_session_grants(self) -> None:
        """"Allow for this session" belongs to the session it was given in: /new and /resume
        start without it (the grants are not shown in the other session's transcript)."""
        self._session_tools.clear()

    def move(self, step: int) -> bool:
        """Move the highlight by ``step``; False without a question to move in. Moving past
        an end wraps only onto "Deny": Up from "Allow once" reaches Deny at once, but Down on
        Deny stays there — the number of answers varies (3 or 4), and "Down until the
        bottom, Enter" must deny, never wrap round to "Allow once"."""
        p = self.pending
        if p is None or p.asking_reason:
            return False
        target = (p.selected + step) % len(p.choices)
        wrapped = not 0 <= p.selected + step < len(p.choices)
        if not wrapped or p.choices[target].decision is Decision.DENY:
            p.selected = target
        self._on_change(p, None)
        return True

    def unhighlight(self) -> None:
        """The draft was used while the question waits (typed in, sent, cleared): a highlight
        on a standing grant ("for this session", "always") goes back to "Allow once". One left
        there before the person went back to writing must not be what a later Enter answers
        (T3); a highlight on "Allow once" or "Deny" stays."""
        p = self.pending
        if p is None or p.asking_reason or p.choice.decision not in _STANDING:
            return
        p.selected = next(i for i, c in enumerate(p.choices) if c.decision is Decision.ALLOW_ONCE)
        self._on_change(p, None)

    def confirm(self) -> bool:
        """Enter on the highlighted choice: deny asks for a reason first, the others answer."""
        p = self.pending
        if p is None or p.asking_reason:
            return False
        if p.choice.decision is Decision.DENY:
            p.asking_reason = True
            self._on_change(p, None)
        else:
            self._resolve(Approval(p.choice.decision))
        return True

    def back(self) -> bool:
        """From the reason back to the choices (the denial is not sent)."""
        p = self.pending
        if p is None or not p.asking_reason:
            return False
        p.asking_reason = False
        self._on_change(p, None)
        return True

    def submit_reason(self, reason: str) -> bool:
        """Enter on the reason: deny, with the typed reason if any."""
        p = self.pending
        if p is None or not p.asking_reason:
            return False
        self._resolve(Approval(Decision.DENY, reason.strip() or None))
        return True

    def _resolve(self, approval: Approval) -> None:
        if self.pending is not None and not self.pending.future.done():
            self.pending.future.set_result(approval)


class AnswerGate:
    """When Enter may answer the waiting question (see the module docstring).

    ``asked`` and ``edited`` are told when the question appears and when the draft changes;
    ``focus`` is set by Tab (choose while the draft keeps its text) and cleared by typing."""

    def __init__(self, clock: Callable[[], float], grace: float = ANSWER_GRACE) -> None:
        self._clock = clock
        self.grace = grace
        self._asked_at = float("-inf")
        self._edited_at = float("-inf")
        self.focus = False

    def asked(self) -> None:
        self._asked_at = self._clock()
        self.focus = False

    def edited(self) -> None:
        self._edited_at = self._clock()
        self.focus = False

    def owns_keys(self, draft_empty: bool) -> bool:
        """Whether the choice keys (arrows, Tab, Enter) go to the question, not the draft."""
        return draft_empty or self.focus

    def settled(self) -> bool:
        """Whether enough time passed since the question appeared and the draft last changed."""
        return self.too_soon() is None

    def too_soon(self) -> str | None:
        """Why Enter may not answer yet ("the question just appeared", "the draft just
        changed"), or None when it may."""
        now = self._clock()
        if now - self._asked_at < self.grace:
            return "the question just appeared"
        if now - self._edited_at < self.grace:
            return "the draft just changed"
        return None
