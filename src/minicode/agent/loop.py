"""The agent loop (SPEC 4): one user task from the user message to a ``TurnFinished``.

Owns the order of a turn — context, model call, tool batch, repeat — its stop conditions
(final answer once the acceptance checks and the Stop hooks let it end, cancel, max turns +
one final summary request, timeout, API error, internal error), the UserPromptSubmit hooks,
the per-task statistics and the turn and model-call spans; a tool batch is run by
``agent.batch``. It emits events through a callback; it never touches a terminal. History,
persistence, memory and compaction are behind the protocols of ``agent.deps`` (``Session``
fills them in). Imports no HTTP, UI or tracing SDK.
"""

from __future__ import annotations

import asyncio
import time
from contextlib import aclosing
from typing import TYPE_CHECKING, Callable, Sequence

from minicode.agent import assisted_turn
from minicode.agent.events import (
    AgentEvent,
    AssistantDone,
    HookFeedback,
    ModelCallStarted,
    Notice,
    ReasoningChunk,
    Retrying,
    TaskStatus,
    TextChunk,
    TurnFinished,
    TurnStarted,
)
from minicode.agent.deps import ContextSource, History, PreparedContext, ToolOutcome, ToolRunner, TurnDeps, TurnScope
from minicode.agent.runaway import MIN_REPEATED_CHARS, SMALL_MODEL_REPEATED_CHARS, Repetition, RepetitionGuard, one_copy
from minicode.agent.repair import CANCELLED_RESULT, INPUT_ENDED_RESULT, InputEnded, missing_results
from minicode.agent.stats import TaskStats
from minicode.agent.stopped import STOPPED_NOTE
from minicode.errors import APIError, MinicodeError, ProtocolError
from dataclasses import dataclass
from minicode.provider.base import Provider
from minicode.provider.types import (
    ChatRequest,
    ChatResponse,
    Message,
    ReasoningDelta,
    RetryNotice,
    StreamEnd,
    TextDelta,
    ToolCallDelta,
    ToolSpec,
    UsageUpdate,
)
from minicode.telemetry.base import SPAN_TURN
from minicode.telemetry.traced import elapsed_ms, finish_model_call, model_call_span
from minicode.tokens import estimate_message

if TYPE_CHECKING:
    from minicode.agent.checks import Gate

__all__ = [
    "CANCELLED_RESULT",
    "FINAL_SUMMARY_PROMPT",
    "STOPPED_NOTE",
    "INPUT_ENDED_RESULT",
    "ContextSource",
    "History",
    "ToolOutcome",
    "ToolRunner",
    "TurnDeps",
    "TurnScope",
    "run_turn",
]


FINAL_SUMMARY_PROMPT = (
    "You have reached the maximum number of model turns for this task, so no more tools can be "
    "called. Reply with a short plain-text summary of your progress: what you changed (files), "
    "what you verified and how, and what is left to do."
)


@dataclass(frozen=True, slots=True)
class _Outcome:
    status: TaskStatus
    final_text: str = ""
    error: str | None = None


async def run_turn(
    deps: TurnDeps,
    user_text: str,
    emit: Callable[[AgentEvent], None],
    *,
    max_turns: int = 500,
    timeout: float | None = None,
) -> TurnFinished:
    """Run one task. Always emits and returns a ``TurnFinished``; on cancellation it emits
    ``TurnFinished(INTERRUPTED)`` (unfinished tool calls already answered) and re-raises."""
    span = deps.tracer.start_span(SPAN_TURN, dict(deps.span_attributes))
    scope = TurnScope(TaskStats(), emit, span, deps.tracer)
    if deps.subagents is not None:  # the agent tool's child loops (depth 1: theirs have none)
        from minicode.agent.subagent import delegation

        scope.delegate_for = delegation(deps, scope, run_turn)
    started = time.monotonic()
    emit(TurnStarted(user_text))
    try:
        outcome = await _guarded(deps, scope, user_text, max_turns, timeout)
    except asyncio.CancelledError:
        await _answer_open_batch(deps)
        _finish(scope, started, _Outcome(TaskStatus.INTERRUPTED, error="interrupted"))
        raise
    return _finish(scope, started, outcome)


