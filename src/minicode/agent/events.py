"""Events the agent loop emits: a closed union that frontends render with ``match``.

Data flows one way: the loop yields these, a frontend shows them. The loop never touches a
terminal and a frontend never touches history. The events are frozen dataclasses.
"""

from __future__ import annotations

import enum

from minicode.agent.approval import ApprovedBy
from minicode.agent.stats import TaskStats
from minicode.exitcodes import EXIT_FAILURE, EXIT_INTERRUPTED, EXIT_OK
from dataclasses import dataclass
from minicode.provider.types import ToolCall, Usage
from minicode.tools.todo_list import TodoList

__all__ = [
    "AgentEvent",
    "ApprovalResolved",
    "AssistantDone",
    "CheckFinished",
    "CheckResult",
    "CheckStarted",
    "ChecksFeedback",
    "CompactionDone",
    "HookFeedback",
    "HookReport",
    "ModeChanged",
    "ModelCallStarted",
    "Notice",
    "QuestionResolved",
    "ReasoningChunk",
    "Retrying",
    "SubAgentEvent",
    "TaskStatus",
    "TextChunk",
    "TodoUpdated",
    "ToolFinished",
    "ToolOutput",
    "ToolStarted",
    "TurnFinished",
    "TurnStarted",
    "failure_excerpt",
    "output_tail",
]

TAIL_LINES = 6
TAIL_CHARS = 600


class TaskStatus(enum.Enum):
    DONE = "done"
    INTERRUPTED = "interrupted"
    TIMED_OUT = "timed out"
    MAX_TURNS = "max turns reached"
    INPUT_ENDED = "input ended while waiting for approval"
    CHECKS_FAILED = "checks failed"  # the acceptance checks still failed after the model's last fix
    ERROR = "error"

    @property
    def exit_code(self) -> int:
        return {TaskStatus.DONE: EXIT_OK, TaskStatus.INTERRUPTED: EXIT_INTERRUPTED}.get(self, EXIT_FAILURE)


@dataclass(frozen=True, slots=True)
class TurnStarted:
    user_text: str


@dataclass(frozen=True, slots=True)
class ModelCallStarted:
    """A main model request is about to be sent (``final_summary`` for the max-turns one)."""

    number: int
    final_summary: bool = False


@dataclass(frozen=True, slots=True)
class TextChunk:
    """A piece of the answer as it streams."""

    text: str


@dataclass(frozen=True, slots=True)
class ReasoningChunk:
    text: str


@dataclass(frozen=True, slots=True)
class AssistantDone:
    """One model response is complete (it may be followed by tool calls)."""

    text: str
    reasoning: str
    tool_call_count: int
    usage: Usage | None = None  # as the server reported it for this response (None: it did not)
    tool_calls: tuple[ToolCall, ...] = ()  # the calls the batch will run, in order (raw arguments)
    finish_reason: str | None = None


@dataclass(frozen=True, slots=True)
class ToolStarted:
    """A tool call begins. ``target`` names the workspace path where the tool's own preview
    said "." (bash's working directory); ``body`` is the multi-line preview, or "";
    ``from_text`` the call was recovered from the answer's text (frontends say so)."""

    call_id: str
    name: str
    target: str
    detail: str
    body: str = ""
    from_text: bool = False  # the model wrote the call as text; minicode recovered it (agent.text_calls)


@dataclass(frozen=True, slots=True)
class ToolOutput:
    """New output of a running tool (bash) since the previous ToolOutput of that call, for a
    live view; the result still comes whole in ToolFinished. Throttled by the producer and
    already redacted; frontends append it (keeping a tail) or ignore it."""

    call_id: str
    text: str


@dataclass(frozen=True, slots=True)
class ToolFinished:
    call_id: str
    name: str
    is_error: bool
    summary: str
    exit_code: int | None
    duration_seconds: float
    denied: bool = False
    # For failures (error results, bash with a non-zero exit): why it failed, ≤ 6 lines and
    # ≤ 600 chars — a command's output tail, or the head of a tool's error (failure_excerpt).
    output_tail: str = ""
    interrupted: bool = False  # the task stopped (Esc, timeout, signal) while this call ran
    # The tool result exactly as the history (and so the model) got it: the output, the
    # error, the denial, or for a call stopped while it ran how long it ran and its output.
    result_text: str = ""


