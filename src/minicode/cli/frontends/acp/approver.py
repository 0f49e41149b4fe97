"""Approvals asked in the editor: a call that needs one becomes ``session/request_permission``.

The options map onto minicode's decisions: allow once, allow for this session, always allow
in this project (the suggested rule is saved, as the full screen does) and reject. Permission
rules and ``--yes`` still decide first (the batch consults them before any approver); in the
"act" mode (``--yes``'s) nobody is asked but for a call only a person may approve. A client
that answers "cancelled", an error, or nothing (gone) means denied.
"""

from __future__ import annotations

import logging
from typing import Any, Callable, Protocol

from acp import tool_diff_content
from acp.schema import AllowedOutcome, PermissionOption, RequestPermissionResponse, ToolCallUpdate

from minicode.agent.approval import Approval, ApprovalRequest, AutoApprover, Decision
from minicode.cli.frontends.acp.sender import UpdateSender
from minicode.cli.frontends.acp.updates import CallView

__all__ = ["EditorApprover", "PermissionAsker", "options_for"]

log = logging.getLogger("minicode.acp")

_DECISIONS = {
    "allow_once": Decision.ALLOW_ONCE, "allow_session": Decision.ALLOW_SESSION,
    "allow_always": Decision.ALLOW_ALWAYS, "reject": Decision.DENY,
}  # fmt: skip


class PermissionAsker(Protocol):
    """The part of the SDK's ``AgentSideConnection`` that asks for a permission."""

    async def request_permission(self, session_id: str, tool_call: ToolCallUpdate,
                                 options: list[PermissionOption], **kwargs: Any) -> RequestPermissionResponse: ...


def options_for(request: ApprovalRequest) -> list[PermissionOption]:
    """The choices offered: "for the session" and "always" only where minicode offers them
    (never for a write to a rules file, which is asked every time)."""
    options = [PermissionOption(option_id="allow_once", name="Allow once", kind="allow_once")]
    if not request.always_ask:
        options.append(PermissionOption(option_id="allow_session", name=f"Allow {request.tool} for this session",
                                        kind="allow_always"))
        if request.suggested_rule is not None:
            options.append(PermissionOption(option_id="allow_always", kind="allow_always",
                                            name=f"Always allow {request.suggested_rule} in this project"))
    options.append(PermissionOption(option_id="reject", name="Reject", kind="reject_once"))
    return options


class EditorApprover:
    def __init__(self, conn: PermissionAsker, session_id: str, sender: UpdateSender,
                 view: Callable[[str], CallView | None], acting: Callable[[], bool]) -> None:
        self._conn = conn
        self._session_id = session_id
        self._sender = sender
        self._view = view
        self._acting = acting  # the session's mode is "act": approve as --yes does

    async def approve(self, request: ApprovalRequest) -> Approval:
        if self._acting() and request.person_only is None:
            return await AutoApprover().approve(request)
        await self._sender.flush()  # the call's own tool_call update goes first
        view = self._view(request.call_id)
        call = ToolCallUpdate(
            tool_call_id=request.call_id, status="pending",
            title=view.title if view is not None else request.tool,
            kind=view.kind if view is not None else None,
            locations=view.locations if view is not None else None,
            # the diff again: an editor may show it in the question (CodeCompanion's diff preview)
            content=[tool_diff_content(view.diff[0], view.diff[2], view.diff[1])] if view and view.diff else None,
            raw_input=dict(request.arguments),
        )  # fmt: skip
        try:
            answer = await self._conn.request_permission(self._session_id, call, options_for(request))
        except ConnectionError:
            return Approval(Decision.DENY, "the editor is gone", input_ended=True)
        except Exception as e:  # noqa: BLE001 - an error answer, or one that is not a permission response
            log.warning("the editor's permission answer failed (%s): the call is denied", e)
            return Approval(Decision.DENY, "the editor did not answer the permission request")
        outcome = answer.outcome
        if not isinstance(outcome, AllowedOutcome) or outcome.option_id not in _DECISIONS:
            return Approval(Decision.DENY, "the user cancelled" if not isinstance(outcome, AllowedOutcome) else None)
        decision = _DECISIONS[outcome.option_id]
        if decision is Decision.ALLOW_ALWAYS and request.suggested_rule is None:
            decision = Decision.ALLOW_ONCE  # not offered; a client answering it anyway gets the least
        if decision is Decision.ALLOW_SESSION and request.always_ask:
            decision = Decision.ALLOW_ONCE
        return Approval(decision)
