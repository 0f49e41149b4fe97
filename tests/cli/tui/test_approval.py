"""The in-app approval prompt: y / a / n (+ reason), scrolling while it waits, Esc."""

from __future__ import annotations

import asyncio

import pytest

from minicode.agent.approval import ApprovalRequest, Decision
from minicode.cli.approval import TuiApprover
from tests.cli.tui.conftest import Harness
from tests.cli.tui.fake_session import approval_steps


async def _ask(harness: Harness) -> None:
    harness.session.scripts.append(approval_steps("bash", "/ws", "$ rm -rf build"))
    await harness.type("clean up\r")
    await harness.until(lambda: harness.controller.pending is not None)
    assert harness.controller.state() == "awaiting approval"
    shown = harness.screen_text()
    assert "? approve bash: /ws" in shown and "$ rm -rf build" in shown
    assert "[y] allow once" in shown and "[a] allow bash for this session" in shown


async def test_y_allows_once(harness: Harness) -> None:
    await _ask(harness)
    await harness.type("y")
    await harness.until(lambda: harness.controller.task is None)
    assert [a.decision for a in harness.session.approvals] == [Decision.ALLOW_ONCE]
    assert "→ allowed once" in harness.screen_text()
    assert harness.controller.draft.text == ""  # the key did not leak into the draft


async def test_a_allows_for_the_session_and_is_not_asked_again(harness: Harness) -> None:
    await _ask(harness)
    await harness.type("a")
    await harness.until(lambda: harness.controller.task is None)
    assert harness.session.approvals[0].decision is Decision.ALLOW_SESSION
    harness.session.scripts.append(approval_steps("bash", "/ws", "$ ls"))
    await harness.type("again\r")
    await harness.until(lambda: len(harness.session.approvals) == 2)
    assert harness.session.approvals[1].decision is Decision.ALLOW_SESSION


async def test_n_with_a_typed_reason_denies_with_that_reason(harness: Harness) -> None:
    await _ask(harness)
    await harness.type("n")
    assert harness.controller.pending is not None and harness.controller.pending.asking_reason
    await harness.type("use make clean\r")
    await harness.until(lambda: harness.controller.task is None)
    approval = harness.session.approvals[0]
    assert approval.decision is Decision.DENY and approval.reason == "use make clean"
    assert "→ denied: use make clean" in harness.screen_text()
    assert harness.controller.draft.text == ""


async def test_n_then_enter_denies_without_reason(harness: Harness) -> None:
    await _ask(harness)
    await harness.type("n")
    await harness.type("\r")
    await harness.until(lambda: harness.controller.task is None)
    assert harness.session.approvals[0].decision is Decision.DENY
    assert harness.session.approvals[0].reason is None


async def test_other_keys_do_not_answer_and_scrolling_works_while_waiting(harness: Harness) -> None:
    for i in range(200):
        harness.controller.transcript.note(f"filler {i}")
    await _ask(harness)
    await harness.type("x\x1b[5~")  # a stray key and PageUp
    assert harness.controller.pending is not None
    assert not harness.controller.scroll.follow
    await harness.type("y")
    await harness.until(lambda: harness.controller.task is None)
    assert harness.session.approvals[0].decision is Decision.ALLOW_ONCE


async def test_esc_while_waiting_withdraws_the_prompt_and_stops_the_task(harness: Harness) -> None:
    await _ask(harness)
    await harness.type("\x1b", 0.6)
    await harness.until(lambda: harness.controller.task is None)
    assert harness.session.approvals == [] and harness.session.interrupted == 1
    assert harness.controller.pending is None
    assert "no answer (task interrupted)" in harness.screen_text()


async def test_approver_ignores_keys_without_a_prompt() -> None:
    changes: list[object] = []
    approver = TuiApprover(lambda p, a: changes.append((p, a)))
    assert approver.key("y") is False
    assert approver.submit_reason("why") is False
    request = ApprovalRequest("c", "write", "a.txt", "3 bytes", {})
    waiting = asyncio.ensure_future(approver.approve(request))
    await asyncio.sleep(0)
    assert approver.key("q") is False
    assert approver.key("y") is True
    assert (await waiting).decision is Decision.ALLOW_ONCE
    assert approver.pending is None and len(changes) == 2


async def test_cancelled_approval_raises_cancelled_and_clears_the_prompt() -> None:
    approver = TuiApprover(lambda p, a: None)
    waiting = asyncio.ensure_future(approver.approve(ApprovalRequest("c", "bash", "/", "ls", {})))
    await asyncio.sleep(0)
    waiting.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiting
    assert approver.pending is None
