"""AGENTS.md / CLAUDE.md in the model context: with every request, right after the system
prompt (before memory), reloaded when the file changes, a broken one skipped with a notice."""

from __future__ import annotations

from minicode.agent.approval import AutoApprover
from minicode.agent.events import Notice
from tests.agent.conftest import Events
from tests.agent.scripted import text, tools


async def _turn(session, task: str) -> Events:
    events = Events()
    await session.turn(task, approver=AutoApprover(), emit=events.append)
    return events


async def test_instructions_go_with_every_request_before_memory(open_session, provider, workspace):
    (workspace / "AGENTS.md").write_text("Run tests with make check.\n")
    (workspace / "MiniCode.md").write_text("The app is called Zed.\n")
    provider.script(tools(("ls", {})), text("done"))
    session = await open_session()
    assert session.project_files == ("AGENTS.md (instructions)", "MiniCode.md (memory)")
    await _turn(session, "go")
    for request in provider.requests:
        project = request.messages[1].content or ""
        assert request.messages[0].role == "system"
        assert project.index("Run tests with make check.") < project.index("The app is called Zed.")
    assert all(m.role != "user" or "make check" not in (m.content or "") for m in session.messages)


async def test_an_edited_file_is_reloaded_before_the_next_request(open_session, provider, workspace):
    (workspace / "CLAUDE.md").write_text("old rule\n")
    provider.script(tools(("write", {"path": "CLAUDE.md", "content": "new rule, after the edit\n"})), text("done"))
    session = await open_session()
    events = await _turn(session, "change it")
    assert "old rule" in (provider.requests[0].messages[1].content or "")
    assert "new rule, after the edit" in (provider.requests[1].messages[1].content or "")
    assert [n.text for n in events.of(Notice)] == ["project instructions reloaded from CLAUDE.md"]


async def test_a_broken_file_is_skipped_with_a_warning_and_the_task_runs(open_session, provider, workspace):
    (workspace / "AGENTS.md").write_bytes(b"\xff\xfe broken")
    provider.script(text("fine"), text("still fine"))
    session = await open_session()
    assert session.warnings == ["AGENTS.md is not given to the model: it is not valid UTF-8 (bad byte at offset 0)"]
    assert session.project_files == ()
    await _turn(session, "hello")
    assert provider.requests[0].messages[1].role == "user" and provider.requests[0].messages[1].content == "hello"
    (workspace / "AGENTS.md").write_text("fixed\n")
    events = await _turn(session, "again")
    assert "fixed" in (provider.requests[1].messages[1].content or "")
    assert [n.text for n in events.of(Notice)] == ["project instructions reloaded from AGENTS.md"]
