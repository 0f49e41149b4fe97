"""The in-app approver never answers a write to a permission-rules file from an earlier
"allow for the session": such a request (``always_ask``) is put to the person every time.
(Answers are given through the pending question's future, whatever keys the UI maps.)"""

from __future__ import annotations

import asyncio

from minicode.agent.approval import Approval, ApprovalRequest, Decision
from minicode.cli.frontends.tui.approval import TuiApprover


def _request(call_id: str, path: str, always_ask: bool = False) -> ApprovalRequest:
    return ApprovalRequest(call_id, "write", path, "1 line", {"path": path}, always_ask=always_ask)


async def _answer(approver: TuiApprover, decision: Decision) -> None:
    await asyncio.sleep(0)
    assert approver.pending is not None, "the question was not put"
    approver.pending.future.set_result(Approval(decision))


async def test_always_ask_is_asked_even_after_allow_for_the_session():
    approver = TuiApprover(lambda pending, answer: None)
    first = asyncio.ensure_future(approver.approve(_request("c1", "a.txt")))
    await _answer(approver, Decision.ALLOW_SESSION)
    assert (await first).decision is Decision.ALLOW_SESSION
    assert (await approver.approve(_request("c2", "b.txt"))).decision is Decision.ALLOW_SESSION  # not asked
    rules = asyncio.ensure_future(approver.approve(_request("c3", ".minicode/local/permissions.toml", True)))
    await _answer(approver, Decision.DENY)
    assert (await rules).decision is Decision.DENY


async def test_allow_for_the_session_on_a_rules_file_is_not_remembered():
    approver = TuiApprover(lambda pending, answer: None)
    first = asyncio.ensure_future(approver.approve(_request("c1", "config/config.toml", True)))
    await _answer(approver, Decision.ALLOW_SESSION)
    await first
    later = asyncio.ensure_future(approver.approve(_request("c2", "a.txt")))
    await asyncio.sleep(0)
    assert approver.pending is not None  # still asked: the answer covered that one call only
    later.cancel()


async def test_session_grants_are_forgotten_when_the_session_changes():
    approver = TuiApprover(lambda pending, answer: None)
    first = asyncio.ensure_future(approver.approve(_request("c1", "a.txt")))
    await _answer(approver, Decision.ALLOW_SESSION)
    await first
    approver.forget_session_grants()  # /new or /resume
    later = asyncio.ensure_future(approver.approve(_request("c2", "b.txt")))
    await asyncio.sleep(0)
    assert approver.pending is not None  # asked again in the other session
    later.cancel()
