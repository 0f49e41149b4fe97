"""The JSON event stream of ``--output json|stream-json`` (docs/events.md, docs/events.schema.json).

Owns the mapping of agent events to versioned JSON objects: the envelope (``v``, ``type``,
``session``, a monotonic ``seq``), one payload per event kind, which tool calls are still
open, and which ``result`` ends the run. Pure: values in, dicts out — no I/O, no clock, no
asyncio; ``cli.frontends.json.run`` writes what this returns and ``cli.frontends.json.deltas`` coalesces the deltas.

Compatibility rule: within ``v`` 1 fields are only ever added; renaming, removing or
changing the meaning or type of anything bumps ``SCHEMA_VERSION``.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from typing import Any, Literal, Sequence, assert_never

from minicode.agent.approval import ApprovalRequest
from minicode.agent.batch import CANCELLED_RESULT
from minicode.agent.events import (
    AgentEvent,
    ApprovalResolved,
    AssistantDone,
    CheckFinished,
    CheckResult,
    CheckStarted,
    ChecksFeedback,
    CompactionDone,
    ModeChanged,
    ModelCallStarted,
    HookFeedback,
    HookReport,
    Notice,
    QuestionResolved,
    ReasoningChunk,
    Retrying,
    SubAgentEvent,
    TaskStatus,
    TextChunk,
    TodoUpdated,
    ToolFinished,
    ToolOutput,
    ToolStarted,
    TurnFinished,
    TurnStarted,
)
from minicode.agent.stats import TaskStats
from minicode.exitcodes import EXIT_INTERRUPTED, EXIT_OK
from minicode.provider.types import ToolCall, Usage
from minicode.tools.scrub import scrub

__all__ = ["SCHEMA_VERSION", "DeltaKind", "EventMapper", "Payload", "SessionInfo", "encode_line", "status_name"]

SCHEMA_VERSION = 1
Payload = dict[str, Any]
DeltaKind = Literal["text", "reasoning", "tool_output"]

_STATUS = {
    TaskStatus.DONE: "done",
    TaskStatus.INTERRUPTED: "interrupted",
    TaskStatus.TIMED_OUT: "timed_out",
    TaskStatus.MAX_TURNS: "max_turns",
    TaskStatus.INPUT_ENDED: "input_ended",
    TaskStatus.CHECKS_FAILED: "checks_failed",
    TaskStatus.ERROR: "error",
}


def status_name(status: TaskStatus) -> str:
    """A task status as the stream names it: an identifier, never a sentence."""
    return _STATUS[status]


@dataclass(frozen=True, slots=True)
class SessionInfo:
    """What the ``session`` event says about the run that starts."""

    id: str
    workspace: str
    model: str
    tools: tuple[str, ...]
    resumed: bool
    messages: int  # in the history when it opened (0 for a new session)
    output: str  # "json" or "stream-json"
    approvals: str  # "auto" (--yes) or "deny" (nobody can be asked: denied unless a rule allows)
    version: str
    context_window: int
    context_source: str  # "config", "llama.cpp /props" …, "default (unknown)"


@dataclass
class EventMapper:
    """Turns events into payloads, in order. One per run; ``stream`` for ``stream-json``.

    In stream-json the ``assistant`` event leaves out ``text``/``reasoning`` when they equal
    the ``delta`` events of that kind since the previous ``assistant`` event (they always
    do with a well-behaved server): the answer is not sent twice more than it must be.
    """

    stream: bool
    session: str | None = None
    exit_code: int = EXIT_OK
    """The exit code minicode ends with if the run ends now (the last failing task's)."""
    _seq: int = 0
    _task: int = 0
    _open_calls: dict[str, str] = field(default_factory=dict)  # tool_call sent, no tool_result yet
    _streamed: dict[str, list[str]] = field(default_factory=lambda: {"text": [], "reasoning": []})
    _last_result_code: int | None = None  # the exit_code of the last payload, if it was a result
    _failure: str | None = None  # why ``exit_code`` is not 0: the last failed task or command

    def _wrap(self, kind: str, body: Payload) -> Payload:
        self._seq += 1
        self._last_result_code = body["exit_code"] if kind == "result" else None
        return {"v": SCHEMA_VERSION, "type": kind, "session": self.session, "seq": self._seq, **body}

    # --- outside the agent loop ---------------------------------------------------------

    def opened(self, info: SessionInfo) -> Payload:
        self.session = info.id
        return self._wrap(
            "session",
            {
                "id": info.id, "workspace": info.workspace, "model": info.model, "tools": list(info.tools),
                "resumed": info.resumed, "messages": info.messages, "output": info.output,
                "approvals": info.approvals, "minicode": info.version,
                "context_window": {"tokens": info.context_window, "source": info.context_source},
            },
        )  # fmt: skip

    def notice(self, text: str) -> Payload:
        return self._wrap("notice", {"text": text})

    def command(self, line: str, code: int, said: Sequence[str], error: str | None) -> Payload:
        """A pipe-mode command line ran: what it said, and whether it failed (then the run's
        exit code is 1 from here on, like after a failed task)."""
        if code != EXIT_OK:
            self.exit_code = code
            self._failure = f"{line}: {error}"
        body = {"command": line.split(maxsplit=1)[0], "line": line, "status": "done" if code == EXIT_OK else "failed",
                "text": "\n".join(said), "error": error, "exit_code": self.exit_code}  # fmt: skip
        return self._wrap("command", body)

    def asked(self, request: ApprovalRequest) -> Payload:
        """The frontend's approver is consulted (no rule or session allowance decided)."""
        body: Payload = {"phase": "asked", "id": request.call_id, "tool": request.tool,
                         "target": request.target, "detail": request.detail}
        if request.suggested_rule:
            body["suggested_rule"] = request.suggested_rule
        return self._wrap("approval", body)

    def delta(self, kind: DeltaKind, text: str, call_id: str | None = None) -> Payload:
        if kind == "tool_output":
            return self._wrap("delta", {"kind": kind, "id": call_id, "text": text})
        self._streamed[kind].append(text)
        return self._wrap("delta", {"kind": kind, "text": text})

    def closing(self, code: int, error: str | None) -> Payload | None:
        """The run's own ``result``, unless the last payload already was a result that ends
        with ``code`` (the usual case): nothing ran, an interrupt between tasks, a failure
        outside any task, a start-up error."""
        if self._last_result_code == code:
            return None
        if error is None and code == self.exit_code != EXIT_OK:
            error = self._failure  # the run ends with an earlier failure's code: say which
        if error is None and code == EXIT_INTERRUPTED:
            error = "interrupted"  # stopped before its first task began: the reason, like entry's line
        self.exit_code = code
        status = "done" if code == EXIT_OK else "interrupted" if code == EXIT_INTERRUPTED else "error"
        return self._result(None, status, "", error, TaskStats(), ())

    # --- the agent loop's events --------------------------------------------------------

    def event(self, event: AgentEvent) -> list[Payload]:
        """The payloads for one event (often none: progress that only the stderr lines show)."""
        match event:
            case TurnStarted(user_text=text):
                self._task += 1
                self._reset_streamed()
                return [self._wrap("user", {"task": self._task, "source": "task", "text": text})]
            case AssistantDone():
                return [self._assistant(event), *(self._tool_call(c) for c in event.tool_calls)]
            case ToolFinished():
                return [self._tool_result(event)]
            case ApprovalResolved():
                return [self._approval(event)]
            case QuestionResolved(call_id=cid, question=question, options=options, how=how, answer=answer):
                asked: Payload = {"id": cid, "question": question, "options": list(options), "status": how,
                                  "answer": answer}
                return [self._wrap("question", asked)]
            case Retrying(attempt=attempt, max_attempts=most, wait_seconds=wait, reason=reason):
                body = {"attempt": attempt, "max_attempts": most, "wait_seconds": _seconds(wait), "reason": reason}
                return [self._wrap("retry", body)]
            case CompactionDone(tokens_before=before, tokens_after=after, messages_summarised=n, manual=manual):
                body = {"tokens_before": before, "tokens_after": after, "messages_summarised": n, "manual": manual}
                return [self._wrap("compaction", body)]
            case Notice(text=text):
                return [self.notice(text)]
            case TodoUpdated(todo=todo):
                return [self._wrap("todo", {"items": todo.to_json(), "summary": todo.summary})]
            case ModeChanged(mode=mode, why=why):
                return [self._wrap("mode", {"mode": mode, "why": why})]
            case HookFeedback(text=text, round=round_, max_rounds=rounds):
                self._reset_streamed()
                body = {"task": self._task, "source": "hook", "text": text, "round": round_, "max_rounds": rounds}
                return [self._wrap("user", body)]
            case HookReport(event=hook_event, hook=hook, blocked=blocked, text=text, tool=tool):
                body = {"event": hook_event, "hook": hook, "outcome": "blocked" if blocked else "failed", "text": text}
                return [self._wrap("hook", body | ({"tool": tool} if tool else {}))]
            case CheckStarted(command=command, index=index, total=total):
                return [self._wrap("check", {"phase": "started", "command": command, "index": index, "total": total})]
            case CheckFinished(result=result):
                return [self._wrap("check", {"phase": "finished", **_check(result)})]
            case ChecksFeedback(text=text, round=round_, max_rounds=rounds):
                self._reset_streamed()
                body = {"task": self._task, "source": "checks", "text": text, "round": round_, "max_rounds": rounds}
                return [self._wrap("user", body)]
            case TurnFinished():
                return [*self._close_open_calls(), self._turn_result(event)]
            case SubAgentEvent():
                return self._subagent(event)
            case ModelCallStarted() | ToolStarted() | TextChunk() | ReasoningChunk() | ToolOutput():
                return []  # deltas come through ``delta``; the rest is stderr progress
            case _:
                assert_never(event)

    def _reset_streamed(self) -> None:
        for pieces in self._streamed.values():
            pieces.clear()

    def _assistant(self, event: AssistantDone) -> Payload:
        body: Payload = {}
        for name, value in (("text", event.text), ("reasoning", event.reasoning)):
            if self.stream:
                if value != "".join(self._streamed[name]):
                    body[name] = value
            elif value or name == "text":
                body[name] = value  # reasoning only when the response had some
        self._reset_streamed()
        body |= {"tool_calls": event.tool_call_count, "finish_reason": event.finish_reason,
                 "usage": _usage(event.usage)}
        return self._wrap("assistant", body)

    def _tool_call(self, call: ToolCall) -> Payload:
        self._open_calls[call.id] = call.name
        return self._wrap("tool_call", _tool_call_body(call))

    def _tool_result(self, event: ToolFinished) -> Payload:
        self._open_calls.pop(event.call_id, None)
        return self._wrap("tool_result", _tool_result_body(event))

    def _subagent(self, event: SubAgentEvent) -> list[Payload]:
        """A sub-agent's events (``agent.subagent``): its start and end as ``subagent`` events,
        its answers, calls, results and notices as the usual ones, each with the ``agent``
        call it runs under (``parent_call_id``) and its ``agent_id``. Its calls are not this
        task's open calls: its own loop answers every one of them."""
        ids = {"parent_call_id": event.call_id, "agent_id": event.agent_id}
        match event.event:
            case TurnStarted(user_text=text):
                return [self._wrap("subagent", {"phase": "started", **ids, "task": text})]
            case TurnFinished() as end:
                body: Payload = {"phase": "finished", **ids, "status": status_name(end.status), "answer": end.final_text,
                        "error": end.error, "stats": _stats(end.stats), "usage": _task_usage(end.stats)}
                return [self._wrap("subagent", body)]
            case AssistantDone() as done:
                said: Payload = {"text": done.text, **({"reasoning": done.reasoning} if done.reasoning else {}),
                        "tool_calls": done.tool_call_count, "finish_reason": done.finish_reason,
                        "usage": _usage(done.usage), **ids}
                answer = self._wrap("assistant", said)  # numbered before its calls
                return [answer, *(self._wrap("tool_call", {**_tool_call_body(c), **ids}) for c in done.tool_calls)]
            case ToolFinished() as finished:
                return [self._wrap("tool_result", {**_tool_result_body(finished), **ids})]
            case Notice() | Retrying() | CompactionDone() | ApprovalResolved() as inner:
                return [{**payload, **ids} for payload in self.event(inner)]
            case _:
                return []  # its progress (model calls, tool starts) is stderr's, like the task's own

    def _close_open_calls(self) -> list[Payload]:
        """Calls the task stopped before they ran (after an interrupted one, or while waiting
        to run): the history answers each with ``CANCELLED_RESULT``, and so does the stream."""
        closed = [
            self._wrap(
                "tool_result",
                {"id": cid, "name": name, "status": "interrupted", "exit_code": None, "duration_seconds": 0.0,
                 "summary": "interrupted", "text": CANCELLED_RESULT},
            )  # fmt: skip
            for cid, name in self._open_calls.items()
        ]
        self._open_calls.clear()
        return closed

    def _approval(self, event: ApprovalResolved) -> Payload:
        body: Payload = {"phase": "answered", "id": event.call_id, "tool": event.tool,
                         "allowed": event.allowed, "by": event.by.value}
        if event.rule:
            body["rule"] = event.rule
        if event.reason:
            body["reason"] = event.reason
        return self._wrap("approval", body)

    def _turn_result(self, event: TurnFinished) -> Payload:
        if event.status is not TaskStatus.DONE:
            self.exit_code = event.status.exit_code
            self._failure = f"task {self._task}: {event.error or status_name(event.status)}"
        self._reset_streamed()
        checks = tuple(_check(c) for c in event.checks)
        return self._result(self._task, status_name(event.status), event.final_text, event.error, event.stats, checks)

    def _result(
        self, task: int | None, status: str, answer: str, error: str | None, stats: TaskStats, checks: Sequence[Payload]
    ) -> Payload:
        body: Payload = {
            "task": task, "status": status, "answer": answer, "error": error, "exit_code": self.exit_code,
            "stats": _stats(stats),
            "usage": _task_usage(stats),
        }  # fmt: skip
        if stats.questions:
            body["stats"]["questions"] = stats.questions
        if checks:
            body["checks"] = list(checks)
        return self._wrap("result", body)


_LINE_BREAKERS = re.compile("[\x7f-\x9f\u2028\u2029]")
"""Characters JSON leaves raw that some readers take for a line end or a control: DEL, the
C1 controls (NEL U+0085 among them) and U+2028/U+2029. Python's ``str.splitlines`` and
JavaScript before ES2019 split there; JSON already escapes every C0 control."""


def encode_line(payload: Payload) -> bytes:
    """One JSON Lines record: compact, UTF-8 (non-ASCII kept as is, but DEL, C1 controls and
    U+2028/U+2029 escaped as ``\\uXXXX``), no lone surrogates, ending in exactly one newline:
    the only line break in it, whichever way a reader splits lines."""
    text = json.dumps(payload, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    text = _LINE_BREAKERS.sub(_escaped, text)  # outside strings JSON text is ASCII: only strings change
    return (scrub(text) + "\n").encode("utf-8")


def _escaped(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"


def _tool_call_body(call: ToolCall) -> Payload:
    body: Payload = {"id": call.id, "name": call.name, "arguments": _arguments(call.arguments)}
    if body["arguments"] is None:
        body["raw_arguments"] = call.arguments  # not a JSON object: as the model sent it
    if call.from_text:
        body["from_text"] = True  # only then: a native call's line is as it always was
    return body


def _tool_result_body(event: ToolFinished) -> Payload:
    return {
        "id": event.call_id, "name": event.name, "status": _tool_status(event), "exit_code": event.exit_code,
        "duration_seconds": _seconds(event.duration_seconds), "summary": event.summary, "text": event.result_text,
    }  # fmt: skip


def _stats(stats: TaskStats) -> Payload:
    body: Payload = {"wall_seconds": _seconds(stats.wall_seconds), "model_calls": stats.model_calls,
                     "tool_calls": stats.tool_calls}
    if stats.subagents:
        body["subagents"] = stats.subagents  # their calls are counted in the two above
    return body


def _tool_status(event: ToolFinished) -> str:
    if event.interrupted:
        return "interrupted"
    if event.denied:
        return "denied"
    if event.is_error or (event.exit_code is not None and event.exit_code != 0):
        return "failed"
    return "done"


def _arguments(raw: str) -> dict[str, Any] | None:
    """The call's arguments as an object, or None when the model sent something else."""
    try:
        value = json.loads(raw, parse_constant=_not_json)
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


def _not_json(constant: str) -> Any:
    """NaN and Infinity are JavaScript, not JSON: such arguments stay raw text."""
    raise ValueError(f"{constant} is not JSON")


def _check(result: CheckResult) -> Payload:
    return {
        "command": result.command, "passed": result.passed, "exit_code": result.exit_code,
        "duration_seconds": _seconds(result.duration_seconds), "timed_out": result.timed_out,
        "output_tail": result.output_tail,
    }  # fmt: skip


def _usage(usage: Usage | None) -> Payload | None:
    if usage is None:
        return None
    return {"prompt_tokens": usage.prompt_tokens, "completion_tokens": usage.completion_tokens,
            "total_tokens": usage.total_tokens}


def _task_usage(stats: TaskStats) -> Payload | None:
    """Token totals as the server reported them; None when no response had usage."""
    if not stats.usage_available:
        return None
    return {"prompt_tokens": stats.prompt_tokens, "completion_tokens": stats.completion_tokens,
            "total_tokens": stats.total_tokens, "partial": stats.usage_partial}


def _seconds(value: float) -> float:
    """Durations to the millisecond; never NaN or infinite (those are not JSON)."""
    return round(value, 3) if math.isfinite(value) else 0.0