async def _answer_open_batch(deps: TurnDeps) -> None:
    """Answer the tool calls a cancellation left without results. The batch answers its own
    calls when it is stopped; this covers the cancellation that came while the model's answer
    was being saved: the save still lands, the batch never starts, and without this the
    session file would end in calls nobody answered."""
    try:
        for result in missing_results(deps.history.messages, CANCELLED_RESULT):
            await deps.history.append(result, ToolOutcome(is_error=True, status="interrupted"))
    except (MinicodeError, asyncio.CancelledError):
        pass  # the save failed or was stopped again: the next task's repair answers them


async def _guarded(deps: TurnDeps, scope: TurnScope, user_text: str, max_turns: int, timeout: float | None) -> _Outcome:
    """The turn with its failure modes turned into outcomes (the top of the task)."""
    deadline = asyncio.timeout(timeout)
    try:
        async with deadline:
            return await _run(deps, scope, user_text, max_turns)
    except InputEnded:
        return _Outcome(TaskStatus.INPUT_ENDED)
    except TimeoutError as e:
        if not deadline.expired():
            return _failed(scope, e, f"internal error: {e!r}")
        return _Outcome(TaskStatus.TIMED_OUT, error=f"timed out after {timeout:g} s")
    except APIError as e:
        return _failed(scope, e, str(e) + _api_hint(e))
    except MinicodeError as e:
        return _failed(scope, e, str(e))
    except Exception as e:  # the top of the task: a bug must end the turn, not the session
        return _failed(scope, e, f"internal error: {type(e).__name__}: {e}")


def _api_hint(error: APIError) -> str:
    """What the user can do about an API error that no retry will fix (config keys by name)."""
    if "[model]." in error.message:
        return ""  # the error already says which setting to check (no such host, not the API's URL)
    if error.status in (401, 403):
        return " (check the API key: [model].api_key, or the variable named by [model].api_key_env, in the config)"
    if error.status == 404:
        return " (check [model].name — or --model, /model — and [model].base_url in the config)"
    if error.quota_exhausted:
        return " (the account's quota or balance is used up: add credit, or use another key or model)"
    if error.network:
        return " (is the server running? check [model].base_url in the config)"
    return ""


def _failed(scope: TurnScope, error: BaseException, text: str) -> _Outcome:
    scope.span.record_error(error)
    return _Outcome(TaskStatus.ERROR, error=text)


def _finish(scope: TurnScope, started: float, outcome: _Outcome) -> TurnFinished:
    stats = scope.stats
    stats.wall_seconds = time.monotonic() - started
    scope.span.set(
        {
            "status": outcome.status.value,
            "model_calls": stats.model_calls,
            "tool_calls": stats.tool_calls,
            "tokens.total": stats.total_tokens if stats.usage_available else None,
            "checks": stats.format_checks() or None,
        }
    )
    scope.span.end()
    finished = TurnFinished(outcome.status, outcome.final_text, stats, outcome.error, scope.checks)
    scope.emit(finished)
    return finished


async def _run(deps: TurnDeps, scope: TurnScope, user_text: str, max_turns: int) -> _Outcome:
    deps.context.begin_turn()
    await _close_previous(deps)
    scope.facts.task = user_text
    if deps.hooks and (reason := await deps.hooks.prompt(scope.emit, user_text)) is not None:
        return _Outcome(TaskStatus.ERROR, error=f"the prompt was not sent: blocked by the {reason}")
    await deps.history.append(Message.user(await assisted_turn.task_message(deps, scope, user_text)))
    gate = _gate(deps)
    stops = 0
    composed: Message | None = None  # the assists' report of a change done and checked: no request for it
    for _ in range(max_turns):
        message, composed = composed or await _main_request(deps, scope), None
        if not message.tool_calls:
            if await assisted_turn.ask_for_fix(deps, scope, unchanged=True):
                continue
            if await assisted_turn.ask_again(deps, scope, user_text, message):
                continue
            if gate is not None:
                # a final answer: the acceptance checks decide whether the task is done
                from minicode.agent.checks import Verdict, failure_summary

                verdict = await gate.judge(deps, scope)
                if verdict is Verdict.RETRY:
                    continue
                if verdict is Verdict.FAILED:
                    return _Outcome(TaskStatus.CHECKS_FAILED, message.content or "", failure_summary(scope.checks))
            if await _stop_blocked(deps, scope, message.content or "", stops):
                stops += 1
                continue
            return _Outcome(TaskStatus.DONE, message.content or "")
        from minicode.agent.batch import run_batch  # tools, rules, approval: loaded at the first call

        await run_batch(deps, scope, message.tool_calls)
        if deps.assists.on and (tool := scope.facts.stuck()) is not None:
            from minicode.agent.assists import MAX_SAME_FAILURES

            return _Outcome(TaskStatus.ERROR, "", f"stopped: the model sent the same {tool} call {MAX_SAME_FAILURES} "
                                                  "times and it failed the same way each time")
        if deps.assists.on and (tool := scope.facts.looping()) is not None:
            from minicode.agent.assists import LOOPING_PROMPT, MAX_SAME_CALLS

            scope.emit(Notice(f"the model sent the same {tool} call {MAX_SAME_CALLS} times: asking for its answer"))
            return _Outcome(TaskStatus.DONE, await _final_summary(
                deps, scope, LOOPING_PROMPT.format(tool=tool, count=MAX_SAME_CALLS), deps.tools.specs()))
        if not await assisted_turn.ask_for_fix(deps, scope):
            composed = await assisted_turn.composed_report(deps, scope)
    reached = f"max turns reached ({max_turns} model requests)"
    try:
        summary = await _final_summary(deps, scope)
    except MinicodeError as e:  # the limit is still why the task stopped; say the summary failed too
        scope.span.record_error(e)
        return _Outcome(TaskStatus.MAX_TURNS, "", f"{reached}; the summary request failed: {e}")
    return _Outcome(TaskStatus.MAX_TURNS, summary, reached)


