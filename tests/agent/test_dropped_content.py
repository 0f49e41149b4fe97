"""A change that drops content, for a task that only adds: refused (assists.only_adds,
tools.assisted_checks.dropped_content), and through the loop."""

from __future__ import annotations

from dataclasses import replace

import pytest

from minicode.agent.approval import AutoApprover
from minicode.agent.task_names import list_kept, only_adds
from minicode.tools.assisted_checks import dropped_content
from tests.agent.conftest import Events, make_config
from tests.agent.scripted import text, tools

PYPROJECT = '[project]\nname = "fetcher"\ndependencies = ["click>=8"]\n'


@pytest.mark.parametrize(("task", "adds"), [
    ("Add requests to the dependencies in pyproject.toml.", True),
    ("Make git ignore __pycache__ directories and the .env file.", True),
    ("Add a Usage section to README.md", True),
    ("Remove click from the dependencies", False),
    ("Replace click with typer in the dependencies", False),
    ("Set the version in package.json to 1.3.0.", False),
    ("Add requests and drop click", False),
    ("What are the dependencies?", False),
])
def test_which_tasks_only_add(task: str, adds: bool) -> None:
    assert only_adds(task) is adds


def test_what_a_change_leaves_out() -> None:
    assert dropped_content("pyproject.toml", PYPROJECT, PYPROJECT.replace('"click>=8"', '"requests"')) == [
        'project.dependencies: "click>=8"']
    assert dropped_content("pyproject.toml", PYPROJECT, PYPROJECT.replace('"click>=8"', '"click>=8", "requests"')) == []
    assert dropped_content("package.json", '{"files": ["a", "b"]}', '{"files": ["a"]}') == ['files: "b"']
    assert dropped_content(".gitignore", "*.log\n", "__pycache__/\n.env\n") == ["*.log"]
    assert dropped_content("README.md", "# w\n\nCounts.\n", "# w\n\nCounts.\n\n## Usage\n") == []
    assert dropped_content("calc.py", "x = 1\n", "") == []  # Python has its own check
    assert dropped_content("a.json", "{", "{}") == []  # does not parse: the parse check speaks


def _on():  # type: ignore[no-untyped-def]
    config = make_config()
    return replace(config, model=replace(config.model, assists="on"))


async def test_an_edit_of_a_list_that_replaces_what_it_should_add_to_keeps_it(open_session, provider, workspace):
    (workspace / "pyproject.toml").write_text(PYPROJECT)
    swap = ("edit", {"path": "pyproject.toml", "old_text": 'dependencies = ["click>=8"]',
                     "new_text": "dependencies = ['requests>=2.25']"})
    provider.script(tools(swap), text("Added requests."), text("Added requests."))
    session = await open_session(config=_on())
    await session.turn("Add requests to the dependencies in pyproject.toml.", approver=AutoApprover(),
                       emit=Events().append)
    assert (workspace / "pyproject.toml").read_text() == PYPROJECT.replace('"click>=8"', '"click>=8", "requests>=2.25"')
    result = [m.content or "" for m in session.messages if m.role == "tool"][0]
    assert '[kept "click>=8" in the list: the task only adds]' in result


async def test_an_edit_that_drops_and_cannot_be_merged_is_refused(open_session, provider, workspace):
    (workspace / "requirements.txt").write_text("click>=8\nrich\n")
    swap = ("edit", {"path": "requirements.txt", "old_text": "click>=8", "new_text": "requests"})
    provider.script(tools(("read", {"path": "requirements.txt"})), tools(swap), text("Done."), text("Done."))
    session = await open_session(config=_on())
    await session.turn("Add requests to requirements.txt.", approver=AutoApprover(), emit=Events().append)
    assert (workspace / "requirements.txt").read_text() == "click>=8\nrich\n"
    refused = provider.requests[2].messages[-1].content or ""
    assert refused.startswith("edit of requirements.txt refused: this would remove click>=8 from requirements.txt, "
                              "and the task only adds")


async def test_a_write_that_drops_lines_is_refused_and_a_task_that_removes_is_not(open_session, provider, workspace):
    (workspace / ".gitignore").write_text("*.log\n")
    provider.script(tools(("write", {"path": ".gitignore", "content": ".env\n"})), text("Done."), text("Done."))
    session = await open_session(config=_on())
    await session.turn("Make git ignore the .env file.", approver=AutoApprover(), emit=Events().append)
    assert (workspace / ".gitignore").read_text() == "*.log\n"
    refused = [m.content or "" for m in session.messages if m.role == "tool"][0]
    assert refused.startswith("write to .gitignore refused: this would remove *.log from .gitignore")
    provider.script(tools(("write", {"path": ".gitignore", "content": ".env\n"})), text("Done."), text("Done."))
    await session.turn("Replace the .gitignore rules with .env", approver=AutoApprover(), emit=Events().append)
    assert (workspace / ".gitignore").read_text() == ".env\n"


async def test_without_the_assists_nothing_is_refused(open_session, provider, workspace):
    (workspace / "pyproject.toml").write_text(PYPROJECT)
    provider.script(tools(("read", {"path": "pyproject.toml"})),
                    tools(("edit", {"path": "pyproject.toml", "old_text": '["click>=8"]', "new_text": '["requests"]'})),
                    text("Done."))
    session = await open_session()
    await session.turn("Add requests to the dependencies in pyproject.toml.", approver=AutoApprover(),
                       emit=Events().append)
    assert '["requests"]' in (workspace / "pyproject.toml").read_text()


def test_a_lists_dropped_items_are_kept_before_the_new_ones_and_nothing_else_is_touched() -> None:
    assert list_kept('dependencies = ["click>=8"]', "dependencies = ['requests>=2.25']") == (
        'dependencies = ["click>=8", "requests>=2.25"]', ["click>=8"])
    assert list_kept('"ports": [80, 443],', '"ports": [8080],') == ('"ports": [80, 443, 8080],', [80, 443])
    assert list_kept('deps = ["a"]', 'deps = ["a", "b"]') is None  # nothing dropped
    assert list_kept('deps = ["a"]\nmore = ["b"]', 'deps = ["c"]') is None  # more than one line
    assert list_kept('deps = [a]', 'deps = ["b"]') is None  # not a literal
    assert list_kept('deps = [{"a": 1}]', 'deps = [{"b": 2}]') is None  # not plain values
    assert list_kept('x = 1', 'x = ["b"]') is None  # no list before
