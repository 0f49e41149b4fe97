"""The small-model assists at the loop's steps (``agent.assists`` decides; this applies it).

``agent.loop`` runs a task the same way for every model; where the assists are on it calls
these at four points — the task message (the workspace brief), each main request (an answer
constrained to a call), each answer (advice made into the change, the fact that the model
writes calls as text remembered) and each final answer (a second chance) — and each does
nothing while the assists are off, so a model that acts never sees any of it
(docs/small-models.md).
"""

from __future__ import annotations

import asyncio
import json
from typing import Sequence

from minicode.agent.deps import PreparedContext, TurnDeps, TurnScope
from minicode.agent.events import Notice
from minicode.provider.types import Message, ToolCall, ToolSpec
from minicode.tools.base import ToolResult

__all__ = ["advice_as_call", "ask_again", "ask_for_fix", "composed_report", "fix_alone", "forced_call",
           "imports_added", "items_kept", "python_write", "remember_assists", "task_message"]


async def task_message(deps: TurnDeps, scope: TurnScope, user_text: str) -> str:
    """The task as the model gets it: with the assists on, the workspace's file list after it
    and the files it names as ``read`` shows them (read for this session, so ``edit`` may change
    them); ``write`` then wants a file read before it replaces it."""
    deps.tool_ctx.read_before_write = deps.assists.on
    deps.tool_ctx.adds_only = False
    if not deps.assists.on:
        return user_text
    from minicode.agent.task_names import only_adds

    deps.tool_ctx.adds_only = only_adds(user_text)
    from minicode.agent.assists import BRIEF_MAX_FILES, files_to_show, list_files, workspace_brief

    workspace = deps.tool_ctx.workspace
    files = await asyncio.to_thread(list_files, workspace, BRIEF_MAX_FILES + 1)
    scope.facts.files = files[:BRIEF_MAX_FILES]
    parts = [user_text, workspace_brief(workspace, files=files)]
    from minicode.tools.read import EMPTY_FILE

    brief = files_to_show(user_text, files[:BRIEF_MAX_FILES])
    seen = 0
    for path in brief:
        shown = await _read_for_brief(deps, path)
        seen += shown is not None
        if shown is not None and shown != EMPTY_FILE:  # an empty __init__.py shown is content to copy
            parts.append(f"<file path={json.dumps(path)}>\n{shown}\n</file>")
            scope.facts.shown.append(path)
    scope.facts.seen_all = bool(files) and len(files) == len(brief) == seen
    from minicode.agent.assists import change_paths, python_name, test_command, wants_change
    from minicode.agent.call_hint import asked_functions, call_hint, count_hint

    facts = scope.facts
    facts.python = await asyncio.to_thread(python_name, deps.tool_ctx.env)
    hint = ""
    if not wants_change(user_text):
        # "how many functions are in …": the command that counts them; "what does f() return":
        # the one-liner that prints it (the workspace's modules read only for such a question)
        hint = count_hint(user_text, facts.files)
        if not hint and asked_functions(user_text):
            hint = call_hint(user_text, await _python_modules(deps, facts.files), facts.python)
    elif change_paths(user_text, facts) is not None and (command := test_command(facts.files, facts.python)):
        hint = f"[The tests run with: {command}]"  # it ran a test by its path, which cannot import the package
    return "\n\n".join([*parts, hint] if hint else parts)


async def _read_for_brief(deps: TurnDeps, path: str) -> str | None:
    """``path`` through the real read tool (confined, capped, stamped); None when it fails."""
    from minicode.agent.assists import BRIEF_MAX_LINES
    from minicode.provider.types import ToolCall

    call = ToolCall("brief", "read", json.dumps({"path": path, "limit": BRIEF_MAX_LINES}))
    prepared = deps.tools.prepare(call)
    if isinstance(prepared, ToolResult):
        return None
    result = await deps.tools.execute(prepared, deps.tool_ctx)
    return None if result.is_error else result.text


