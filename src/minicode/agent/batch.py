"""One tool batch of a turn (SPEC 4 step 4): each call in order — validate, approve, execute —
and exactly one result message per call, also when the batch is stopped midway.

Owns the tool-call events and spans, the PreToolUse and PostToolUse hooks (``agent.hook_points``:
before the rules, a hook may refuse a call, never allow one), the approval hand-off (permission
rules first, then "allow for the session", then the approver; saving the rule of "always allow"), the synthetic results of denied-unasked and unfinished calls, and the
``ToolOutcome`` stored beside each result. Called by ``agent.loop``; imports no HTTP, UI or
tracing SDK.
"""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any, Callable, Mapping, Sequence

from minicode.agent.approval import Approval, ApprovalRequest, ApprovedBy, Decision
from minicode.agent.asking import Question, result_text, summary
from minicode.agent.deps import ToolOutcome, TurnDeps, TurnScope
from minicode.agent.events import ApprovalResolved, Notice, QuestionResolved, ToolFinished, ToolOutput, ToolStarted, failure_excerpt, output_tail
from minicode.agent.repair import CANCELLED_RESULT, INPUT_ENDED_RESULT, InputEnded
from minicode.errors import MinicodeError
from dataclasses import dataclass, replace
from minicode.permissions.verdict import Outcome
from minicode.provider.types import Message, ToolCall
from minicode.telemetry.base import SPAN_TOOL, Span
from minicode.tools.base import ToolContext, ToolPreview, ToolResult
from minicode.tools.arguments import parse_arguments
from minicode.tools.registry import PreparedCall

__all__ = ["CANCELLED_RESULT", "INPUT_ENDED_RESULT", "InputEnded", "run_batch"]

_DENIED = ToolOutcome(is_error=True, status="denied")
_INTERRUPTED = ToolOutcome(is_error=True, status="interrupted")
_BLOCKED = ToolOutcome(is_error=True, status="denied", summary="blocked by a hook")
_CHANGE_TOOLS = ("edit", "write")
_DIFF_CHARS = 8192  # a kept preview is already capped by its tool (≤ 40 diff lines); this bounds the record


@dataclass(frozen=True, slots=True)
class _CallResult:
    text: str
    outcome: ToolOutcome
    written: str | None = None  # the path a successful write/edit changed
    input_ended: bool = False


async def run_batch(deps: TurnDeps, scope: TurnScope, calls: Sequence[ToolCall]) -> None:
    """Run ``calls`` in order, appending one result each; raises ``InputEnded`` after the
    whole batch is answered when the approver's input ended."""
    written: list[str] = []
    stopped: dict[str, _CallResult] = {}  # a call stopped while it ran: what it did so far
    scope.facts.repeating = False
    scope.facts.checked = None
    try:
        for index, call in enumerate(calls):
            result = await _run_call(deps, scope, call, stopped)
            check: _CallResult | None = None
            if deps.assists.on:
                if call.name in _CHANGE_TOOLS and not result.outcome.is_error:
                    result, command = _after_change(scope, call, result)
                    if command and not any(later.name in _CHANGE_TOOLS for later in calls[index + 1 :]):
                        result, check = await _check_change(deps, scope, call, result, command, stopped)
                result = _said_before(scope, call, result)
            await deps.history.append(Message.tool(call.id, result.text), result.outcome)
            for name, ran in ((call.name, result), ("bash", check)):
                if ran is None:
                    continue
                scope.facts.ran.append((name, not ran.outcome.is_error))
                if name == "bash" and not ran.outcome.is_error:
                    scope.facts.output = ran.text
                elif name == "bash":
                    scope.facts.failure = ran.text
            scope.facts.denied = scope.facts.denied or result.outcome.status == "denied"
            if result.written is not None:
                written.append(result.written)
                if deps.assists.on:
                    await _note_written(deps, scope, result.written)
            if result.input_ended:
                await _deny_rest(deps, scope, calls[index + 1 :])
                raise InputEnded
    finally:
        await _answer_unfinished(deps, calls, stopped)
    deps.context.after_batch(written)


