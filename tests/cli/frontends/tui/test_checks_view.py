"""Acceptance checks in the full-screen transcript: one line per check, the feedback, the status."""

from __future__ import annotations

import asyncio

from minicode.agent.events import (
    CheckFinished,
    CheckResult,
    ChecksFeedback,
    CheckStarted,
    TaskStatus,
    TurnFinished,
)
from minicode.agent.stats import TaskStats
from minicode.cli.frontends.tui.items import Line, wrap_plain
from minicode.cli.frontends.tui.view import Transcript
from tests.cli.frontends.tui.fake_session import Step


def md(text: str, width: int) -> list[Line]:
    return wrap_plain(text, width)


def shown(t: Transcript) -> str:
    return "\n".join("".join(part for _, part in line) for line in t.visible(160, 0, 200))


def test_checks_show_their_verdicts_the_feedback_and_the_final_status() -> None:
    t = Transcript(md)
    t.apply(CheckStarted("pytest -q", 1, 1))
    assert t.checking == "pytest -q"
    failed = CheckResult("pytest -q", False, 1, 2.0, output_tail="E   assert 1 == 2\n1 failed")
    t.apply(CheckFinished(failed))
    assert t.checking is None
    t.apply(ChecksFeedback("[acceptance checks failed]\n...", 1, 2))
    t.apply(CheckStarted("pytest -q", 1, 1))
    t.apply(CheckFinished(CheckResult("pytest -q", True, 0, 1.5)))
    stats = TaskStats()
    stats.add_check_run(1, 1)
    t.apply(TurnFinished(TaskStatus.DONE, "ok", stats, checks=(CheckResult("pytest -q", True, 0, 1.5),)))
    text = shown(t)
    assert "✗ check failed: pytest -q (exit 1, 2.0s)" in text and "E   assert 1 == 2" in text
    assert "↻ checks failed: their output went back to the model (1 of 2)" in text
    assert "✓ check passed: pytest -q (exit 0, 1.5s)" in text
    assert "■ done (checks passed) · " in text and "checks 1/1 passed" in text


def test_an_interrupted_check_does_not_leave_the_status_checking() -> None:
    t = Transcript(md)
    t.apply(CheckStarted("sleep 30", 1, 1))
    t.apply(TurnFinished(TaskStatus.INTERRUPTED, "", TaskStats(), "interrupted"))
    assert t.checking is None
    assert "■ interrupted" in shown(t)
    assert "✗ check stopped: sleep 30 (interrupted)" in shown(t)  # which check the Esc stopped


async def test_the_status_bar_says_which_check_runs(harness) -> None:  # type: ignore[no-untyped-def]
    gate = asyncio.Event()
    harness.session.scripts.append([Step(event=CheckStarted("pytest -q --maxfail=1", 1, 1)), Step(gate=gate)])
    await harness.send("go")
    await harness.until(lambda: harness.controller.busy)
    await harness.until(lambda: harness.controller.state() == "checking pytest -q --maxfail=1")
    gate.set()


# --- /check through the real Application ------------------------------------------------

async def test_check_command_adds_lists_and_clears_for_the_following_tasks(harness) -> None:  # type: ignore[no-untyped-def]
    async def submit(line: str) -> None:
        await harness.send(line)

    await submit("/check")
    await harness.until(lambda: "no acceptance checks; /check CMD adds one" in harness.screen_text())
    await submit("/check pytest -q")
    await harness.until(lambda: harness.session.checks == ["pytest -q"])
    await submit("/check   pytest -q  ")
    await harness.until(lambda: "already a check: pytest -q" in harness.screen_text())
    await submit("/check ruff check .")
    await submit("/check")
    await harness.until(lambda: "  2. ruff check ." in harness.screen_text())
    assert "  1. pytest -q" in harness.screen_text()
    assert harness.session.turns == []  # commands, never tasks for the model
    await submit("/check --clear")
    await harness.until(lambda: harness.session.checks == [])
    assert "acceptance checks cleared" in harness.screen_text()


async def test_check_while_a_task_runs_applies_from_the_next_task(harness) -> None:  # type: ignore[no-untyped-def]
    from tests.cli.frontends.tui.fake_session import Step

    harness.session.scripts.append([Step(sleep=30)])
    await harness.send("work")
    await harness.until(lambda: harness.controller.busy)
    await harness.send("/check make test")
    await harness.until(lambda: harness.session.checks == ["make test"])
    assert "check added from the next task on: make test" in harness.screen_text()
    assert harness.controller.queue == []  # not queued behind the task
    harness.controller.interrupt()


def test_check_is_in_the_command_table_and_help() -> None:
    from minicode.cli.frontends.tui.commands import find, help_text

    command = find("/check")
    assert command is not None and command.while_busy and command.arguments
    assert "/check [CMD|--clear]" in help_text()


def test_hook_blocks_and_failures_are_lines_of_the_transcript() -> None:
    from minicode.agent.events import HookFeedback, HookReport

    t = Transcript(md)
    t.apply(HookReport("PreToolUse", "~/bin/check-call", True, "not on Fridays", "bash"))
    t.apply(HookReport("PostToolUse", "lint", False, "printed invalid JSON", "edit"))
    t.apply(HookReport("UserPromptSubmit", "scan", True, "a secret in the prompt"))
    t.apply(HookReport("Stop", "tests", True, "run the tests first"))
    t.apply(HookFeedback("[Stop hook]\n…", 1, 3))
    text = shown(t)
    assert "⊘ PreToolUse hook `~/bin/check-call` blocked bash: not on Fridays" in text
    assert "⊘ PostToolUse hook `lint` failed (ignored): printed invalid JSON" in text
    assert "⊘ UserPromptSubmit hook `scan` blocked the prompt: a secret in the prompt" in text
    assert "⊘ Stop hook `tests` did not let the task end: run the tests first" in text
    assert "↻ the model goes on (1 of 3)" in text