async def forced_call(deps: TurnDeps, scope: TurnScope, specs: Sequence[ToolSpec]) -> dict[str, object] | None:
    """With the assists on, while the task lacks what it asks for (``assists.must_call``): the
    schema that makes the answer a call to one of ``specs`` (the server decodes under it), so a
    small model acts instead of describing the action — and an edit's old_text one of the
    file's own lines (``call_schema.edit_choices``). None: a free answer — always while planning
    (the plan is the answer; what a change task "lacks" cannot be made there)."""
    if not deps.assists.on or deps.planning or not specs or scope.facts.repairing:
        return None  # asked for a fix as code (``ask_for_fix``): the answer is a Python block
    from minicode.agent.assists import CHANGERS, change_paths, edit_files, must_call, test_not_written, wants_rename
    from minicode.agent.call_schema import call_schema, edit_choices

    facts = scope.facts
    allowed = must_call(facts.task, facts, [spec.name for spec in specs])
    if allowed is None:
        return None
    facts.forced += 1
    paths = change_paths(facts.task, facts)
    edits = edit_files(facts.task, facts)
    if set(allowed) <= CHANGERS and facts.changed() and (test := test_not_written(facts.task, facts)) is not None:
        # the test the task asks for is what is missing: it, not another go at the code (the
        # model re-sent its change of store.py four times)
        paths, edits = [test], [test] if test in facts.files else []
        allowed = tuple(name for name in allowed if name == "write" or edits)
    choices = None
    if "edit" in allowed:
        choices = await asyncio.to_thread(edit_choices, deps.tool_ctx.workspace, edits,
                                          wants_rename(facts.task), paths is not None, facts.task)
    keep = ("replace_all",) if wants_rename(facts.task) else ()
    return call_schema([(spec.name, spec.parameters) for spec in specs if spec.name in allowed], paths, choices, keep)


async def ask_again(deps: TurnDeps, scope: TurnScope, user_text: str, answer: Message) -> bool:
    """With the assists on: a final answer that did not do the task gets one more request,
    with a user message saying what is missing (``agent.assists.second_chance``). Never while
    planning: a plan is the answer, and "make the change now" would push for a refused write."""
    if not deps.assists.on or deps.planning:
        return False
    from minicode.agent.assists import second_chance

    tools = [spec.name for spec in deps.tools.specs()]
    nudge = second_chance(user_text, answer.content or "", scope.facts, tools)
    if nudge is None:
        return False
    scope.emit(Notice(f"asking the model again: {nudge}"))
    await deps.history.append(Message.user(nudge))
    return True


async def ask_for_fix(deps: TurnDeps, scope: TurnScope, unchanged: bool = False) -> bool:
    """With the assists on, in a task to make failing tests pass whose last run is red and
    unchanged since: append the message that asks for the fix as code — the failure and the
    code under test (``agent.fix_request``); True when it did. ``unchanged``: the answer to the
    last one changed nothing (said so, and the next request samples hotter)."""
    if not deps.assists.on or deps.planning:
        return False
    from minicode.agent.assists import EDIT_FILES_MAX, change_paths, wants_change
    from minicode.agent.fix_request import MAX_REPAIRS, code_shown, failure_excerpt, red_failure, repair_message
    from minicode.tools.preview_file import text_of

    facts = scope.facts
    if facts.repairs >= MAX_REPAIRS or facts.denied or not facts.red_unchanged() or not red_failure(facts.failure):
        return False
    if not wants_change(facts.task):  # "run the tests and tell me which fails; do not change anything"
        return False
    paths = [path for path in change_paths(facts.task, facts) or () if path.endswith(".py")][:EDIT_FILES_MAX]
    texts = {}
    for path in paths:
        if (text := await asyncio.to_thread(text_of, deps.tool_ctx.workspace, path)) is not None:
            texts[path] = text
    excerpt = failure_excerpt(facts.failure)
    shown = code_shown(excerpt, texts)
    if not shown:
        return False
    facts.repairs += 1
    facts.repairing = [path for path, _ in shown]
    facts.repeating = facts.repeating or unchanged
    scope.emit(Notice(f"asking the model for the fix as code: the tests fail ({', '.join(facts.repairing)} shown)"))
    await deps.history.append(Message.user(repair_message(excerpt, shown, unchanged)))
    return True


