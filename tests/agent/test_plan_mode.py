"""agent/plan_mode.PlanningTools: only tools without side effects are declared and run; a
call by name to any other (a remembered write, an MCP tool) is refused before it is prepared."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any, Mapping

from minicode.provider.types import ToolCall
from minicode.agent.plan_mode import PlanningTools
from minicode.tools.base import ToolContext, ToolPreview, ToolResult
from minicode.tools.registry import PreparedCall, ToolRegistry, default_tools


class _Remote:
    """An MCP-like tool reached by name only (``server__tool``), with side effects."""

    name = "srv__delete_all"
    description = ""
    parameters: Mapping[str, Any] = {"type": "object"}
    side_effects = True
    raw_arguments = True
    ran = False

    def preview(self, args: Mapping[str, Any]) -> ToolPreview:
        return ToolPreview("srv")

    async def run(self, args: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
        _Remote.ran = True
        return ToolResult("deleted")


class _Named:
    def resolve(self, name: str) -> _Remote | None:
        return _Remote() if name == _Remote.name else None


def test_only_read_only_tools_are_declared() -> None:
    planning = PlanningTools(ToolRegistry(default_tools(), named=_Named()))
    assert [s.name for s in planning.specs()] == ["read", "ls", "glob", "grep", "agent", "ask_user", "todo"]


def test_side_effect_calls_by_name_are_refused_and_read_only_ones_run(tmp_path: Path) -> None:
    planning = PlanningTools(ToolRegistry(default_tools(), named=_Named()))
    for name, args in (("write", '{"path": "a", "content": "x"}'), ("bash", '{"command": "true"}'),
                       (_Remote.name, "{}")):
        refused = planning.prepare(ToolCall("c1", name, args))
        assert isinstance(refused, ToolResult) and refused.is_error and refused.summary == "refused: plan mode"
        assert refused.text.startswith(f"refused: {name} is not available in plan mode")
    (tmp_path / "a.txt").write_text("hello\n")
    read = planning.prepare(ToolCall("c2", "read", '{"path": "a.txt"}'))
    assert isinstance(read, PreparedCall)
    result = asyncio.run(planning.execute(read, ToolContext(workspace=tmp_path, env={})))
    assert "hello" in result.text and not _Remote.ran
    # an invalid call is still the registry's own message
    bad = planning.prepare(ToolCall("c3", "read", "{}"))
    assert isinstance(bad, ToolResult) and "missing required field 'path'" in bad.text


def test_todo_left_undeclared_for_a_small_model_is_declared_while_planning() -> None:
    from minicode.tools.registry import SMALL_MODEL_UNDECLARED

    small = ToolRegistry(default_tools()).undeclaring(SMALL_MODEL_UNDECLARED)
    assert "todo" not in [s.name for s in small.specs()]
    assert [s.name for s in PlanningTools(small).specs()] == ["read", "ls", "glob", "grep", "todo"]
