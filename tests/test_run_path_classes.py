"""The mutable classes of every run's path (plain slotted classes: ``TaskStats``,
``ToolContext``, ``LoadedSession``, ``Journal``) and the frozen ``ShellContext`` keep the
interface the code relies on: the same constructor, the mutability it needs, fresh mutable
defaults per object, and (where compared) equality and ``repr``."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from minicode.agent.stats import TaskStats
from minicode.permissions.arg_paths import ShellContext
from minicode.session.reader import LoadedSession
from minicode.session.snapshots import Journal
from minicode.tools.base import FileStamp, ToolContext

def test_task_stats_compare_and_show_their_counters() -> None:
    stats = TaskStats(model_calls=2, tool_calls=1)
    assert stats == TaskStats(0.0, 2, 1)
    assert stats != TaskStats(model_calls=2)
    assert stats != "TaskStats"  # another type: not equal, no error
    assert repr(stats).startswith("TaskStats(wall_seconds=0.0, model_calls=2, tool_calls=1,")
    stats.tool_calls += 1
    assert stats.tool_calls == 2
    with pytest.raises(TypeError):
        hash(stats)  # mutable: unhashable, as the dataclass was
    with pytest.raises(TypeError):
        TaskStats(model_call=1)  # type: ignore[call-arg]  # a misspelt counter is an error
    with pytest.raises(AttributeError):
        stats.model_call = 1  # type: ignore[attr-defined]  # slotted: no stray attributes


def test_tool_context_changed_copies_with_the_same_stamps(tmp_path: Path) -> None:
    ctx = ToolContext(tmp_path, {"PATH": "/bin"}, secrets=("sk-1",))
    other = ToolContext(tmp_path, {})
    assert ctx.stamps == {} and ctx.stamps is not other.stamps  # a fresh dict each
    seen: list[str] = []
    quiet = ctx.changed(on_output=seen.append)
    assert quiet is not ctx and quiet.on_output is not None and ctx.on_output is None
    assert (quiet.workspace, quiet.env, quiet.secrets) == (tmp_path, {"PATH": "/bin"}, ("sk-1",))
    quiet.stamps[tmp_path / "a"] = FileStamp(1, 2, "x")
    assert tmp_path / "a" in ctx.stamps  # read tracking is the session's, shared
    ctx.on_output = seen.append  # tests and hooks set fields: it stays mutable
    assert "sk-1" not in repr(ctx)  # no field dump: the secrets stay out of any log


def test_tool_context_changed_refuses_an_unknown_field(tmp_path: Path) -> None:
    with pytest.raises(TypeError):
        ToolContext(tmp_path, {}).changed(on_outptu=print)


def test_loaded_session_and_journal_get_their_own_collections() -> None:
    one, two = LoadedSession("a", ""), LoadedSession("b", "")
    one.checkpoints.append(object())  # type: ignore[arg-type]
    one.warnings.append("w")
    assert two.checkpoints == [] and two.warnings == [] and one.messages is not two.messages
    first, second = Journal(), Journal()
    first.undone.add(1)
    assert second.undone == set() and second.tasks_with_changes() == []
    with pytest.raises(TypeError):
        LoadedSession("a")  # type: ignore[call-arg]  # created is required, as before


def test_shell_context_is_frozen_with_an_environment_of_its_own_by_default() -> None:
    context, other = ShellContext("/w"), ShellContext("/w")
    assert context.env == {} and context.home is None and context == other
    assert context.env is not other.env  # a default never shared: filling one fills no other
    with pytest.raises(dataclasses.FrozenInstanceError):
        context.root = "/"  # type: ignore[misc]