async def _note_written(deps: TurnDeps, scope: TurnScope, path: str) -> None:
    """With the assists on: that this task changed ``path``, and what a Python file now defines."""
    scope.facts.written.append(path)
    if path.endswith(".py"):
        from minicode.agent.task_names import defined_names, used_names
        from minicode.tools.preview_file import text_of

        text = await asyncio.to_thread(text_of, deps.tool_ctx.workspace, path) or ""
        scope.facts.defined_in[path] = defined_names(text)
        scope.facts.used[path] = used_names(text)


def _after_change(scope: TurnScope, call: ToolCall, result: _CallResult) -> tuple[_CallResult, str]:
    """With the assists on, a successful change: whether it left a rename unfinished (the edit's
    note, ``TurnFacts.renaming``), and the command that checks it (``assists.check_command``),
    named in its result — unless the result says what is still to do first (a rename's other
    files, a file still broken): then "" for the command."""
    from minicode.agent.assists import check_command, check_hint
    from minicode.tools.assisted_checks import STILL_BROKEN
    from minicode.tools.edit import STILL_USED

    scope.facts.renaming = STILL_USED in result.text
    if STILL_USED in result.text or STILL_BROKEN in result.text:
        return result, ""
    args = parse_arguments(call.name, call.arguments)
    path = args.get("path") if isinstance(args, dict) else None
    command = check_command(path, scope.facts.files, scope.facts.python) if isinstance(path, str) else ""
    return (replace(result, text=result.text + check_hint(command)) if command else result), command


async def _check_change(deps: TurnDeps, scope: TurnScope, call: ToolCall, result: _CallResult, command: str,
                        stopped: dict[str, _CallResult]) -> tuple[_CallResult, _CallResult | None]:
    """With the assists on: the change's check run at once, through bash and its approval like
    any call, its output in the change's result instead of the hint — told the command, a small
    model sends it as its next call, one request (~4 s on a local server) that only copies it.
    A check the user or a rule denies leaves the hint, and the model may still run it."""
    scope.emit(Notice(f"checking the change: {command}"))
    stopped[call.id] = result  # stopped during its check, the change is made all the same: its result is kept
    check = ToolCall(f"{call.id}_check", "bash", json.dumps({"command": command}))
    ran = await _run_call(deps, scope, check, stopped)
    if ran.input_ended:  # nobody can answer any more: the batch ends as at any call's approval
        return replace(result, input_ended=True), None
    if ran.outcome.status == "denied":
        return result, None
    from minicode.agent.assists import check_hint

    text = result.text.removesuffix(check_hint(command))
    scope.facts.checked = None if ran.outcome.is_error else (command, ran.text)
    return replace(result, text=f"{text}\n[Checked at once with bash: {command}]\n{ran.text}"), ran


_SAID_BEFORE = {
    False: "You made this same call before and it gave the same result: calling it again will not change it. "
           "Use what it showed: answer, or take the next step.",
    True: "You sent this same call before and it failed the same way: sending it again changes nothing. "
          "Change the arguments, or call another tool.",
}


def _said_before(scope: TurnScope, call: ToolCall, result: _CallResult) -> _CallResult:
    """With the assists on: a call that is the same as an earlier one of the task, with the same
    result, says so — a small model resends its call word for word, however the refusal reads
    (nine identical writes in a row), and at temperature 0.2 it sent one grep 46 times. Counted
    in ``TurnFacts.failed`` or ``repeated``: ``MAX_SAME_FAILURES`` failures end the task,
    ``MAX_SAME_CALLS`` successes the calling."""
    failed = result.outcome.is_error
    seen = scope.facts.failed if failed else scope.facts.repeated
    key = (call.name, call.arguments, result.text)
    seen[key] = seen.get(key, 0) + 1
    if seen[key] == 1:
        return result
    scope.facts.repeating = True
    return replace(result, text=f"{result.text}\n[{_SAID_BEFORE[failed]}]")


