"""The acceptance gate through the real Session and loop, with a scripted model and real checks."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from minicode.agent.approval import AutoApprover
from minicode.agent.checks import FEEDBACK_HEADER, MAX_FEEDBACK_ROUNDS, feedback_text, run_check
from minicode.agent.events import CheckFinished, ChecksFeedback, CheckStarted, TaskStatus, TurnFinished
from minicode.config import TaskConfig
from minicode.exitcodes import EXIT_FAILURE
from dataclasses import replace
from minicode.tools.base import ToolContext
from tests.agent.conftest import SECRET, Events, make_config
from tests.agent.scripted import text, tools


def config_with(*checks: str, timeout: int = 120):
    return replace(make_config(), task=TaskConfig(checks=checks, check_timeout=timeout))


async def run(session, task="do it", **kw):
    events = Events()
    finished = await session.turn(task, approver=AutoApprover(), emit=events.append, **kw)
    return finished, events


async def test_no_checks_means_done_as_before(open_session, provider):
    provider.script(text("all done"))
    session = await open_session()
    finished, events = await run(session)
    assert finished.status is TaskStatus.DONE and finished.checks == ()
    assert finished.status_text == "done" and not events.of(CheckStarted)
    assert "checks" not in finished.stats.format()


async def test_passing_checks_end_the_task_done_checks_passed(open_session, provider, workspace):
    (workspace / "ok.txt").write_text("x")
    provider.script(text("finished"))
    session = await open_session(config=config_with("test -f ok.txt", "true"))
    finished, events = await run(session)
    assert finished.status is TaskStatus.DONE
    assert finished.status_text == "done (checks passed)"
    assert [c.command for c in finished.checks] == ["test -f ok.txt", "true"]
    assert all(c.passed and c.exit_code == 0 for c in finished.checks)
    assert [(e.index, e.total) for e in events.of(CheckStarted)] == [(1, 2), (2, 2)]
    assert finished.stats.format().endswith("checks 2/2 passed")
    assert len(provider.requests) == 1  # no feedback round


async def test_a_failure_goes_back_to_the_model_which_fixes_it(open_session, provider, workspace):
    provider.script(
        text("done, I think"),
        tools(("bash", {"command": "echo fixed > fix.txt"})),
        text("now really done"),
    )
    session = await open_session(config=config_with("cat fix.txt"))
    finished, events = await run(session)
    assert finished.status is TaskStatus.DONE and finished.final_text == "now really done"
    feedback = events.of(ChecksFeedback)
    assert len(feedback) == 1 and (feedback[0].round, feedback[0].max_rounds) == (1, MAX_FEEDBACK_ROUNDS)
    # the model was told the command and its output, as a user message after its answer
    second = provider.requests[1].messages
    assert second[-2].content == "done, I think" and second[-1].role == "user"
    told = second[-1].content or ""
    assert told.startswith(FEEDBACK_HEADER) and "$ cat fix.txt" in told
    assert "No such file or directory" in told and "[exit code 1]" in told
    assert finished.stats.format().endswith("checks 1/1 passed (2 runs)")
    # the conversation keeps what the model was told (the session file too)
    assert any(m.content == told for m in session.messages)


async def test_checks_still_failing_end_the_task_checks_failed(open_session, provider, workspace):
    provider.default = text("done")
    session = await open_session(config=config_with("false", "true"))
    finished, events = await run(session)
    assert finished.status is TaskStatus.CHECKS_FAILED
    assert finished.status.exit_code == EXIT_FAILURE
    assert finished.error is not None and finished.error.startswith("checks failed: false (exit 1")
    assert len(events.of(ChecksFeedback)) == MAX_FEEDBACK_ROUNDS
    assert len(provider.requests) == MAX_FEEDBACK_ROUNDS + 1
    assert [c.passed for c in finished.checks] == [False, True]
    assert finished.stats.format().endswith(f"checks 1/2 passed ({MAX_FEEDBACK_ROUNDS + 1} runs)")
    # the turn-end record says which checks ran and how
    record = json.loads(session._store.path.read_text().splitlines()[-1])
    assert record["type"] == "turn_end" and record["status"] == "checks failed"
    assert [(c["command"], c["passed"], c["exit_code"]) for c in record["checks"]] == [
        ("false", False, 1), ("true", True, 0)]


async def test_feedback_rounds_count_against_max_turns(open_session, provider):
    provider.default = text("done")
    provider.script(text("done"), text("done"))
    session = await open_session(config=config_with("false"))
    finished, _ = await run(session, max_turns=2)
    # two final answers (one feedback) used both turns; then the max-turns summary
    assert finished.status is TaskStatus.MAX_TURNS
    assert finished.checks and not finished.checks[0].passed


async def test_checks_need_no_approval_and_never_see_the_key(open_session, provider, workspace):
    approvals: list[object] = []

    class Refuse:
        async def approve(self, request):  # never asked: checks are the user's own commands
            approvals.append(request)
            raise AssertionError("a check asked for approval")

    provider.default = text("done")
    (workspace / "leak.cfg").write_text(f"key={SECRET}\n")
    session = await open_session(config=config_with("env; cat leak.cfg; false"))
    events = Events()
    finished = await session.turn("t", approver=Refuse(), emit=events.append)
    assert approvals == [] and finished.status is TaskStatus.CHECKS_FAILED
    told = [m.content or "" for m in session.messages if (m.content or "").startswith(FEEDBACK_HEADER)]
    assert told and all(SECRET not in t and "TEST_KEY" not in t for t in told)
    assert all(SECRET not in e.result.output_tail for e in events.of(CheckFinished))
    assert "[redacted]" in told[0]


async def test_a_check_command_holding_the_key_is_reported_redacted(open_session, provider):
    provider.default = text("done")
    session = await open_session(config=config_with(f"test {SECRET} = nothing"))
    finished, events = await run(session)
    assert finished.status is TaskStatus.CHECKS_FAILED
    told = "".join(m.content or "" for m in session.messages)
    record = session._store.path.read_text()
    assert SECRET not in told and SECRET not in record and SECRET not in (finished.error or "")
    assert all(SECRET not in e.result.command for e in events.of(CheckFinished))
    assert all(SECRET not in e.command for e in events.of(CheckStarted))


async def test_a_check_times_out_and_its_process_group_dies(open_session, provider, workspace):
    provider.default = text("done")
    marker, pids = workspace / "late.txt", workspace / "pids"
    command = f"(sleep 30; touch {marker}) & echo $$ $! > {pids}; sleep 30"
    session = await open_session(config=config_with(command, timeout=1))
    finished, _ = await run(session)
    assert finished.status is TaskStatus.CHECKS_FAILED
    assert finished.checks[0].timed_out and finished.checks[0].exit_code is None
    assert "timed out" in (finished.error or "")
    # the background child died with the group: nothing is left to touch the marker later
    assert all(not _running(int(pid)) for pid in pids.read_text().split())
    assert not marker.exists()


async def test_cancelling_during_a_check_interrupts_the_task(open_session, provider, workspace):
    provider.default = text("done")
    marker, pids = workspace / "late.txt", workspace / "pids"
    command = f"sleep 30 & echo $$ $! > {pids}; wait; touch {marker}"
    session = await open_session(config=config_with(command))
    events = Events()
    task = asyncio.ensure_future(session.turn("t", approver=AutoApprover(), emit=events.append))
    while not (events.of(CheckStarted) and pids.exists() and pids.read_text().strip()):
        await asyncio.sleep(0.01)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    # the check's whole process group is gone when the cancelled task returns, not 30 s later
    assert all(not _running(int(pid)) for pid in pids.read_text().split())
    assert not marker.exists()
    finished = events.of(TurnFinished)[-1]
    assert finished.status is TaskStatus.INTERRUPTED


def _running(pid: int) -> bool:
    """True while the process exists and is not a zombie waiting to be reaped."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return False
    return "\nState:\tZ" not in status