async def composed_report(deps: TurnDeps, scope: TurnScope) -> Message | None:
    """With the assists on, after a batch whose change was checked at once and green, in a change
    task with nothing left to do (``assists.done_report``): the final answer written from the
    records — appended and shown like the model's, with a notice that minicode wrote it — so no
    request is spent on it. None: the model answers as usual."""
    if not deps.assists.on or deps.planning:
        return None
    from minicode.agent.assists import done_report
    from minicode.agent.events import AssistantDone, TextChunk

    report = done_report(scope.facts.task, scope.facts, [spec.name for spec in deps.tools.specs()])
    if report is None:
        return None
    scope.emit(Notice("the change is made and its check passed: minicode writes the report (no request for it)"))
    message = Message(role="assistant", content=report)
    await deps.history.append(message)
    scope.emit(TextChunk(report))
    scope.emit(AssistantDone(report, "", 0))
    return message


FIX_MAX_TOKENS = 1024
"""The output limit of a request for a fix as code: a function or two."""


def fix_alone(context: PreparedContext) -> PreparedContext:
    """The request for a fix as code (``ask_for_fix``) with its message alone: no system prompt,
    no tools, no conversation. In the conversation — after the brief showed the file and its
    failed tries — the 1.5B model sent the function back unchanged three times in a row; asked
    alone, as a code model is asked, it wrote the fix (``range(len(seq) - n + 1)``). The
    message and the answer are kept in the history like any, so the next request's prefix is
    the conversation's (a local server keeps its state for it)."""
    from minicode.tokens import estimate_message

    last = context.messages[-1]
    return PreparedContext([last], estimate_message(last), min(context.max_tokens, FIX_MAX_TOKENS))


async def advice_as_call(deps: TurnDeps, scope: TurnScope, message: Message, specs: Sequence[ToolSpec]) -> Message:
    """With the assists on: a change request answered with the fixed code instead of the fix
    becomes the ``write`` it describes, and after a second chance an answer that is one shell
    block becomes that ``bash`` call (``agent.advice``), recovered from text like a call."""
    from minicode.agent.advice import advice_edit, command_block
    from minicode.agent.assists import target_file, wants_change
    from minicode.tools.preview_file import text_of

    facts, answer = scope.facts, message.content or ""
    names = {spec.name for spec in specs}
    repairing, facts.repairing = facts.repairing, []
    if repairing and "write" in names:  # asked for the fix as code: its blocks are the change
        for shown in repairing:
            text = await asyncio.to_thread(text_of, deps.tool_ctx.workspace, shown)
            if text is not None and (fixed := advice_edit(facts.task, answer, shown, text)) is not None:
                return _write_call(deps, message, fixed.path, fixed.content)
        return message
    if facts.nudged and "bash" in names and (command := command_block(answer)) is not None:
        # told to run or check something, a small model answers with the command to run
        call = ToolCall(f"advice_{len(deps.history.messages)}_1", "bash", json.dumps({"command": command}),
                        from_text=True)
        return Message(role="assistant", content=answer, tool_calls=(call,), reasoning=message.reasoning)
    if not wants_change(facts.task) or facts.changed() or "write" not in names:
        return message
    path = target_file(facts.task, answer, facts.shown)
    current = None if path is None else await asyncio.to_thread(text_of, deps.tool_ctx.workspace, path)
    edit = None if path is None or current is None else advice_edit(facts.task, answer, path, current)
    if edit is None:
        return message
    return _write_call(deps, message, edit.path, edit.content)