async def _deny_rest(deps: TurnDeps, scope: TurnScope, calls: Sequence[ToolCall]) -> None:
    """The calls after the one the input ended on: denied unasked, each answered."""
    for call in calls:
        scope.emit(ToolStarted(call.id, call.name, "", "", from_text=call.from_text))
        scope.emit(ToolFinished(call.id, call.name, True, "denied", None, 0.0, denied=True, result_text=INPUT_ENDED_RESULT))
        await deps.history.append(Message.tool(call.id, INPUT_ENDED_RESULT), _DENIED)


async def _answer_unfinished(deps: TurnDeps, calls: Sequence[ToolCall], stopped: Mapping[str, _CallResult]) -> None:
    """Answer the calls of the batch still without a result (the batch was stopped); a call
    stopped while it ran keeps what it did so far (``stopped``).

    Asks the history, not a counter: an append cancelled while its write was under way
    still lands (and is kept), so only the history knows what was answered."""
    answered = _answered_ids(deps.history.messages)
    for call in calls:
        if call.id in answered:
            continue
        result = stopped.get(call.id) or _CallResult(CANCELLED_RESULT, _INTERRUPTED)
        try:
            await deps.history.append(Message.tool(call.id, result.text), result.outcome)
        except MinicodeError:
            # The save itself failed; the next load repairs the batch instead.
            return


def _answered_ids(messages: Sequence[Message]) -> set[str]:
    """The tool_call_ids of the results at the end of the history (the current batch's)."""
    ids: set[str] = set()
    for message in reversed(messages):
        if message.role != "tool":
            break
        if message.tool_call_id is not None:
            ids.add(message.tool_call_id)
    return ids


async def _run_call(deps: TurnDeps, scope: TurnScope, call: ToolCall, stopped: dict[str, _CallResult]) -> _CallResult:
    """One tool call: validate, approve, execute."""
    kept = await _kept_definitions(deps, scope, call) if deps.assists.on and call.name == "write" else None
    if kept is None and deps.assists.on and call.name == "write":
        from minicode.agent.assisted_turn import imports_added

        kept = await imports_added(deps, scope, call)
    if kept is None and deps.assists.on and call.name == "edit":
        from minicode.agent.assisted_turn import items_kept

        kept = await items_kept(deps, scope, call)
    if kept is not None:
        merged, note = kept
        ran = await _run_call(deps, scope, merged, stopped)
        return ran if ran.outcome.is_error else replace(ran, text=f"{ran.text}\n[{note}]")
    prepared = deps.tools.prepare(call)
    if isinstance(prepared, ToolResult):  # unknown tool, bad JSON or bad fields
        scope.emit(ToolStarted(call.id, call.name, "", "", from_text=call.from_text))
        summary = prepared.summary or "invalid call"
        scope.emit(
            ToolFinished(
                call.id, call.name, True, summary, None, 0.0,
                output_tail=failure_excerpt(prepared.text, None), result_text=prepared.text,
            )
        )  # fmt: skip
        _tool_span(scope, call, {"outcome": "error", "duration_ms": 0.0}).end()
        return _CallResult(prepared.text, ToolOutcome(True, status="failed", summary=summary))
    prepared = await deps.tools.describe(prepared, deps.tool_ctx)
    preview: ToolPreview = prepared.preview
    scope.emit(ToolStarted(call.id, call.name, _target(deps, preview), preview.detail, preview.body,
                           from_text=call.from_text))
    if prepared.side_effects and (doomed := await _checked(deps, scope, prepared)) is not None:
        # e.g. an edit of a file never read: say why at once instead of asking first
        scope.emit(
            ToolFinished(
                call.id, call.name, True, doomed.summary, None, 0.0,
                output_tail=failure_excerpt(doomed.text, None), result_text=doomed.text,
            )
        )  # fmt: skip
        _tool_span(scope, call, {"outcome": "error", "duration_ms": 0.0}).end()
        return _CallResult(doomed.text, ToolOutcome(True, status="failed", summary=doomed.summary))
    if deps.hooks and (reason := await deps.hooks.pre_tool(scope.emit, call.id, call.name, prepared.args)) is not None:
        # before the rules and the approver: nobody is asked about a call a hook refuses
        text = f"blocked by the {reason}"
        scope.emit(ToolFinished(call.id, call.name, True, _BLOCKED.summary, None, 0.0, denied=True, result_text=text))
        _tool_span(scope, call, {"outcome": "denied", "duration_ms": 0.0}).end()
        return _CallResult(text, _BLOCKED)
    approval, rule = await _approve(deps, scope, call, prepared)
    if prepared.side_effects:
        scope.emit(ApprovalResolved(call.id, call.name, approval.allowed, approval.by, rule, approval.reason))
    if not approval.allowed:
        text = _denial_text(approval, rule)
        scope.emit(ToolFinished(call.id, call.name, True, "denied", None, 0.0, denied=True, result_text=text))
        _tool_span(scope, call, {"outcome": "denied", "duration_ms": 0.0}).end()
        return _CallResult(text, _DENIED, input_ended=approval.input_ended)
    result, duration = await _execute(deps, scope, call, prepared, stopped)
    path = prepared.args.get("path") if prepared.side_effects and not result.is_error else None
    outcome = ToolOutcome(result.is_error, result.exit_code, "failed" if result.is_error else "done",
                          duration, result.summary, _kept_preview(call.name, preview.body), result.nested)
    done = _CallResult(result.text, outcome, path if isinstance(path, str) else None)
    if not deps.hooks:
        return done
    stopped[call.id] = done  # stopped during a PostToolUse hook, the call still ran: its result is kept
    objection = await deps.hooks.post_tool(scope.emit, call.id, call.name, prepared.args, result.text,
                                           result.is_error, result.exit_code)
    return done if objection is None else replace(done, text=f"{done.text}\n\n[{objection}]")


