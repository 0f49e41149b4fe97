"""tools/specs.py declares the tools; the registry imports a tool's module at its first use."""

from __future__ import annotations

import importlib
import subprocess
import sys
import textwrap

import pytest

from minicode.provider.types import ToolCall
from minicode.tools.registry import DeferredTool, PreparedCall, default_registry, default_tools
from minicode.tools.specs import DECLARED


@pytest.mark.parametrize("declared", DECLARED, ids=lambda d: d.name)
def test_each_declaration_is_what_its_implementation_says(declared) -> None:
    module, _, name = declared.home.partition(":")
    tool = getattr(importlib.import_module(module), name)()
    assert (tool.name, tool.description, tool.parameters, tool.side_effects) == (
        declared.name, declared.description, declared.parameters, declared.side_effects)


def test_the_registry_offers_the_declarations_in_order() -> None:
    assert [s.name for s in default_registry().specs()] == ["read", "ls", "glob", "grep", "write", "edit", "bash", "agent",
                                                           "ask_user", "todo"]
    # a small model is not offered sub-agents (its sub-agent would be that small model again) or
    # questions; a call by name still finds them
    from minicode.tools.registry import SMALL_MODEL_UNDECLARED

    small = default_registry().undeclaring(SMALL_MODEL_UNDECLARED)
    assert [s.name for s in small.specs()] == ["read", "ls", "glob", "grep", "write", "edit", "bash"]
    assert small.get("agent") is not None and small.get("ask_user") is not None and small.get("todo") is not None
    assert all(isinstance(t, DeferredTool) for t in default_tools())


def test_declaring_imports_no_tool_and_the_first_call_imports_only_its_own() -> None:
    done = subprocess.run([sys.executable, "-c", textwrap.dedent("""
        import sys
        from minicode.provider.types import ToolCall
        from minicode.tools.registry import default_registry
        registry = default_registry()
        registry.specs()
        tools = ("read", "search", "grep", "write", "edit", "bash")
        print(sorted(t for t in tools if f"minicode.tools.{t}" in sys.modules))
        registry.prepare(ToolCall(id="c1", name="read", arguments='{"path": "a.txt"}'))
        print(sorted(t for t in tools if f"minicode.tools.{t}" in sys.modules))
    """)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["[]", "['read']"]


async def test_optional_methods_come_from_the_implementation_and_absent_ones_stay_absent(tmp_path) -> None:
    tools = {t.name: t for t in default_tools()}
    assert callable(getattr(tools["write"], "describe", None))  # write previews a diff
    assert getattr(tools["read"], "describe", None) is None  # read has none: the plain preview is used
    with pytest.raises(AttributeError):
        tools["read"]._private  # noqa: B018 - never forwarded
    prepared = default_registry().prepare(ToolCall(id="c1", name="read", arguments='{"path": "a.txt"}'))
    assert isinstance(prepared, PreparedCall) and prepared.preview.target == "a.txt"


def test_a_declaration_whose_module_is_gone_fails_at_its_call_not_at_start(monkeypatch) -> None:
    from minicode.tools.specs import Declared

    broken = DeferredTool(Declared("read", "d", {"type": "object"}, False, "minicode.tools.no_such_module:Nope"))
    assert broken.name == "read" and broken.side_effects is False  # declaring needs nothing else
    with pytest.raises(ModuleNotFoundError):
        broken.preview({})