async def _stop_blocked(deps: TurnDeps, scope: TurnScope, answer: str, stops: int) -> bool:
    """True when a Stop hook sends the model back to work (the message saying why appended);
    after ``MAX_STOP_BLOCKS`` of them in this task the hooks are not asked again."""
    if not deps.hooks or not any(spec.event == "Stop" for spec in deps.hooks.specs):
        return False
    from minicode.agent.hook_points import MAX_STOP_BLOCKS, stop_message

    if stops >= MAX_STOP_BLOCKS:
        scope.emit(Notice(f"Stop hooks sent the model back {MAX_STOP_BLOCKS} times: this answer ends the task"))
        return False
    reason = await deps.hooks.stop(scope.emit, answer, stops > 0)
    if reason is None:
        return False
    text = stop_message(reason, stops + 1)
    await deps.history.append(Message.user(text))
    scope.emit(HookFeedback(text, stops + 1, MAX_STOP_BLOCKS))
    return True


async def _close_previous(deps: TurnDeps) -> None:
    """Before a new task, the conversation must end with an assistant message: a previous task
    that stopped before its answer (an API error, Esc, a timeout, max turns, the input ended —
    also in a resumed session) ends in a user message or tool results, and servers that require
    alternating roles refuse two user messages in a row. Its open batch is answered, then a
    short note says it stopped (recorded like any message, so the session replays it too)."""
    await _repair(deps)
    messages = deps.history.messages
    if messages and messages[-1].role in ("user", "tool"):
        await deps.history.append(Message(role="assistant", content=STOPPED_NOTE))


def _gate(deps: TurnDeps) -> Gate | None:
    """The acceptance gate of this task, or None without checks (then nothing loads it)."""
    if not deps.checks:
        return None
    from minicode.agent.checks import Gate

    return Gate(deps.checks, deps.check_timeout)


async def _repair(deps: TurnDeps) -> None:
    for result in missing_results(deps.history.messages):
        await deps.history.append(result, ToolOutcome(is_error=True, status="interrupted"))


async def _main_request(deps: TurnDeps, scope: TurnScope) -> Message:
    """One main model request (with one overflow-recovery retry); appends the answer."""
    specs = deps.tools.specs()
    await _repair(deps)
    context, sent = await _prepare(deps, scope, specs)
    try:
        response = await _call_model(deps, scope, context, sent, "main")
    except APIError as e:
        if not e.context_overflow or not await deps.context.recover_overflow(specs, scope, e):
            raise
        context, sent = await _prepare(deps, scope, specs)
        try:
            response = await _call_model(deps, scope, context, sent, "main")
        except APIError as again:
            if not again.context_overflow:
                raise
            raise _still_too_large(again) from again
    deps.context.calibrate(context.messages, sent, response)
    return await _append_answer(deps, scope, response, specs)


async def _prepare(deps: TurnDeps, scope: TurnScope, specs: Sequence[ToolSpec]) -> tuple[PreparedContext, Sequence[ToolSpec]]:
    """The next request's messages and the tools it declares: the whole conversation and every
    tool — or, asked for a fix as code (the assists), that message alone (``assisted_turn.fix_alone``)."""
    context = await deps.context.prepare(specs, scope)
    if scope.facts.repairing:
        return assisted_turn.fix_alone(context), ()
    return context, specs