async def _kept_definitions(deps: TurnDeps, scope: TurnScope, call: ToolCall) -> tuple[ToolCall, str] | None:
    """With the small-model assists on: a ``write`` of an existing Python file whose content
    is only definitions, dropping the file's others, for a task that adds something — the
    write of the file with them kept and the new ones added (``agent.advice``: a 1.5B model
    asked to add a function writes the file with only that function, and resends it when
    refused). The call to run instead and what was kept, or None to run the call as sent."""
    from minicode.agent.advice import advice_edit
    from minicode.agent.assisted_turn import python_write
    from minicode.tools.assisted_checks import lost_definitions
    from minicode.tools.preview_file import text_of

    if (write := python_write(call)) is None:
        return None
    args, path, content = write
    current = await asyncio.to_thread(text_of, deps.tool_ctx.workspace, path)
    if current is None or not lost_definitions(current.encode(), content.encode()):
        return None
    edit = advice_edit(scope.facts.task, f"```python\n{content}\n```", path, current)
    if edit is None or not edit.added or lost_definitions(current.encode(), edit.content.encode()):
        return None
    merged = ToolCall(call.id, call.name, json.dumps({**args, "content": edit.content}), from_text=call.from_text)
    return merged, (f"{', '.join(f'{n}()' for n in edit.added)} added; the file's other definitions were kept "
                    "(the content sent had only the new ones)")


async def _checked(deps: TurnDeps, scope: TurnScope, prepared: PreparedCall) -> ToolResult | None:
    """Why a side effect is bound to fail or must not run, before anyone is asked: the tool's
    own pre-check, and with the small-model assists on, a test changed for a task that asks for
    the code under test to be fixed (``agent.assists.test_guard``)."""
    if deps.assists.on:
        from minicode.agent.assists import placeholder_write, test_guard

        path = prepared.args.get("path")
        refusal = test_guard(scope.facts.task, prepared.tool.name, path if isinstance(path, str) else "")
        refusal = refusal or placeholder_write(prepared.tool.name, prepared.args)
        if refusal is not None:
            return ToolResult(text=refusal, is_error=True, summary="refused: a test")
        if prepared.tool.name in _CHANGE_TOOLS and _made_before(scope, prepared):
            scope.facts.repeating = True
            # at temperature 0.2 a small model re-sends the edit whose check failed, and an
            # insertion made twice is two copies of the same line
            return ToolResult(text="This is the same change you already made in this task: making it again does "
                                   "not help. Make a different change, or answer with what is left.",
                              is_error=True, summary="refused: made before")
    return await deps.tools.check(prepared, deps.tool_ctx)