@dataclass(frozen=True, slots=True)
class ApprovalResolved:
    """A side-effect call was allowed or denied, and by whom (a person, an earlier "for the
    session", a permission rule, --yes, or the frontend's policy when nobody can be asked).
    Emitted after the call's ``ToolStarted`` and before it runs."""

    call_id: str
    tool: str
    allowed: bool
    by: ApprovedBy
    rule: str | None = None  # the rule that decided (by RULE), or the rule saved (ALLOW_ALWAYS)
    reason: str | None = None  # the denial's reason, as the model is told


@dataclass(frozen=True, slots=True)
class QuestionResolved:
    """The model asked the user (``ask_user``) and the question is over: ``how`` is
    ``agent.asking.AnswerKind``'s value (answered, chose, declined, unavailable) and ``answer``
    the text typed or the option chosen ("" otherwise). Emitted between the call's
    ``ToolStarted`` and ``ToolFinished``; the frontend that asked has shown the question already."""

    call_id: str
    question: str
    options: tuple[str, ...]
    how: str
    answer: str = ""


@dataclass(frozen=True, slots=True)
class Retrying:
    """A model request failed with a retryable error and is sent again after ``wait_seconds``.
    ``attempt`` is the attempt about to be made (2 = the first retry) of ``max_attempts``."""

    attempt: int
    max_attempts: int
    wait_seconds: float
    reason: str  # e.g. "HTTP 429 rate limited"

    def describe(self, remaining: float | None = None) -> str:
        """"retrying in 2 s (attempt 2 of 4): HTTP 429 rate limited"; ``remaining`` (a live
        countdown) replaces ``wait_seconds``, and at 0 it says "retrying now"."""
        wait = self.wait_seconds if remaining is None else max(0.0, remaining)
        when = f"in {_seconds(wait)} s" if wait >= 0.05 else "now"
        return f"retrying {when} (attempt {self.attempt} of {self.max_attempts}): {self.reason}"


def _seconds(value: float) -> str:
    """2.0 → "2", 1.25 → "1.2", 12.7 → "13": whole seconds once they are many."""
    return f"{value:.0f}" if value >= 10 else f"{value:.1f}".removesuffix(".0")


@dataclass(frozen=True, slots=True)
class CheckResult:
    """How one acceptance check ended (``agent.checks``); kept in ``TurnFinished`` and the
    session's turn-end record. ``output_tail`` is why it failed (≤ 6 lines), "" when it passed."""

    command: str
    passed: bool
    exit_code: int | None  # None: timed out, or could not start
    duration_seconds: float
    timed_out: bool = False
    output_tail: str = ""

    def describe(self) -> str:
        """"pytest -q (exit 1, 2.3s)"."""
        how = "timed out" if self.timed_out else "did not run" if self.exit_code is None else f"exit {self.exit_code}"
        return f"{self.command} ({how}, {self.duration_seconds:.1f}s)"


@dataclass(frozen=True, slots=True)
class CheckStarted:
    """An acceptance check begins (the model said it is done). ``index`` counts from 1."""

    command: str
    index: int
    total: int


@dataclass(frozen=True, slots=True)
class CheckFinished:
    result: CheckResult


@dataclass(frozen=True, slots=True)
class ChecksFeedback:
    """Checks failed and ``text`` goes back to the model as a user message (``round`` of
    ``max_rounds``): the task goes on."""

    text: str
    round: int
    max_rounds: int


@dataclass(frozen=True, slots=True)
class CompactionDone:
    tokens_before: int
    tokens_after: int
    messages_summarised: int
    manual: bool = False


@dataclass(frozen=True, slots=True)
class TodoUpdated:
    """The task list changed (a ``todo`` call, an accepted or rejected plan): the whole list
    now, and the one before it (so a frontend can show only what changed)."""

    todo: TodoList
    before: TodoList = TodoList()


@dataclass(frozen=True, slots=True)
class ModeChanged:
    """The session's mode changed: ``plan`` (read-only tools, the model proposes a task list)
    or ``act`` (every tool, under the approvals). ``why``: entered, accepted, rejected."""

    mode: str
    why: str


