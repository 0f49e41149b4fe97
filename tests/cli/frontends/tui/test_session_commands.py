"""The session commands in the real Application (pipe input, fake session): /undo asks in a
list, /rewind puts the message back into the draft, /model and /think show in the status bar,
/resume and /new switch sessions; the list filters, moves, chooses and cancels."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from minicode.cli.frontends.tui.layout import status_line
from minicode.cli.frontends.tui.picker import Choice, Picker
from minicode.cli.frontends.tui.session_commands import day_group, session_choices
from minicode.provider.types import Message
from minicode.session.catalog import SessionInfo
from minicode.session.undo import FilePlan, Nothing, UndoPlan
from minicode.cli.frontends.tui.approval import ANSWER_GRACE
from tests.cli.frontends.tui.conftest import Harness
from tests.cli.frontends.tui.fake_session import held
from tests.cli.frontends.tui.fake_session import FakeSession

PLAN = UndoPlan(tasks=(4,), titles=("fix it",), ran_commands=True, later_commands=False,
                files=(FilePlan("a.py", "restore", added=2, removed=1), FilePlan("new.py", "delete", removed=3),
                       FilePlan("b.py", "skip", "it was changed since minicode wrote it (by you or another program); not overwritten")))


async def _command(h: Harness, text: str) -> None:
    await h.send(text)


async def test_undo_shows_the_plan_and_restores_after_yes(harness: Harness) -> None:
    harness.session.undo_plans.append(PLAN)
    await _command(harness, "/undo")
    c = harness.controller
    await harness.until(lambda: c.chooser.open)
    shown = harness.screen_text()
    assert "undo the last task (“fix it”): 2 of 3 file(s) can be put back" in shown
    assert "restore a.py (+2 −1)" in shown and "delete  new.py" in shown and "skip    b.py: it was changed" in shown
    assert "also ran commands (bash)" in shown
    assert c.chooser.picker is not None and c.chooser.picker.title == "restore these files?"
    assert c.state() == "choosing"
    harness.clock.advance(ANSWER_GRACE)  # a person reads the question before answering
    await harness.key("enter")
    await harness.until(lambda: c.task is None)
    assert harness.session.undone == [PLAN]
    assert "restored a.py; deleted new.py" in harness.screen_text()
    assert not c.chooser.open and c.app is not None and c.app.layout.has_focus(c.draft)


@pytest.mark.parametrize("key", ["esc", "c-c"])
async def test_undo_cancelled_at_the_question_restores_nothing_and_says_so(harness: Harness, key: str) -> None:
    # trial: Esc said "nothing was restored", Ctrl+C closed the question and said nothing
    harness.session.undo_plans.append(PLAN)
    await _command(harness, "/undo")
    await harness.until(lambda: harness.controller.chooser.open)
    await harness.key(key)
    await harness.until(lambda: harness.controller.task is None)
    assert harness.session.undone == [] and "nothing was restored" in harness.screen_text()
    assert not harness.controller.chooser.open
    assert not harness.runner.done()  # it closed the question, it did not leave


async def test_ctrl_c_while_the_files_are_restored_still_says_what_was_restored(harness: Harness) -> None:
    gate = asyncio.Event()
    harness.session.undo_gate = gate
    harness.session.undo_plans.append(PLAN)
    c = harness.controller
    await _command(harness, "/undo")
    await harness.until(lambda: c.chooser.open)
    harness.clock.advance(ANSWER_GRACE)
    await harness.key("enter")
    await harness.until(lambda: not c.chooser.open)
    await harness.key("c-c")  # the restore is under way (on a thread, it cannot stop half way)
    gate.set()
    await harness.until(lambda: c.task is None)
    assert harness.session.undone == [PLAN] and "restored a.py; deleted new.py" in harness.screen_text()


async def test_undo_with_nothing_to_undo_says_why(harness: Harness) -> None:
    harness.session.undo_plans.append(Nothing("nothing to undo: no file changed. Commands run by bash are not tracked."))
    await _command(harness, "/undo")
    await harness.until(lambda: harness.controller.task is None)
    assert "Commands run by bash are not tracked" in harness.screen_text()
    assert not harness.controller.chooser.open


async def test_undo_with_every_file_changed_since_passes_the_task_over(harness: Harness) -> None:
    stuck = UndoPlan(tasks=(6,), titles=("edit b",), ran_commands=False, later_commands=False,
                     files=(FilePlan("b.py", "skip", "it was changed since minicode wrote it"),))
    harness.session.undo_plans.append(stuck)
    await _command(harness, "/undo")
    await harness.until(lambda: harness.controller.task is None)
    assert harness.session.passed_over == [stuck] and harness.session.undone == []
    assert "goes to the task before it" in harness.screen_text() and "passed over" in harness.screen_text()
    assert not harness.controller.chooser.open  # nothing to ask


async def test_rewind_picks_a_message_and_puts_it_in_the_draft(harness: Harness) -> None:
    s = harness.session
    s.messages[:] = [Message.user("first question"), Message(role="assistant", content="one"),
                     Message.user("second question"), Message(role="assistant", content="two")]
    await _command(harness, "/rewind")
    c = harness.controller
    await harness.until(lambda: c.chooser.open)
    assert [ch.label for ch in c.chooser.picker.shown] == ["second question", "first question"]  # newest first
    await harness.key("down")  # the first question
    await harness.key("enter")
    await harness.until(lambda: c.task is None)
    assert s.rewound == [(0, None)]
    assert c.draft.text == "first question"
    assert "rewound: the conversation continues from before “first question”" in harness.screen_text()


async def test_rewind_offers_to_restore_files(harness: Harness) -> None:
    s = harness.session
    s.messages[:] = [Message.user("make it"), Message(role="assistant", content="made")]
    s.rewind_plan = PLAN
    await _command(harness, "/rewind")
    c = harness.controller
    await harness.until(lambda: c.chooser.open)
    await harness.key("enter")  # the only message
    await harness.until(lambda: c.chooser.open and c.chooser.picker.title.startswith("files were changed"))
    await harness.key("down")  # "rewind the conversation only"
    harness.clock.advance(ANSWER_GRACE)
    await harness.key("enter")
    await harness.until(lambda: c.task is None)
    assert s.rewound == [(0, None)]
    assert s.notes and "kept as they are: a.py, new.py" in s.notes[0]
    assert c.draft.text == "make it"


async def test_filtering_a_list_by_typing(harness: Harness) -> None:
    s = harness.session
    s.messages[:] = [Message.user(f"question about {topic}") for topic in ("parsing", "logging", "parsers")]
    await _command(harness, "/rewind")
    c = harness.controller
    await harness.until(lambda: c.chooser.open)
    await harness.key("p", "a", "r", "s")
    assert [ch.label for ch in c.chooser.picker.shown] == ["question about parsers", "question about parsing"]
    await harness.type("ing")  # a burst (a paste) filters too
    assert [ch.label for ch in c.chooser.picker.shown] == ["question about parsing"]
    assert harness.session.turns == []  # typing into the list sends nothing
    await harness.key("esc")
    await harness.until(lambda: c.task is None)


async def test_model_and_think_switch_and_show_in_the_status_bar(harness: Harness) -> None:
    await _command(harness, "/model bigger-model")
    await harness.until(lambda: harness.controller.task is None)
    await _command(harness, "/think high")
    await harness.until(lambda: harness.controller.task is None)
    assert harness.session.model == "bigger-model" and harness.session.thinking == "high"
    status = "".join(t for _, t in status_line(harness.controller, 120))
    assert "bigger-model · think high" in status
    await _command(harness, "/model two words")
    await harness.until(lambda: harness.controller.task is None)
    assert "contains spaces" in harness.screen_text() and harness.session.model == "bigger-model"


async def test_new_and_resume_switch_sessions(harness: Harness) -> None:
    c = harness.controller
    other = FakeSession(id="aaaa1111-0000-4000-8000-000000000001", messages=[Message.user("old work")],
                        resume_command="minicode --session aaaa1111-0000-4000-8000-000000000001")
    fresh = FakeSession(id="bbbb2222-0000-4000-8000-000000000002", is_new=True)
    opened: list[str | None] = []

    async def open_session(session_id: str | None) -> FakeSession:
        opened.append(session_id)
        return other if session_id else fresh

    c.open_session = open_session
    first = harness.session
    first.messages.append(Message.user("something"))
    await _command(harness, "/resume aaaa")
    await harness.until(lambda: c.session is other)
    assert opened == ["aaaa"] and first.closed
    shown = harness.screen_text()
    assert "› old work" in shown and f"the previous session {first.id[:8]} stays" in shown
    c.tui_approver._session_tools.add("bash")  # "allow every bash command" given in that session
    await _command(harness, "/new")
    await harness.until(lambda: c.session is fresh)
    assert other.closed and "session bbbb2222" in harness.screen_text()
    assert not c.tui_approver._session_tools  # the grant stayed with the session it was given in


def test_picker_lists_groups_and_keeps_the_selection_visible() -> None:
    choices = [Choice(str(i), f"item {i}", group="Today" if i < 5 else "Yesterday") for i in range(30)]
    picker = Picker("choose", choices)
    lines = ["".join(t for _, t in line) for line in picker.lines(40, 10)]
    assert lines[0] == "choose" and lines[2] == "Today" and lines[3].startswith("› item 0")
    picker.move(25)
    lines = ["".join(t for _, t in line) for line in picker.lines(40, 10)]
    assert any(line.startswith("› item 25") for line in lines) and len(lines) == 10
    picker.move(100)
    assert picker.selected is not None and picker.selected.key == "29"
    picker.set_filter("item 7")
    assert [c.key for c in picker.shown] == ["7", "17", "27"] and picker.index == 0  # every word, anywhere
    picker.set_filter("nothing like it")
    assert picker.selected is None and "nothing matches" in "".join(t for _, t in picker.lines(40, 10)[-1])


def test_session_rows_are_grouped_by_day(workspace: Path) -> None:
    now = 1_800_000_000.0
    sessions = [SessionInfo("aaaa1111-0000-4000-8000-000000000001", 2048, int((now - 60) * 1e9), 4, "fix\nit"),
                SessionInfo("bbbb2222-0000-4000-8000-000000000002", 9000, int((now - 90_000) * 1e9), 2, "docs"),
                SessionInfo("cccc3333-0000-4000-8000-000000000003", 9000, int((now - 9 * 86400) * 1e9), 2, "")]
    rows = session_choices(sessions, sessions[0].id, now)
    assert [r.group for r in rows[:2]] == [day_group(now - 60, now), day_group(now - 90_000, now)]
    assert rows[0].label == "fix it" and "aaaa1111" in rows[0].detail and "this session" in rows[0].detail
    assert rows[2].label == "(no text)" and rows[2].group[:3] in ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
    assert day_group(now, now) == "Today" and day_group(now - 86400, now) == "Yesterday"


@pytest.mark.parametrize("typed", ["yes", "res", "y", "the tests please"])
async def test_typed_text_never_answers_the_undo_question(harness: Harness, typed: str) -> None:
    """Finding T17: the question that restores or deletes files is answered only by the
    arrows and Enter; typed text (any word) answers nothing and comes back to the draft."""
    harness.session.undo_plans.append(PLAN)
    await _command(harness, "/undo")
    c = harness.controller
    await harness.until(lambda: c.chooser.open)
    harness.clock.advance(ANSWER_GRACE)
    await harness.type(typed)
    await harness.key("enter")
    harness.clock.advance(ANSWER_GRACE)
    await harness.key("enter")
    assert harness.session.undone == [] and c.chooser.open
    assert [ch.key for ch in c.chooser.picker.shown] == ["yes", "no"]  # never filtered
    assert c.editor.flash_text() == "typed text does not answer this question: ↑↓ choose, Enter answers, Esc cancels"
    await harness.key("esc")
    await harness.until(lambda: c.task is None)
    assert harness.session.undone == [] and "nothing was restored" in harness.screen_text()
    assert c.draft.text == typed  # what was typed is the user's text, kept


async def test_enter_as_the_undo_question_appears_is_ignored_and_says_so(harness: Harness) -> None:
    harness.session.undo_plans.append(PLAN)
    await _command(harness, "/undo")
    c = harness.controller
    await harness.until(lambda: c.chooser.open)
    await harness.key("enter")  # the Enter that ended the previous message, or a hasty one
    assert harness.session.undone == [] and c.chooser.open
    assert c.editor.flash_text() == "Enter ignored: the question just appeared — press Enter again to answer"
    harness.clock.advance(ANSWER_GRACE)
    await harness.key("down", "enter")  # "no"
    await harness.until(lambda: c.task is None)
    assert harness.session.undone == []


async def _at_the_rewind_file_question(harness: Harness) -> None:
    """/rewind to the only message of a task that changed files: its file question is open."""
    harness.session.messages[:] = [Message.user("make it"), Message(role="assistant", content="made")]
    harness.session.rewind_plan = PLAN
    await _command(harness, "/rewind")
    c = harness.controller
    await harness.until(lambda: c.chooser.open)
    await harness.key("enter")
    await harness.until(lambda: c.chooser.open and c.chooser.picker.title.startswith("files were changed"))


async def test_rewind_file_question_ignores_typed_text(harness: Harness) -> None:
    s, c = harness.session, harness.controller
    await _at_the_rewind_file_question(harness)
    harness.clock.advance(ANSWER_GRACE)
    await harness.type("res")
    await harness.key("enter")
    assert s.rewound == [] and c.chooser.open and len(c.chooser.picker.shown) == 3


async def test_ctrl_c_at_the_rewind_file_question_says_the_rewind_was_cancelled(harness: Harness) -> None:
    s, c = harness.session, harness.controller
    await _at_the_rewind_file_question(harness)
    await harness.key("c-c")
    await harness.until(lambda: c.task is None)
    assert s.rewound == [] and "rewind cancelled" in harness.screen_text()


@pytest.mark.parametrize("command", ["/undo", "/rewind", "/resume"])
async def test_a_command_that_asks_is_not_queued_behind_a_running_task(harness: Harness, command: str) -> None:
    c = harness.controller
    gate = asyncio.Event()
    harness.session.scripts.append(held(gate))
    harness.session.undo_plans.append(PLAN)
    await harness.send("long task")
    await harness.until(lambda: c.busy)
    await harness.send(command)
    assert c.queue == [] and c.draft.text == ""  # not queued; Up recalls it
    await harness.key("up")
    assert c.draft.text == command
    await harness.key("c-c")
    assert f"{command} asks a question: wait for the task to end, or press Esc to stop it" in harness.screen_text()
    gate.set()
    await harness.until(lambda: c.task is None)
    assert not c.chooser.open and harness.session.undone == []


async def test_mcp_lists_the_servers_with_state_tools_and_error(harness: Harness, tmp_path: Path) -> None:
    from minicode.config import McpServerConfig
    from minicode.mcp_client.link import RemoteTool, State
    from minicode.mcp_client.manager import McpManager

    manager = McpManager([McpServerConfig(name="git", command=("x",), trust=True),
                          McpServerConfig(name="docs", url="https://docs.example/mcp")], tmp_path)
    git, docs = manager.links.values()
    git.state, git.tools = State.READY, (RemoteTool("git_status", "Status.", {}),)
    docs.state, docs.error = State.FAILED, "did not start within 60 s (startup_timeout)"
    harness.session.mcp = manager  # type: ignore[attr-defined]
    await _command(harness, "/mcp")
    await harness.until(lambda: "docs  failed" in harness.screen_text())
    shown = harness.screen_text()
    assert "git  ready  1 tool  (trusted)" in shown
    assert "docs  failed  did not start within 60 s (startup_timeout)" in shown


async def test_mcp_login_retries_a_server_that_needs_sign_in(harness: Harness, tmp_path: Path) -> None:
    from minicode.config import McpServerConfig
    from minicode.mcp_client.link import State
    from minicode.mcp_client.manager import McpManager

    manager = McpManager([McpServerConfig(name="docs", url="https://docs.example/mcp"),
                          McpServerConfig(name="git", command=("x",))], tmp_path)
    docs, git = manager.links.values()
    docs.state, git.state = State.SIGNIN, State.READY
    harness.session.mcp = manager  # type: ignore[attr-defined]
    await _command(harness, "/mcp login docs")
    await harness.until(lambda: "MCP server docs: signing in" in harness.screen_text())
    assert docs.state is State.CONNECTING and docs.signin.attended  # the person who asked is waited for
    await _command(harness, "/mcp login git")
    await harness.until(lambda: "git is ready: it does not need a sign-in" in harness.screen_text())
    await _command(harness, "/mcp login nope")
    await harness.until(lambda: "usage: /mcp login NAME (the servers: docs, git)" in harness.screen_text())


async def test_mcp_without_servers_says_how_to_add_one(harness: Harness) -> None:
    await _command(harness, "/mcp")
    await harness.until(lambda: "no MCP servers configured" in harness.screen_text())


async def test_skills_lists_each_with_its_origin_and_shows_file_text_harmlessly(harness: Harness, tmp_path: Path) -> None:
    from minicode.tools.skills.library import Skill, SkillLibrary, SkillRoot

    project = SkillRoot(".agents/skills", tmp_path, ".agents/skills", project=True)
    user = SkillRoot("~/.claude/skills", tmp_path / "skills", ".", project=False)
    harness.session.skills = SkillLibrary(  # type: ignore[attr-defined]
        (Skill("deploy", "Deploy \x1b[2Jit.", project, ".agents/skills/deploy"), Skill("review", "Review.", user, "review")),
        ("skill .claude/skills/x/SKILL.md is skipped: its front matter has no name",), (user, project))
    await _command(harness, "/skills")
    await harness.until(lambda: "2 skills" in harness.screen_text())
    shown = " ".join(harness.screen_text().split())
    assert "deploy project (.agents/skills), from the repository: untrusted — Deploy ␛[2Jit." in shown
    assert "review user (~/.claude/skills) — Review." in shown
    assert "! skill .claude/skills/x/SKILL.md is skipped: its front matter has no name" in shown


async def test_skills_without_any_says_so(harness: Harness) -> None:
    await _command(harness, "/skills")
    await harness.until(lambda: "no skills" in harness.screen_text())