def _made_before(scope: TurnScope, prepared: PreparedCall) -> bool:
    """Whether a call with these very arguments already succeeded in this task."""
    arguments = json.dumps(dict(prepared.args), sort_keys=True)
    return any(name == prepared.tool.name and _same_arguments(raw, arguments)
               for name, raw, _ in scope.facts.repeated)


def _same_arguments(raw: str, arguments: str) -> bool:
    parsed = parse_arguments("", raw)
    return isinstance(parsed, dict) and json.dumps(parsed, sort_keys=True) == arguments


def _kept_preview(tool: str, body: str) -> str:
    """What replay shows under a call that ran: an edit's diff, the start of a written file."""
    return body[:_DIFF_CHARS] if tool in _CHANGE_TOOLS else ""


async def _execute(deps: TurnDeps, scope: TurnScope, call: ToolCall, prepared: PreparedCall,
                   stopped: dict[str, _CallResult]) -> tuple[ToolResult, float]:
    """Run the call; the result and how long it took. Stopped while it runs (Esc, the task
    timeout), it leaves what it did so far in ``stopped`` for the batch to record."""
    # Counted once it runs: invalid, refused, denied or unanswered calls never executed.
    scope.stats.tool_calls += 1
    span = _tool_span(scope, call, {})
    started = time.monotonic()
    so_far: list[str] = []
    try:
        result = await deps.tools.execute(prepared, _watched_context(deps, scope, call, so_far.append))
    except BaseException as e:
        duration = time.monotonic() - started
        span.record_error(e)
        span.set({"outcome": "error", "duration_ms": round(duration * 1000, 1)})
        span.end()
        partial = _stopped_result(duration, so_far[-1] if so_far else None)
        stopped[call.id] = partial
        tail = output_tail(so_far[-1]) if so_far else ""
        scope.emit(ToolFinished(call.id, call.name, True, partial.outcome.summary, None, duration,
                                output_tail=tail, interrupted=True, result_text=partial.text))
        raise
    duration = time.monotonic() - started
    outcome = "error" if result.is_error else "ok"
    span.set({"outcome": outcome, "duration_ms": round(duration * 1000, 1), "exit_code": result.exit_code})
    span.end()
    tail = failure_excerpt(result.text, result.exit_code) if result.is_error or result.exit_code else ""
    scope.emit(
        ToolFinished(
            call.id, call.name, result.is_error, result.summary, result.exit_code, duration, False, tail,
            result_text=result.text,
        )
    )  # fmt: skip
    return result, duration


def _denial_text(approval: Approval, rule: str | None = None) -> str:
    """What the model is told about a denied call: who denied it and why. Only a person's
    denial says "by the user"; a rule names itself; a policy (nobody was asked) gives its reason."""
    if approval.by is ApprovedBy.RULE:
        return f"denied by rule {rule}"
    reason = (approval.reason or "").strip()
    who = "denied by the user" if approval.by is ApprovedBy.USER else "denied"
    return who + (f": {reason}" if reason else "")


def _stopped_result(duration: float, output: str | None) -> _CallResult:
    """The result of a call stopped while it ran: how long it ran and, when the tool kept
    any (bash), its output so far — so the model learns what already happened."""
    summary = f"interrupted after {duration:.1f} s"
    if output is None:
        text = f"{summary}: {CANCELLED_RESULT.removeprefix('interrupted: ')}"
    elif not output.strip():
        text = f"{summary}; no output so far"
    else:
        text = f"{summary}; output so far:\n{output.rstrip(chr(10))}"
    return _CallResult(text, ToolOutcome(True, None, "interrupted", duration, summary))