def _still_too_large(error: APIError) -> APIError:
    """The second context overflow of one request: no more retries, and say so plainly."""
    return APIError(
        f"{error.message} (the request still does not fit the model's context window after"
        " compaction; the task stops here and the session is saved)",
        status=error.status,
        type=error.type,
        code=error.code,
        context_overflow=True,
    )


async def _append_answer(deps: TurnDeps, scope: TurnScope, response: ChatResponse,
                         specs: Sequence[ToolSpec]) -> Message:
    message = response.message
    if message.role != "assistant":
        raise ProtocolError(f"the model answered with role {message.role!r}")
    if not message.tool_calls and message.content is None:
        message = Message(role="assistant", content="", reasoning=message.reasoning)
    if specs and not message.tool_calls and "{" in (message.content or ""):
        message = _calls_in_text(message, specs, len(deps.history.messages), leading=deps.assists.on)
        if message.tool_calls and deps.assists.learn("the model writes tool calls as text"):
            await assisted_turn.remember_assists(deps)
    if deps.assists.on and specs and not message.tool_calls and ("```" in (message.content or "") or scope.facts.repairing):
        message = await assisted_turn.advice_as_call(deps, scope, message, specs)
    scope.facts.repairing = []  # a fix asked for as code is answered by this message, whatever it is
    kept = len(deps.history.messages)
    try:
        await deps.history.append(message)
    except asyncio.CancelledError:
        # stopped while the write was under way: it lands all the same, so frontends hear
        # the answer is kept (else the full screen says it was dropped while resume shows it)
        if len(deps.history.messages) > kept:
            _answer_done(scope, message, response)
        raise
    _answer_done(scope, message, response)
    return message


def _calls_in_text(message: Message, specs: Sequence[ToolSpec], index: int, *, leading: bool = False) -> Message:
    """The answer as the tool calls its text is, when it is one (``agent.text_calls``: a
    small model writing its call as JSON); else the answer itself. The ids come from the
    message's place in the history: the same conversation gives the same request bytes.
    ``leading`` (the assists on): a reply that opens with a call and goes on imagining its
    result is that call."""
    from minicode.agent.text_calls import recovered_message  # only for a reply with braces

    return recovered_message(message, specs, f"text_call_{index}", leading=leading) or message


def _answer_done(scope: TurnScope, message: Message, response: ChatResponse) -> None:
    scope.emit(
        AssistantDone(
            message.content or "", message.reasoning or "", len(message.tool_calls),
            usage=response.usage, tool_calls=tuple(message.tool_calls), finish_reason=response.finish_reason,
        )
    )  # fmt: skip


async def _final_summary(deps: TurnDeps, scope: TurnScope, text: str = FINAL_SUMMARY_PROMPT,
                         specs: Sequence[ToolSpec] = ()) -> str:
    """The one extra request whose answer runs no tool (after max turns, or a call repeated
    until the assists end the calling) asking ``text``; the answer is stored and returned.
    ``specs``: the tools stay declared (the request then starts with the bytes of the last one,
    which a local server has cached) though none will run."""
    await _repair(deps)
    prepared = await deps.context.prepare(specs, scope)
    prompt = Message.user(text)
    context = PreparedContext([*prepared.messages, prompt], prepared.estimated_tokens + estimate_message(prompt),
                              prepared.max_tokens)
    response = await _call_model(deps, scope, context, specs, "final_summary")
    # Whatever calls the model makes here, they are dropped, not executed.
    text = response.message.content or ""
    stored = Message(role="assistant", content=text, reasoning=response.message.reasoning)
    await deps.history.append(stored)
    scope.emit(AssistantDone(text, stored.reasoning or "", 0, usage=response.usage, finish_reason=response.finish_reason))
    return text