def _write_call(deps: TurnDeps, message: Message, path: str, content: str) -> Message:
    """``message`` carrying the ``write`` its advice describes, recovered from text."""
    call = ToolCall(f"advice_{len(deps.history.messages)}_1", "write", json.dumps({"path": path, "content": content}),
                    from_text=True)
    return Message(role="assistant", content=message.content, tool_calls=(call,), reasoning=message.reasoning)


MODULES_READ_MAX = 40


def python_write(call: ToolCall) -> tuple[dict[str, object], str, str] | None:
    """A ``write`` call's arguments, path and content when it writes a Python file, else None."""
    from minicode.jsonsafe import loads

    try:
        args = loads(call.arguments)
    except ValueError:
        return None
    path, content = (args.get("path"), args.get("content")) if isinstance(args, dict) else (None, None)
    if not (isinstance(path, str) and isinstance(content, str) and path.endswith(".py")):
        return None
    return args, path, content


async def imports_added(deps: TurnDeps, scope: TurnScope, call: ToolCall) -> tuple[ToolCall, str] | None:
    """With the assists on: a Python ``write`` whose code uses names it never imports that one
    workspace module defines (or a standard-library module is): the write with their imports
    added, and the note saying so (``agent.missing_imports``). None: run the call as sent."""
    from minicode.agent.missing_imports import definers, undefined_names, with_imports

    if (write := python_write(call)) is None:
        return None
    args, path, content = write
    names = undefined_names(content)
    if not names:
        return None
    modules = await _python_modules(deps, [file for file in scope.facts.files if file != path])
    lines = definers(names, modules, path.removesuffix(".py").replace("/", "."))
    if not lines:
        return None
    fixed = ToolCall(call.id, call.name, json.dumps({**args, "content": with_imports(content, lines.values())}),
                     from_text=call.from_text)
    return fixed, f"added the import{'s' if len(lines) > 1 else ''} the code uses: {'; '.join(lines.values())}"


async def items_kept(deps: TurnDeps, scope: TurnScope, call: ToolCall) -> tuple[ToolCall, str] | None:
    """With the assists on, for a task that only adds (``task_names.only_adds``): an ``edit`` of one
    line's list that drops its items (``task_names.list_kept``) — the edit with them kept, and the
    note saying so. Told the edit would drop ``click>=8``, the 1.5B model sent it again word for
    word. None: run the call as sent."""
    from minicode.agent.task_names import list_kept, only_adds
    from minicode.jsonsafe import loads

    try:
        args = loads(call.arguments)
    except ValueError:
        return None
    old, new = (args.get("old_text"), args.get("new_text")) if isinstance(args, dict) else (None, None)
    if not (isinstance(old, str) and isinstance(new, str) and only_adds(scope.facts.task)):
        return None
    if (kept := list_kept(old, new)) is None:
        return None
    merged, gone = kept
    fixed = ToolCall(call.id, call.name, json.dumps({**args, "new_text": merged}), from_text=call.from_text)
    return fixed, f"kept {', '.join(json.dumps(item) for item in gone)} in the list: the task only adds"


async def _python_modules(deps: TurnDeps, files: Sequence[str]) -> dict[str, str]:
    """The workspace's Python files among ``files`` (at most ``MODULES_READ_MAX``), dotted
    module name → text; a file that cannot be read as text is left out."""
    from minicode.tools.preview_file import text_of

    modules = {}
    for file in [file for file in files if file.endswith(".py")][:MODULES_READ_MAX]:
        if (text := await asyncio.to_thread(text_of, deps.tool_ctx.workspace, file)) is not None:
            modules[file.removesuffix(".py").removesuffix("/__init__").replace("/", ".")] = text
    return modules


async def remember_assists(deps: TurnDeps) -> None:
    """Keep for this endpoint and model that the assists are on (the next run starts so)."""
    remember = deps.assists.remember
    if remember is not None:
        try:
            await asyncio.to_thread(remember, deps.assists.reason)
        except OSError:
            pass  # not remembered: the next run learns it again
