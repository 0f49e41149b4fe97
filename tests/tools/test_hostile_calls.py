"""No tool input ends the task: hostile names, argument text and values, and tools whose
validation, check, preview or run raises anything, all become error results that say why."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Mapping

import pytest

from minicode.jsonsafe import TooDeep, check_depth, loads
from minicode.provider.types import ToolCall
from minicode.tools.base import ToolContext, ToolPreview, ToolResult
from minicode.tools.registry import PreparedCall, ToolRegistry, default_registry


def _prepare(name: Any, arguments: Any) -> PreparedCall | ToolResult:
    return default_registry().prepare(ToolCall(id="c1", name=name, arguments=arguments))


async def _run(ctx: ToolContext, name: str, arguments: str) -> ToolResult:
    registry = default_registry()
    prepared = registry.prepare(ToolCall(id="c1", name=name, arguments=arguments))
    if isinstance(prepared, ToolResult):
        return prepared
    prepared = await registry.describe(prepared, ctx)
    refused = await registry.check(prepared, ctx)
    return refused if refused is not None else await registry.execute(prepared, ctx)


def test_arguments_nested_100000_deep_are_refused_without_recursion() -> None:
    result = _prepare("read", "[" * 100_000 + "]" * 100_000)
    assert isinstance(result, ToolResult) and result.is_error
    assert "deeper than 64 levels" in result.text
    inside_object = _prepare("read", '{"path": ' + "[" * 5000 + "]" * 5000 + "}")
    assert isinstance(inside_object, ToolResult) and "deeper than 64 levels" in inside_object.text


def test_depth_scan_ignores_brackets_inside_strings_and_allows_normal_nesting() -> None:
    content = "[[[{{{" * 10_000
    args = json.dumps({"path": "a.txt", "content": content})
    assert not isinstance(_prepare("write", args), ToolResult)
    check_depth("[" * 64 + "]" * 64)
    with pytest.raises(TooDeep):
        check_depth("[" * 65 + "]" * 65)
    with pytest.raises(TooDeep):
        loads(b'{"a": ' + b"[" * 70 + b"]" * 70 + b"}")


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        ('{"path": "a", "content": "\\ud800"}', "lone surrogate \\ud800 at position 0"),
        ('{"path": "a\\udfff", "content": "x"}', "'path' contains an invalid character"),
        ('{"path": "a", "content": NaN}', "NaN is not a JSON number"),
        ('["a.txt"]', "must be a JSON object, got an array"),
        ('"a.txt"', "must be a JSON object, got a string"),
        ('{"path": ', "not valid JSON"),
        ('{"path": "a", "content": "x", ' + ", ".join(f'"k{i}": 1' for i in range(50)) + "}", "and 40 more"),
    ],
)
def test_bad_argument_text_gets_a_message(arguments: str, expected: str) -> None:
    result = _prepare("write", arguments)
    assert isinstance(result, ToolResult) and result.is_error
    assert expected in result.text
    result.text.encode("utf-8")  # the message itself is valid Unicode


@pytest.mark.parametrize("name", [None, 42, "", "x" * 10_000, "\x1b]0;PWNED\x07", "read\ud800", "READ"])
def test_hostile_tool_names_are_unknown_tools(name: Any) -> None:
    result = _prepare(name, "{}")
    assert isinstance(result, ToolResult) and result.is_error
    assert "available tools: agent, ask_user, bash, edit, glob, grep, ls, read, todo, write" in result.text
    assert len(result.text) < 300  # a 10,000-character name is not echoed whole
    assert "\x1b" not in result.text  # shown as an escape, never sent raw to a terminal
    result.text.encode("utf-8")


def test_arguments_that_are_not_text_are_refused() -> None:
    result = _prepare("read", {"path": "a.txt"})
    assert isinstance(result, ToolResult) and "must be a JSON object in a string" in result.text


async def test_a_5000_character_file_name_is_refused_with_a_message(ctx: ToolContext, ws: Path) -> None:
    result = await _run(ctx, "write", json.dumps({"path": "a" * 5000, "content": "x"}))
    assert result.is_error and "paths are limited to 4,096 bytes" in result.text
    result = await _run(ctx, "write", json.dumps({"path": "sub/" + "é" * 200, "content": "x"}))
    assert result.is_error and "a name in the path is 400 bytes long" in result.text
    deep = "/".join(["d" * 200] * 30)
    result = await _run(ctx, "write", json.dumps({"path": deep, "content": "x"}))
    assert result.is_error and "paths are limited to 4,096 bytes" in result.text
    for tool in ("read", "ls", "glob", "grep", "edit"):
        args = {"path": "b" * 300, "pattern": "x", "old_text": "a", "new_text": "b"}
        allowed = {"read": ("path",), "ls": ("path",), "glob": ("pattern", "path"), "grep": ("pattern", "path"),
                   "edit": ("path", "old_text", "new_text")}[tool]
        result = await _run(ctx, tool, json.dumps({k: args[k] for k in allowed}))
        assert result.is_error and "limited to 255 bytes" in result.text, (tool, result.text)
    assert list(ws.iterdir()) == []


async def test_a_lone_surrogate_never_reaches_a_file(ctx: ToolContext, ws: Path) -> None:
    result = await _run(ctx, "write", '{"path": "a.txt", "content": "ok \\ud83d"}')
    assert result.is_error and "lone surrogate" in result.text
    assert not (ws / "a.txt").exists()
    emoji = await _run(ctx, "write", '{"path": "a.txt", "content": "ok \\ud83d\\ude00"}')  # a proper pair
    assert not emoji.is_error and (ws / "a.txt").read_text(encoding="utf-8") == "ok \U0001f600"


async def test_a_nul_in_a_command_is_a_result(ctx: ToolContext) -> None:
    result = await _run(ctx, "bash", json.dumps({"command": "echo a\x00b"}))
    assert result.is_error and "NUL byte" in result.text


class _Exploding:
    """A tool whose every hook raises something other than ToolError."""

    name = "boom"
    description = "explodes"
    parameters: Mapping[str, Any] = {"type": "object", "properties": {"x": {"type": "string"}}}
    side_effects = True

    def __init__(self, where: str) -> None:
        self.where = where

    def _maybe(self, where: str) -> None:
        if self.where == where:
            raise OSError(22, "Invalid argument")

    def preview(self, args: Mapping[str, Any]) -> ToolPreview:
        self._maybe("preview")
        return ToolPreview("t")

    async def describe(self, args: Mapping[str, Any], ctx: ToolContext) -> ToolPreview:
        self._maybe("describe")
        return ToolPreview("described")

    async def precheck(self, args: Mapping[str, Any], ctx: ToolContext) -> None:
        self._maybe("precheck")

    async def run(self, args: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
        self._maybe("run")
        return ToolResult("fine")


@pytest.mark.parametrize("where", ["preview", "describe", "precheck", "run"])
async def test_any_exception_from_any_hook_becomes_a_result(where: str, ctx: ToolContext) -> None:
    registry = ToolRegistry([_Exploding(where)])
    prepared = registry.prepare(ToolCall(id="c", name="boom", arguments='{"x": "1"}'))
    if where == "preview":
        assert isinstance(prepared, ToolResult) and prepared.is_error
        assert "could not be checked: OSError: [Errno 22] Invalid argument" in prepared.text
        return
    assert isinstance(prepared, PreparedCall)
    described = await registry.describe(prepared, ctx)
    assert described.preview.target == ("t" if where == "describe" else "described")
    checked = await registry.check(described, ctx)
    if where == "precheck":
        assert checked is not None and checked.is_error and checked.summary == "internal error"
        assert checked.text == "the boom tool failed unexpectedly: OSError: [Errno 22] Invalid argument"
        return
    assert checked is None
    result = await registry.execute(described, ctx)
    assert result.is_error == (where == "run")