@dataclass(frozen=True, slots=True)
class Notice:
    """Something the user should see that is neither answer nor error (warnings, retries)."""

    text: str


@dataclass(frozen=True, slots=True)
class HookReport:
    """A hook (docs/hooks.md) blocked something or failed; a hook that had nothing to say is not
    reported. ``hook`` is its command as shown (first line, secrets redacted)."""

    event: str
    """PreToolUse, PostToolUse, UserPromptSubmit or Stop."""
    hook: str
    blocked: bool
    """True: it blocked (``text`` is its reason); False: it failed (``text`` says how) and was ignored."""
    text: str
    tool: str = ""
    """The tool of a PreToolUse/PostToolUse hook."""

    def describe(self) -> str:
        """One line for the frontends: "PreToolUse hook `check-call` blocked bash: not on Fridays"."""
        what = f"blocked {self.tool or 'it'}" if self.blocked else "failed (ignored)"
        if self.blocked and self.event == "UserPromptSubmit":
            what = "blocked the prompt"
        elif self.blocked and self.event == "Stop":
            what = "did not let the task end"
        elif self.blocked and self.event == "PostToolUse":
            what = f"objected to the {self.tool} result"
        return f"{self.event} hook `{self.hook}` {what}: {self.text}"


@dataclass(frozen=True, slots=True)
class HookFeedback:
    """A Stop hook did not let the task end: ``text`` goes to the model as a user message (the
    ``round``-th of at most ``max_rounds``) and the task goes on. Its ``HookReport`` came first."""

    text: str
    round: int
    max_rounds: int


@dataclass(frozen=True, slots=True)
class TurnFinished:
    """Always the last event of a turn, on every path."""

    status: TaskStatus
    final_text: str
    stats: TaskStats
    error: str | None = None
    checks: tuple[CheckResult, ...] = ()
    """The last run of the acceptance checks in this task (empty: none configured, or none ran)."""

    @property
    def status_text(self) -> str:
        """The status as the frontends say it: "done (checks passed)" when checks accepted it."""
        if self.status is TaskStatus.DONE and self.checks:
            return "done (checks passed)"
        return self.status.value


@dataclass(frozen=True, slots=True)
class SubAgentEvent:
    """An event of a sub-agent's own loop (``agent.subagent``), from its ``TurnStarted`` (the
    sub-task) to its ``TurnFinished``, under the ``agent`` call ``call_id`` of this task;
    ``agent_id`` names the sub-agent (``agent-1``, ``agent-2`` … per task). Streamed text and
    reasoning are not passed on: the sub-agent's report is the call's result."""

    call_id: str
    agent_id: str
    event: AgentEvent


AgentEvent = (
    TurnStarted
    | ModelCallStarted
    | TextChunk
    | ReasoningChunk
    | AssistantDone
    | ToolStarted
    | ToolOutput
    | ToolFinished
    | ApprovalResolved
    | QuestionResolved
    | Retrying
    | CheckStarted
    | CheckFinished
    | ChecksFeedback
    | CompactionDone
    | TodoUpdated
    | ModeChanged
    | Notice
    | SubAgentEvent
    | HookReport
    | HookFeedback
    | TurnFinished
)


def output_tail(text: str, max_lines: int = TAIL_LINES, max_chars: int = TAIL_CHARS) -> str:
    """``ToolFinished.output_tail``: the last ``max_lines`` lines of a failed result's text
    (trailing blank lines dropped), at most ``max_chars`` characters (cut at the front, "…")."""
    tail = "\n".join(text.rstrip().splitlines()[-max_lines:])
    return tail if len(tail) <= max_chars else "…" + tail[-(max_chars - 1):]


def failure_excerpt(text: str, exit_code: int | None) -> str:
    """``ToolFinished.output_tail`` for a failed result: a command's output tail (its error
    is printed last), but the head of a tool's own error message (it says why first)."""
    if exit_code is not None:
        return output_tail(text)
    head = "\n".join(text.strip().splitlines()[:TAIL_LINES])
    return head if len(head) <= TAIL_CHARS else head[: TAIL_CHARS - 1] + "…"
