"""Per-task statistics: wall time, model calls, tool calls and token usage from responses.

Tokens are only ever summed from what the server reported, never estimated locally.
"""

from __future__ import annotations

from dataclasses import dataclass

from minicode.provider.types import Usage

__all__ = ["TaskStats"]


@dataclass(slots=True)
class TaskStats:
    """Mutable counters for one task; ``format()`` gives the line the frontends print.

    ``tool_calls`` counts the calls that executed (whatever their result, also one
    interrupted while running). Calls that never ran are not counted: invalid ones (unknown
    tool, bad arguments), ones refused before approval (e.g. an edit of an unread file),
    and ones denied or interrupted at their approval prompt.

    ``check_runs``: how many times the acceptance checks ran in this task (0: none configured
    or reached); ``checks_total``/``checks_passed``: of the last run, how many checks there
    were and how many passed.

    ``questions``: how many ``ask_user`` questions the model put (answered or not).
    """

    wall_seconds: float = 0.0
    model_calls: int = 0
    tool_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0
    calls_with_usage: int = 0
    check_runs: int = 0
    checks_total: int = 0
    checks_passed: int = 0
    subagents: int = 0
    """Sub-agents that ran in this task; their calls and tokens are in the counts above."""
    questions: int = 0

    def add_model_call(self, usage: Usage | None) -> None:
        """Count one model response (main, final summary or compaction) and its usage."""
        self.model_calls += 1
        if usage is None:
            return
        self.calls_with_usage += 1
        prompt = usage.prompt_tokens or 0
        completion = usage.completion_tokens or 0
        self.prompt_tokens += prompt
        self.completion_tokens += completion
        # A total of 0 beside non-zero parts means the server left it out.
        self.total_tokens += usage.total_tokens or (prompt + completion)

    @property
    def usage_available(self) -> bool:
        return self.calls_with_usage > 0

    @property
    def usage_partial(self) -> bool:
        return 0 < self.calls_with_usage < self.model_calls

    def format_tokens(self) -> str:
        if not self.usage_available:
            return "tokens: unavailable"
        partial = " (partial)" if self.usage_partial else ""
        return (
            f"tokens: {self.total_tokens:,} total ({self.prompt_tokens:,} in,"
            f" {self.completion_tokens:,} out){partial}"
        )

    def add_subagent(self, child: TaskStats) -> None:
        """Count a sub-agent's model calls, tool calls and tokens into this task's."""
        self.model_calls += child.model_calls
        self.tool_calls += child.tool_calls
        self.calls_with_usage += child.calls_with_usage
        self.prompt_tokens += child.prompt_tokens
        self.completion_tokens += child.completion_tokens
        self.total_tokens += child.total_tokens
        self.subagents += 1

    def add_check_run(self, total: int, passed: int) -> None:
        self.check_runs += 1
        self.checks_total = total
        self.checks_passed = passed

    def format_checks(self) -> str:
        """"checks 2/2 passed" (with "(3 runs)" when they ran again after fixes), or ""."""
        if not self.check_runs:
            return ""
        runs = f" ({self.check_runs} runs)" if self.check_runs > 1 else ""
        return f"checks {self.checks_passed}/{self.checks_total} passed{runs}"

    def format(self) -> str:
        checks = self.format_checks()
        agents = f" ({self.subagents} sub-agent{'' if self.subagents == 1 else 's'} included)" if self.subagents else ""
        return (
            f"{self.wall_seconds:.1f}s · {self.model_calls} model call"
            f"{'' if self.model_calls == 1 else 's'} · {self.tool_calls} tool call"
            f"{'' if self.tool_calls == 1 else 's'}{agents} · {self.format_tokens()}"
            + (f" · {checks}" if checks else "")
            + (f" · {self.questions} question{'' if self.questions == 1 else 's'}" if self.questions else "")
        )