def _watched_context(deps: TurnDeps, scope: TurnScope, call: ToolCall,
                     on_stopped: Callable[[str], None]) -> ToolContext:
    """The session's tool context (same stamps) whose output hook emits ``ToolOutput``, whose
    stop hook keeps what a stopped tool produced, whose ``ask`` goes to the turn's asker, and for
    an ``agent`` call the delegate that runs its sub-task (``agent.subagent``)."""

    def on_output(text: str) -> None:
        scope.emit(ToolOutput(call.id, text))

    async def ask(text: str, options: tuple[str, ...]) -> ToolResult:
        question = Question(call.id, text, options)
        scope.stats.questions += 1
        answer = await deps.asker.ask(question)
        scope.emit(QuestionResolved(call.id, text, options, answer.kind.value, answer.text if answer.answered else ""))
        return ToolResult(result_text(question, answer), summary=summary(question, answer))

    delegate = None
    if call.name == "agent" and scope.delegate_for is not None:
        delegate = scope.delegate_for(call.id, on_stopped)
    return replace(deps.tool_ctx, on_output=on_output, on_stopped=on_stopped, delegate=delegate, ask=ask)


def _tool_span(scope: TurnScope, call: ToolCall, attributes: Mapping[str, Any]) -> Span:
    span = scope.tracer.start_span(SPAN_TOOL, {"tool.name": call.name, "tool.call_id": call.id}, parent=scope.span)
    if attributes:
        span.set(attributes)
    return span


async def _approve(
    deps: TurnDeps, scope: TurnScope, call: ToolCall, prepared: PreparedCall
) -> tuple[Approval, str | None]:
    """The decision for one call and the rule behind it: a deny rule, an allow rule, "for
    the session", else the approver (which may save a rule: "always allow in this project")."""
    if not prepared.side_effects:
        return Approval(Decision.ALLOW_ONCE), None
    verdict = deps.permissions.check(call.name, prepared.args) if deps.permissions is not None else None
    if verdict is not None and verdict.outcome is not Outcome.ASK:
        decision = Decision.ALLOW_ONCE if verdict.outcome is Outcome.ALLOW else Decision.DENY
        return Approval(decision, by=ApprovedBy.RULE), verdict.rule
    protected = verdict is not None and verdict.protected is not None
    if call.name in deps.session_allowed and not protected:
        return Approval(Decision.ALLOW_ONCE, by=ApprovedBy.SESSION), None
    preview: ToolPreview = prepared.preview
    suggested = verdict.suggested if verdict is not None else None
    request = ApprovalRequest(
        call.id, call.name, _target(deps, preview), preview.detail, prepared.args, preview.body, suggested,
        always_ask=protected,
        person_only=verdict.yes_refusal() if verdict is not None and verdict.person_only else None,
    )
    approval = await deps.approver.approve(request)
    if approval.decision is Decision.ALLOW_SESSION and not protected:
        deps.session_allowed.add(call.name)
    if approval.decision is Decision.ALLOW_ALWAYS:
        return approval, await _save_rule(deps, scope, suggested)
    if approval.by is ApprovedBy.POLICY and not approval.allowed and verdict is not None and not request.person_only:
        why = (approval.reason or "nobody can approve it here").strip()
        # a protected path: no rule can help, so the approver's "add a rule" would mislead
        approval = replace(approval, reason=verdict.hint() if protected else f"{why}; {verdict.hint()}")
    return approval, None


async def _save_rule(deps: TurnDeps, scope: TurnScope, rule: str | None) -> str | None:
    """Save the rule "always allow" chose (the call itself is allowed either way)."""
    if rule is None or deps.permissions is None:
        return None
    try:
        where = await asyncio.to_thread(deps.permissions.remember, rule)
    except MinicodeError as e:
        scope.emit(Notice(f"the rule {rule} could not be saved: {e}"))
        return None
    scope.emit(Notice(f"saved rule {rule} in {where}: calls like this one no longer ask in this project"))
    return rule


def _target(deps: TurnDeps, preview: ToolPreview) -> str:
    # "." is the workspace itself (bash's working directory, ls without a path): name it
    return str(deps.tool_ctx.workspace) if preview.target == "." else preview.target
