"""The acceptance gate: the user's checks run when the model says the task is done.

Owns running the check commands, the verdict, and the message that sends a failure back
to the model. A check runs exactly like a ``bash`` call (``tools.bash``: ``bash -c`` in the
workspace, its own process group killed on timeout or cancellation, head+tail output caps,
the child environment without the API key) but needs no approval: the checks are the
user's own commands (``--check``, ``[task].checks``, ``/check``). ``agent.loop`` asks the
``Gate`` at every final answer; the gate appends the feedback message itself, so the
conversation (and the session file) shows exactly what the model was told.
"""

from __future__ import annotations

import enum
import re
import time
from dataclasses import dataclass, replace
from typing import Sequence

from minicode.agent.deps import TurnDeps, TurnScope
from minicode.agent.events import CheckFinished, CheckResult, ChecksFeedback, CheckStarted, failure_excerpt
from minicode.errors import ToolError
from minicode.provider.types import Message
from minicode.redact import redact
from minicode.tools.base import ToolContext
from minicode.tools.bash import BashTool
from minicode.tools.scrub import scrub
from minicode.tools.truncate import TOOL_OUTPUT_MAX_BYTES, cap_output

__all__ = ["FEEDBACK_HEADER", "MAX_FEEDBACK_ROUNDS", "Gate", "Verdict", "feedback_text", "run_check"]

MAX_FEEDBACK_ROUNDS = 2
"""How many times failing checks go back to the model before the task ends "checks failed"."""
FEEDBACK_HEADER = "[acceptance checks failed]"
"""The first line of every feedback message: marks it as minicode's, not the user's typing."""
_MIN_OUTPUT_BYTES = 4 * 1024
_EXIT_LINE = re.compile(r"\n\[(?:exit code -?\d+|exit status unknown|killed by [^\]\n]+)\]\s*$")


class Verdict(enum.Enum):
    ACCEPTED = "accepted"  # no checks, or all passed: the task is done
    RETRY = "retry"  # failures were sent back to the model: the task goes on
    FAILED = "failed"  # still failing after MAX_FEEDBACK_ROUNDS: the task ends, exit 1


@dataclass(frozen=True, slots=True)
class _Ran:
    result: CheckResult
    output: str  # redacted, with bash's exit line; capped when it goes to the model


class Gate:
    """One task's gate over ``commands`` (each may run ``timeout`` seconds)."""

    def __init__(self, commands: Sequence[str], timeout: float) -> None:
        self.commands = tuple(commands)
        self.timeout = timeout
        self.rounds = 0

    async def judge(self, deps: TurnDeps, scope: TurnScope) -> Verdict:
        """Run every check; on failure send them back (appending the user message) or give up.

        The results are kept in ``scope.checks`` and counted in ``scope.stats``. Cancellation
        (Esc, timeout, SIGTERM) propagates after the running check's process group is killed.
        """
        if not self.commands:
            return Verdict.ACCEPTED
        ran = await self._run_all(deps.tool_ctx, scope)
        if all(r.result.passed for r in ran):
            return Verdict.ACCEPTED
        if self.rounds >= MAX_FEEDBACK_ROUNDS:
            return Verdict.FAILED
        self.rounds += 1
        text = feedback_text(ran, self.rounds, MAX_FEEDBACK_ROUNDS)
        await deps.history.append(Message.user(text))
        scope.emit(ChecksFeedback(text, self.rounds, MAX_FEEDBACK_ROUNDS))
        return Verdict.RETRY

    async def _run_all(self, ctx: ToolContext, scope: TurnScope) -> list[_Ran]:
        ran: list[_Ran] = []
        scope.checks = ()
        for index, command in enumerate(self.commands, start=1):
            scope.emit(CheckStarted(redact(command, ctx.secrets), index, len(self.commands)))
            done = await run_check(command, self.timeout, ctx)
            ran.append(done)
            scope.checks = (*scope.checks, done.result)
            scope.emit(CheckFinished(done.result))
        scope.stats.add_check_run(len(ran), sum(r.result.passed for r in ran))
        return ran


def failure_summary(results: Sequence[CheckResult]) -> str:
    """"checks failed: pytest -q (exit 1, 2.0s); ruff check . (timed out, 120.0s)"."""
    failed = [r.describe() for r in results if not r.passed]
    return "checks failed: " + "; ".join(failed)


async def run_check(command: str, timeout: float, ctx: ToolContext) -> _Ran:
    """One check, run like bash; never raises except on cancellation."""
    started = time.monotonic()
    quiet = replace(ctx, on_output=None)  # the frontends show checks as lines, not live output
    shown = redact(command, ctx.secrets)  # the command is reported, stored and sent to the model
    try:
        outcome = await BashTool().run({"command": command, "timeout": timeout}, quiet)
    except ToolError as e:  # bash itself could not start
        text = redact(scrub(str(e)), ctx.secrets)
        result = CheckResult(shown, False, None, time.monotonic() - started, output_tail=failure_excerpt(text, None))
        return _Ran(result, text)
    text = redact(scrub(outcome.text), ctx.secrets)
    timed_out = outcome.exit_code is None and outcome.summary == "timed out"
    passed = not outcome.is_error and outcome.exit_code == 0
    # bash's closing "[exit code 1]" line is left out: the result states the exit code itself
    tail = "" if passed else failure_excerpt(_EXIT_LINE.sub("", text), 0)
    result = CheckResult(shown, passed, outcome.exit_code, time.monotonic() - started, timed_out, tail)
    return _Ran(result, text)


def feedback_text(ran: Sequence[_Ran], round: int, max_rounds: int) -> str:
    """The user message that sends failing checks back to the model: each failing command
    with its output (capped so all of them fit one tool result's budget), the passing ones
    by name, and what is expected now."""
    failed = [r for r in ran if not r.result.passed]
    passed = [r.result.command for r in ran if r.result.passed]
    budget = max(_MIN_OUTPUT_BYTES, TOOL_OUTPUT_MAX_BYTES // max(1, len(failed)))
    parts = [
        FEEDBACK_HEADER,
        "You said the task is done, but the user's acceptance checks failed. They run "
        "automatically whenever you finish; you cannot change or skip them.",
    ]
    for r in failed:
        parts.append(f"$ {r.result.command}\n{cap_output(r.output, budget).rstrip()}")
    if passed:
        parts.append("Passed: " + ", ".join(passed))
    left = max_rounds - round
    parts.append(
        "Find and fix the cause (do not weaken the checks or the tests), verify your fix, then "
        f"give your final answer. Feedback {round} of {max_rounds}: "
        + ("after this, a failure ends the task." if left == 0 else f"{left} more after this.")
    )
    return "\n\n".join(parts)