async def test_task_timeout_covers_the_checks(open_session, provider):
    provider.default = text("done")
    session = await open_session(config=config_with("sleep 30"))
    finished, _ = await run(session, timeout=1)
    assert finished.status is TaskStatus.TIMED_OUT


async def test_checks_changed_on_the_session_apply_to_the_next_task(open_session, provider):
    provider.default = text("done")
    session = await open_session()
    session.checks.append("true")
    finished, _ = await run(session)
    assert finished.status_text == "done (checks passed)"


async def test_run_check_when_bash_cannot_start(workspace: Path):
    ctx = ToolContext(workspace=workspace / "gone", env={"PATH": "/nonexistent"})
    ran = await run_check("true", 5, ctx)
    assert not ran.result.passed and ran.result.exit_code is None
    assert ran.result.describe().startswith("true (did not run")


async def test_feedback_caps_huge_output_and_names_passing_checks(workspace: Path):
    ctx = ToolContext(workspace=workspace, env={"PATH": "/usr/bin:/bin"})
    big = await run_check("head -c 300000 /dev/zero | tr '\\0' x; exit 3", 30, ctx)
    ok = await run_check("true", 5, ctx)
    message = feedback_text([big, ok], 1, 2)
    assert len(message.encode()) < 70 * 1024
    assert "Passed: true" in message and "[exit code 3]" in message
    assert "Feedback 1 of 2: 1 more after this." in message
    assert "a failure ends the task" in feedback_text([big], 2, 2)