async def _call_model(
    deps: TurnDeps, scope: TurnScope, context: PreparedContext, specs: Sequence[ToolSpec], purpose: str
) -> ChatResponse:
    max_tokens = context.max_tokens
    temperature = None
    if deps.assists.on:  # a small model's long answers are loops; at ~12 tokens/s 8k is 11 minutes
        from minicode.agent.assists import ASSIST_MAX_TOKENS, ASSIST_RETRY_TEMPERATURE, ASSIST_TEMPERATURE

        max_tokens = min(max_tokens, ASSIST_MAX_TOKENS)
        temperature = ASSIST_RETRY_TEMPERATURE if scope.facts.repeating else ASSIST_TEMPERATURE
    request = ChatRequest(messages=tuple(context.messages), tools=tuple(specs), max_tokens=max_tokens,
                          on_retry=_retry_reporter(scope), temperature=temperature,
                          answer_schema=await assisted_turn.forced_call(deps, scope, specs) if purpose == "main" else None)
    span = model_call_span(
        scope.tracer,
        scope.span,
        model=deps.provider.model,
        messages=request.messages,
        estimated_tokens=context.estimated_tokens,
        purpose=purpose,
    )
    scope.model_requests += 1
    scope.emit(ModelCallStarted(scope.model_requests, final_summary=purpose == "final_summary"))
    started = time.monotonic()
    try:
        response, runaway = await _request(deps.provider, request, scope.emit,
                                           SMALL_MODEL_REPEATED_CHARS if deps.assists.on else MIN_REPEATED_CHARS)
    except BaseException as e:
        scope.stats.add_model_call(None)
        finish_model_call(span, None, elapsed_ms(started), e)
        raise
    scope.stats.add_model_call(response.usage)
    finish_model_call(span, response, elapsed_ms(started))
    if response.finish_reason == "length" and not runaway:
        scope.emit(Notice("the answer was cut off at the output limit"))
    if runaway and deps.assists.on:  # asked again (``assists.second_chance``), and hotter: at 0.2 it loops the same way
        scope.facts.cut = scope.facts.repeating = True
    return response


def _retry_reporter(scope: TurnScope) -> Callable[[RetryNotice], None]:
    """The provider's retry notices as ``Retrying`` events (the frontends say why it waits)."""

    def report(notice: RetryNotice) -> None:
        scope.emit(Retrying(notice.attempt, notice.max_attempts, notice.wait_seconds, notice.reason))

    return report


async def _request(
    provider: Provider, request: ChatRequest, emit: Callable[[AgentEvent], None], min_repeated: int
) -> tuple[ChatResponse, bool]:
    """Stream the request; forward text and reasoning as they arrive. The stream is closed
    on every path (its HTTP response with it), also when this is cancelled. True with the
    response when it was cut as a runaway (``agent.runaway``): leaving the stream early
    closes it, which cancels the request."""
    text, reasoning = _Streamed(RepetitionGuard(min_repeated)), _Streamed(RepetitionGuard(min_repeated))
    async with aclosing(provider.stream(request)) as events:
        async for event in events:
            match event:
                case TextDelta(text=delta):
                    emit(TextChunk(delta))
                    if text.add(delta):
                        return _runaway(text, reasoning, emit), True
                case ReasoningDelta(text=delta):
                    emit(ReasoningChunk(delta))
                    if reasoning.add(delta):
                        return _runaway(text, reasoning, emit), True
                case StreamEnd(response=response):
                    return response, False
                case ToolCallDelta() | UsageUpdate():
                    pass
    raise ProtocolError("the model stream ended without a complete response")


class _Streamed:
    """One streamed part (text or reasoning) as far as it came, with its runaway guard."""

    __slots__ = ("found", "guard", "parts")

    def __init__(self, guard: RepetitionGuard) -> None:
        self.guard = guard
        self.parts: list[str] = []
        self.found: Repetition | None = None

    def add(self, delta: str) -> bool:
        self.parts.append(delta)
        self.found = self.guard.feed(delta)
        return self.found is not None

    def kept(self) -> str | None:
        """What was streamed, with one copy of a runaway span left."""
        whole = "".join(self.parts)
        if self.found is not None:
            whole = one_copy(whole, self.found)
        return whole or None


def _runaway(text: _Streamed, reasoning: _Streamed, emit: Callable[[AgentEvent], None]) -> ChatResponse:
    """The answer a runaway stream is cut to: handled like a stop at the output limit (no
    tool calls: any that were being streamed are unfinished)."""
    found = text.found or reasoning.found
    assert found is not None
    where = "answer" if text.found is not None else "reasoning"
    if found.growing:
        emit(Notice(f"the {where} was cut off: the model wrote line after line of one shape, each longer than the"
                    " last (a counting loop; the run was dropped)"))
    else:
        emit(Notice(f"the {where} was cut off: the model repeated the same {found.period:,} characters"
                    f" {found.copies:,} times (the copies were dropped)"))
    return ChatResponse(Message(role="assistant", content=text.kept(), reasoning=reasoning.kept()), "length")
