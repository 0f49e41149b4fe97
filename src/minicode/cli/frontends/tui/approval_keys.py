"""The keys of a waiting approval question: choose, focus the answers, confirm, give a reason.

A mixin of ``Controller`` (``controller.py``); the question itself (choices, highlight, the
answer handed back to the agent) is ``approval.TuiApprover``, and the rule that an Enter too
soon after the question or an edit is not an answer is ``editor``'s gate. The state the
Controller shares with it is declared below.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable

from prompt_toolkit.application import Application
from prompt_toolkit.buffer import Buffer

from minicode.agent.approval import Approval, ApprovalRequest
from minicode.cli.frontends.tui.approval import MIN_REVIEW_SIZE, PendingApproval, TuiApprover
from minicode.cli.frontends.tui.editor import Editor
from minicode.cli.frontends.tui.view import Transcript

__all__ = ["ApprovalKeys"]


class ApprovalKeys:
    """What the keys do while a question waits (the Controller sets this state up)."""

    tui_approver: TuiApprover
    _asked_request: ApprovalRequest | None
    # the Controller's own
    editor: Editor
    transcript: Transcript
    _app: Application[int] | None
    _on_focus: Callable[[str], None]

    if TYPE_CHECKING:
        @property
        def pending(self) -> PendingApproval | None: ...

        @property
        def draft(self) -> Buffer: ...

        @property
        def reason(self) -> Buffer: ...

        def invalidate(self) -> None: ...

        def flash(self, text: str) -> None: ...

    def _approval_changed(self, pending: PendingApproval | None, answer: Approval | None) -> None:
        if pending is not None:
            if pending.request is not self._asked_request:
                self.editor.gate.asked()  # a new question: its grace starts now
            self.transcript.ask(pending.request, pending.asking_reason)
        else:
            request = self._asked_request
            if request is not None:
                self.transcript.answered(request.call_id, answer)
            self.reason.reset()
        self._asked_request = pending.request if pending is not None else None
        self._on_focus("reason" if pending is not None and pending.asking_reason else "draft")
        self.invalidate()

    def choosing(self) -> bool:
        """Whether the choice keys (arrows, Tab, Enter) go to the waiting question."""
        p = self.pending
        return p is not None and not p.asking_reason and self.editor.gate.owns_keys(not self.draft.text)

    def choose(self, step: int) -> None:
        """Move the highlighted choice (Up/Down) — only while the answers have the keys."""
        self.tui_approver.move(step)
        self.invalidate()

    def focus_choices(self) -> None:
        """Tab: the answers get the arrows and Enter (the draft keeps its text). It never
        moves the highlight, so "Tab, Enter" answers with what was highlighted."""
        gate = self.editor.gate
        if self.draft.text and not gate.focus:
            gate.focus = True
        else:
            self.flash("the answers have the keys: ↑↓ choose, Enter answers")
        self.invalidate()

    def confirm_choice(self) -> None:
        """Enter on the choices: answers — unless the question (or the last edit of the draft)
        is too recent for it to be a deliberate answer; then it says so."""
        if self.too_small_to_review():
            self.flash("the window is too small to review this call: enlarge it to answer")
            return
        why = self.editor.gate.too_soon()
        if why is not None:
            self.flash(f"Enter ignored: {why} — press Enter again to answer")
            return
        self.tui_approver.confirm()

    def too_small_to_review(self) -> bool:
        """Whether the terminal is below ``MIN_REVIEW_SIZE``: the question could not show the
        call it asks about, so it takes no answer (the panel says why)."""
        if self._app is None:
            return False
        size = self._app.output.get_size()
        return size.columns < MIN_REVIEW_SIZE[0] or size.rows < MIN_REVIEW_SIZE[1]

    def submit_reason(self) -> None:
        self.tui_approver.submit_reason(self.reason.text)

    def reason_back(self) -> None:
        self.reason.reset()
        self.tui_approver.back()
