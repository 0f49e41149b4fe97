"""Registry: specs, validation errors the model can act on, safe execution."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any, Mapping

import pytest

from minicode.errors import ToolError
from minicode.provider.types import ToolCall
from minicode.tools.base import ToolContext, ToolPreview, ToolResult
from minicode.tools.registry import PreparedCall, ToolRegistry, default_registry


def _call(name: str, arguments: str) -> ToolCall:
    return ToolCall(id="c1", name=name, arguments=arguments)


def _error_text(result: PreparedCall | ToolResult) -> str:
    assert isinstance(result, ToolResult) and result.is_error
    return result.text


def test_specs_have_the_contract_names_and_arguments() -> None:
    specs = {s.name: s for s in default_registry().specs()}
    assert set(specs) == {"read", "ls", "glob", "grep", "write", "edit", "bash", "agent", "ask_user", "todo"}
    props = {name: set(s.parameters["properties"]) for name, s in specs.items()}
    assert props == {
        "read": {"path", "offset", "limit"},
        "ls": {"path"},
        "glob": {"pattern", "path"},
        "grep": {"pattern", "path", "glob", "ignore_case"},
        "write": {"path", "content"},
        "edit": {"path", "old_text", "new_text", "replace_all"},
        "bash": {"command", "timeout"},
        "agent": {"task"},
        "ask_user": {"question", "options"},
        "todo": {"items"},
    }
    side = {name: default_registry().get(name).side_effects for name in specs}  # type: ignore[union-attr]
    assert side == {"read": False, "ls": False, "glob": False, "grep": False, "write": True, "edit": True, "bash": True,
                    "agent": False, "ask_user": False, "todo": False}


def test_an_undeclared_tool_is_left_out_of_the_declarations_but_callable_by_name() -> None:
    registry = default_registry().undeclaring(frozenset({"ask_user"}))
    assert "ask_user" not in {s.name for s in registry.specs()}
    assert "ask_user" not in registry.names()
    assert isinstance(registry.prepare(_call("ask_user", '{"question": "which port?"}')), PreparedCall)


def test_an_array_argument_is_checked_item_by_item() -> None:
    assert isinstance(default_registry().prepare(_call("ask_user", '{"question": "q", "options": ["a", "b"]}')),
                      PreparedCall)
    assert "'options' must be an array, got a string" in _error_text(
        default_registry().prepare(_call("ask_user", '{"question": "q", "options": "a, b"}')))
    assert "'options[1]' must be a string, got a number" in _error_text(
        default_registry().prepare(_call("ask_user", '{"question": "q", "options": ["a", 2]}')))


def test_an_array_of_objects_is_checked_item_by_item_and_their_fields_left_to_the_tool() -> None:
    assert isinstance(default_registry().prepare(_call("todo", '{"items": [{"text": "a", "status": "done"}]}')),
                      PreparedCall)
    assert "'items[0]' must be an object, got a string" in _error_text(
        default_registry().prepare(_call("todo", '{"items": ["a"]}')))


def test_prepare_valid_call_gives_args_preview_and_side_effects() -> None:
    prepared = default_registry().prepare(_call("bash", '{"command": "ls -la", "timeout": 5}'))
    assert isinstance(prepared, PreparedCall)
    assert prepared.args == {"command": "ls -la", "timeout": 5}
    assert prepared.side_effects is True
    assert prepared.preview == ToolPreview(target=".", detail="ls -la")
    write = default_registry().prepare(_call("write", '{"path": "a.txt", "content": "1\\n2\\n"}'))
    assert isinstance(write, PreparedCall)
    assert write.preview == ToolPreview(target="a.txt", detail="2 lines", body="1\n2")


def test_unknown_tool_lists_available_tools() -> None:
    text = _error_text(default_registry().prepare(_call("delete", "{}")))
    assert "unknown tool 'delete'" in text
    assert "bash, edit, glob, grep, ls, read, todo, write" in text


def test_bad_json_reports_position() -> None:
    text = _error_text(default_registry().prepare(_call("read", '{"path": "a" "x"}')))
    assert "not valid JSON" in text and "line 1 column 14" in text


def test_non_object_json_is_refused() -> None:
    assert "must be a JSON object" in _error_text(default_registry().prepare(_call("read", "[1]")))


def test_missing_extra_and_wrong_types_are_named() -> None:
    reg = default_registry()
    assert "missing required field 'path' (a string)" in _error_text(reg.prepare(_call("read", "{}")))
    text = _error_text(reg.prepare(_call("read", '{"path": "a", "colour": 1}')))
    assert "unknown field(s) 'colour'" in text and "allowed: path, offset, limit" in text
    text = _error_text(reg.prepare(_call("read", '{"path": "a", "offset": "3"}')))
    assert "'offset' must be an integer, got a string" in text
    text = _error_text(reg.prepare(_call("read", '{"path": "a", "offset": true}')))
    assert "'offset' must be an integer, got a boolean" in text
    text = _error_text(reg.prepare(_call("read", '{"path": "a", "offset": 1.5}')))
    assert "must be an integer, got a number" in text
    text = _error_text(reg.prepare(_call("edit", '{"path": "a", "old_text": "x", "new_text": "y", "replace_all": 1}')))
    assert "'replace_all' must be true or false" in text


def test_bounds_are_checked() -> None:
    reg = default_registry()
    assert "offset must be >= 1" in _error_text(reg.prepare(_call("read", '{"path": "a", "offset": 0}')))
    assert "timeout must be <= 600" in _error_text(reg.prepare(_call("bash", '{"command": "x", "timeout": 601}')))
    assert "timeout must be > 0" in _error_text(reg.prepare(_call("bash", '{"command": "x", "timeout": 0}')))
    assert "old_text must not be empty" in _error_text(
        reg.prepare(_call("edit", '{"path": "a", "old_text": "", "new_text": "y"}'))
    )


def test_lenient_forms_integral_float_null_optional_and_empty_arguments() -> None:
    reg = default_registry()
    prepared = reg.prepare(_call("read", '{"path": "a", "offset": 2.0, "limit": null}'))
    assert isinstance(prepared, PreparedCall)
    assert prepared.args == {"path": "a", "offset": 2}
    assert isinstance(reg.prepare(_call("ls", "")), PreparedCall)
    assert "missing required field 'path'" in _error_text(reg.prepare(_call("read", '{"path": null}')))


class _Boom:
    name = "boom"
    description = "fails"
    parameters: Mapping[str, Any] = {"type": "object", "properties": {"kind": {"type": "string"}}}
    side_effects = False

    def preview(self, args: Mapping[str, Any]) -> ToolPreview:
        return ToolPreview(target="-")

    async def run(self, args: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
        kind = args.get("kind")
        if kind == "tool":
            raise ToolError("expected failure")
        if kind == "bug":
            raise KeyError("oops")
        if kind == "cancel":
            await asyncio.sleep(3600)
        if kind == "big":
            return ToolResult(text="x" * 200_000, summary="big")
        if kind == "leak":
            return ToolResult(text="api_key = \"sk-live-0123456789\"\nok", summary="leak")
        if kind == "leak-error":
            raise ToolError("cannot parse sk-live-0123456789 here")
        return ToolResult(text="fine")


async def _run(kind: str, ctx: ToolContext) -> ToolResult:
    reg = ToolRegistry([_Boom()])
    prepared = reg.prepare(_call("boom", f'{{"kind": "{kind}"}}'))
    assert isinstance(prepared, PreparedCall)
    return await reg.execute(prepared, ctx)


async def test_execute_turns_errors_into_results(ctx: ToolContext) -> None:
    assert (await _run("ok", ctx)).text == "fine"
    tool_error = await _run("tool", ctx)
    assert tool_error.is_error and tool_error.text == "expected failure"
    bug = await _run("bug", ctx)
    assert bug.is_error and "KeyError" in bug.text and "boom" in bug.text


async def test_execute_caps_output_with_marker(ctx: ToolContext) -> None:
    result = await _run("big", ctx)
    assert len(result.text.encode()) <= 64 * 1024
    assert "output truncated" in result.text
    assert result.summary == "big"


async def test_execute_redacts_secret_values_from_results_and_errors(ctx: ToolContext) -> None:
    ctx.secrets = ("sk-live-0123456789",)
    leak = await _run("leak", ctx)
    assert leak.text == 'api_key = "[redacted]"\nok' and leak.summary == "leak"
    error = await _run("leak-error", ctx)
    assert error.is_error and error.text == "cannot parse [redacted] here"


async def test_execute_without_secrets_leaves_the_text_alone(ctx: ToolContext) -> None:
    assert "sk-live-0123456789" in (await _run("leak", ctx)).text


async def test_execute_lets_cancellation_propagate(ctx: ToolContext) -> None:
    task = asyncio.create_task(_run("cancel", ctx))
    await asyncio.sleep(0.05)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


def test_duplicate_tool_names_are_a_bug() -> None:
    with pytest.raises(ValueError, match="duplicate"):
        ToolRegistry([_Boom(), _Boom()])


def test_registry_needs_no_workspace(tmp_path: Path) -> None:
    assert default_registry().get("nope") is None
    assert default_registry().names()[0] == "read"


@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
def test_non_finite_json_constants_are_refused(constant: str) -> None:
    result = default_registry().prepare(_call("bash", f'{{"command": "echo hi", "timeout": {constant}}}'))
    assert isinstance(result, ToolResult) and result.is_error
    assert f"{constant.lstrip('-')} is not a JSON number" in result.text


def test_finite_numbers_still_pass() -> None:
    assert isinstance(default_registry().prepare(_call("bash", '{"command": "echo hi", "timeout": 1.5}')), PreparedCall)


def test_non_finite_numbers_fail_validation() -> None:
    from minicode.tools.validate import validate_arguments

    schema = {"type": "object", "properties": {"n": {"type": "number", "minimum": 0}}}
    for value in (float("nan"), float("inf")):
        problems, cleaned = validate_arguments(schema, {"n": value})
        assert problems == [f"'n' must be a finite number, got {value}"] and "n" not in cleaned
    assert validate_arguments(schema, {"n": 2.5}) == ([], {"n": 2.5})


async def test_check_reports_a_doomed_edit_and_passes_a_good_one(tmp_path: Path) -> None:
    from minicode.tools.read import ReadTool

    ws = tmp_path.resolve()
    (ws / "a.txt").write_text("hello\n")
    ctx = ToolContext(workspace=ws, env={})
    registry = default_registry()
    edit = registry.prepare(_call("edit", '{"path": "a.txt", "old_text": "hello", "new_text": "bye"}'))
    assert isinstance(edit, PreparedCall)
    doomed = await registry.check(edit, ctx)
    assert doomed is not None and doomed.is_error and "read" in doomed.text
    await ReadTool().run({"path": "a.txt"}, ctx)
    assert await registry.check(edit, ctx) is None
    assert (ws / "a.txt").read_text() == "hello\n"  # checking never writes
    bash = registry.prepare(_call("bash", '{"command": "true"}'))
    assert isinstance(bash, PreparedCall) and await registry.check(bash, ctx) is None
