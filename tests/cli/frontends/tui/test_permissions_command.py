"""/permissions in the full-screen session: numbered rules with their files, removal of a
saved rule (by number or text), read-only rules named with their file; the opening lines
name the project files and count the rules."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput

from minicode.cli.frontends.tui.app import create_application, run_controller
from minicode.cli.frontends.tui.controller import Controller
from minicode.cli.frontends.tui.markdown import MarkdownRenderer
from minicode.permissions.rules import Effect, Origin, SourcedRule, parse_rule
from minicode.permissions.store import PROJECT_RULES_FILE, PermissionStore
from tests.cli.frontends.tui.conftest import FakeClock, Harness
from tests.cli.frontends.tui.fake_session import FakeSession


def _flat(harness: Harness) -> str:
    """The transcript with wrapping and column padding undone (the view is 80 cells wide)."""
    return " ".join(harness.screen_text().replace("-\n", "-").split())


@pytest.fixture
async def rules_harness(workspace: Path) -> AsyncIterator[Harness]:
    config = workspace / "config" / "config.toml"
    store = PermissionStore(workspace, [SourcedRule(parse_rule("bash(rm *)"), Effect.DENY, Origin.CONFIG, config)])
    store.remember("bash(pytest *)")
    session = FakeSession(workspace=workspace, permissions=store,
                          project_files=("AGENTS.md (instructions)", "MiniCode.md (memory)"))
    with create_pipe_input() as pipe:
        clock = FakeClock()
        controller = Controller(session, MarkdownRenderer(), clock=clock)
        controller.start()
        app = create_application(controller, input=pipe, output=DummyOutput())
        runner = asyncio.ensure_future(run_controller(controller, app))
        harness = Harness(session, controller, pipe, runner, clock)
        await harness.until(lambda: app.is_running and app.render_counter > 0)
        try:
            yield harness
        finally:
            if not runner.done():
                controller.exit(0)
                await asyncio.wait_for(runner, 5)


async def test_the_opening_lines_name_project_files_and_rules(rules_harness: Harness) -> None:
    shown = _flat(rules_harness)
    assert "project files: AGENTS.md (instructions), MiniCode.md (memory)" in shown
    assert "permission rules: 1 allow, 1 deny (/permissions lists them)" in shown


async def test_permissions_lists_rules_with_their_files(rules_harness: Harness) -> None:
    await rules_harness.send("/permissions")
    shown = _flat(rules_harness)
    assert "1 deny bash(rm *) config/config.toml" in shown
    assert "2 allow bash(pytest *) .minicode/local/permissions.toml (saved here: removable)" in shown
    assert rules_harness.session.turns == []  # nothing was sent to the model


async def test_remove_by_number_and_a_read_only_rule_names_its_file(rules_harness: Harness, workspace: Path) -> None:
    await rules_harness.send("/permissions remove 1")
    await rules_harness.until(lambda: "edit that file to remove it" in _flat(rules_harness))
    assert "bash(rm *) comes from " in _flat(rules_harness)
    await rules_harness.send("/permissions remove 2")
    await rules_harness.until(lambda: "removed allow rule bash(pytest *)" in _flat(rules_harness))
    assert "pytest" not in (workspace / PROJECT_RULES_FILE).read_text()
    await rules_harness.send("/permissions remove 9")
    await rules_harness.until(lambda: "no rule number 9" in _flat(rules_harness))
    await rules_harness.send("/permissions frobnicate")
    await rules_harness.until(lambda: "/permissions remove N (or RULE)" in _flat(rules_harness))


async def test_trust_in_the_full_screen_session(rules_harness: Harness, workspace: Path) -> None:
    # the fixture's store has no HOME to keep a record in: trusting re-reads the file as it is
    (workspace / PROJECT_RULES_FILE).write_text('[permissions]\nallow = ["bash(make *)"]\n')
    await rules_harness.send("/permissions trust")
    await rules_harness.until(lambda: "in effect: bash(make *)" in _flat(rules_harness))
    assert rules_harness.session.permissions.check("bash", {"command": "make"}).rule == "bash(make *)"
    (workspace / PROJECT_RULES_FILE).write_text('[permissions]\nallow = ["bash(make *"]\n')
    await rules_harness.send("/permissions trust")
    await rules_harness.until(lambda: "[permissions].allow entry 1" in _flat(rules_harness))
