"""The in-app approval prompt: y / a / n (+ reason), scrolling while it waits, Esc."""

from __future__ import annotations

import asyncio

import pytest

from minicode.agent.approval import ApprovalRequest, Decision
from minicode.cli.tui.approval import TuiApprover
from minicode.cli.tui.controller import ANSWER_GUARD
from tests.cli.tui.conftest import Harness
from tests.cli.tui.fake_session import approval_steps


async def _ask(harness: Harness, settle: float = ANSWER_GUARD + 0.1) -> None:
    harness.session.scripts.append(approval_steps("bash", "/ws", "$ rm -rf build"))
    await harness.type("clean up\r")
    await harness.until(lambda: harness.controller.pending is not None)
    assert harness.controller.state() == "awaiting approval"
    shown = harness.screen_text()
    assert "? bash /ws $ rm -rf build  — waiting for approval" in shown
    assert "running" not in shown
    assert "[y] allow once" in shown and "[a] allow bash for this session" in shown
    await asyncio.sleep(settle)  # a person reads the prompt before answering


async def test_y_allows_once(harness: Harness) -> None:
    await _ask(harness)
    await harness.type("y")
    await harness.until(lambda: harness.controller.task is None)
    assert [a.decision for a in harness.session.approvals] == [Decision.ALLOW_ONCE]
    shown = harness.screen_text()
    # one tool line: the answer and the result on it, nothing repeated below
    assert "✓ bash /ws $ rm -rf build  — allowed once · 0.1s · ok" in shown
    assert shown.count("rm -rf build") == 1 and "[y] allow once" not in shown
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
    shown = harness.screen_text()
    assert "✗ bash /ws $ rm -rf build  — denied: use make clean" in shown
    assert "denied by the user" not in shown and "denied: denied" not in shown
    assert harness.controller.draft.text == ""


async def test_n_then_enter_denies_without_reason(harness: Harness) -> None:
    await _ask(harness)
    await harness.type("n")
    await harness.type("\r")
    await harness.until(lambda: harness.controller.task is None)
    assert harness.session.approvals[0].decision is Decision.DENY
    assert harness.session.approvals[0].reason is None
    assert "  — denied\n" in harness.screen_text() + "\n"


async def test_other_keys_do_not_answer_and_scrolling_works_while_waiting(harness: Harness) -> None:
    for i in range(200):
        harness.controller.transcript.note(f"filler {i}")
    await _ask(harness)
    await harness.type("x\x1b[5~", ANSWER_GUARD + 0.1)  # a stray key and PageUp
    assert harness.controller.pending is not None
    assert not harness.controller.scroll.follow
    await harness.type("y")  # the draft holds "x": y is text, not an answer
    assert harness.controller.pending is not None and harness.controller.draft.text == "xy"
    await harness.type("\x7f\x7f", ANSWER_GUARD + 0.1)
    await harness.type("y")
    await harness.until(lambda: harness.controller.task is None)
    assert harness.session.approvals[0].decision is Decision.ALLOW_ONCE


async def test_esc_while_waiting_withdraws_the_prompt_and_stops_the_task(harness: Harness) -> None:
    await _ask(harness)
    await harness.type("\x1b", 0.6)
    await harness.until(lambda: harness.controller.task is None)
    assert harness.session.approvals == [] and harness.session.interrupted == 1
    assert harness.controller.pending is None
    shown = harness.screen_text()
    assert "✗ bash /ws $ rm -rf build  — interrupted" in shown and "waiting for approval" not in shown


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


async def test_text_typed_ahead_never_answers_an_approval(harness: Harness) -> None:
    await _ask(harness)
    await harness.type("can you also fix the tests\r")  # "a" and "n" inside the words
    assert harness.controller.pending is not None and harness.session.approvals == []
    # the message was queued; keys right after it are still typing, not answers
    await harness.type("yan", ANSWER_GUARD + 0.1)
    assert harness.controller.pending is not None and harness.session.approvals == []
    assert harness.controller.draft.text == "yan"


async def test_a_word_typed_as_the_prompt_appears_is_text(harness: Harness) -> None:
    await _ask(harness, settle=0.0)
    await harness.type("apple", ANSWER_GUARD + 0.1)  # within the guard of the prompt appearing
    assert harness.controller.pending is not None and harness.session.approvals == []
    assert harness.controller.draft.text == "apple"


async def test_approval_shows_the_preview_body_capped_with_a_coloured_diff(harness: Harness) -> None:
    body = "-old line\n+new line\n" + "\n".join(f" ctx {i}" for i in range(30))
    harness.session.scripts.append(approval_steps("edit", "src/a.py", "1 replacement", body))
    await harness.type("edit it\r")
    await harness.until(lambda: harness.controller.pending is not None)
    lines = harness.controller.transcript.visible(100, 0, 1000)
    styled = {text.strip(): style for line in lines for style, text in line}
    assert styled["-old line"] == "class:diff.del" and styled["+new line"] == "class:diff.add"
    shown = harness.screen_text()
    assert " ctx 9" in shown and " ctx 10" not in shown and "… 20 more lines" in shown
