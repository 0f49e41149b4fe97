"""/undo through a real session: write, edit, created files, walking back, files changed since,
commands, damaged copies, and the note the model gets."""

from __future__ import annotations

import os
from pathlib import Path

from minicode.agent.approval import AutoApprover
from minicode.agent.events import Notice, TurnFinished
from minicode.session.undo import Nothing, UndoPlan
from tests.agent.conftest import Events
from tests.agent.scripted import text, tools


async def _task(session, prompt: str) -> None:
    await session.turn(prompt, approver=AutoApprover(), emit=Events().append)


async def test_one_task_with_write_edit_and_a_new_file(open_session, provider, workspace: Path) -> None:
    (workspace / "a.py").write_text("x = 1\ny = 2\n")
    (workspace / "run.sh").write_text("echo old\n")
    os.chmod(workspace / "run.sh", 0o755)
    provider.script(
        tools(("read", {"path": "a.py"})),
        tools(("edit", {"path": "a.py", "old_text": "x = 1", "new_text": "x = 10\nz = 3"}),
              ("write", {"path": "run.sh", "content": "echo new\n"}),
              ("write", {"path": "pkg/new.py", "content": "print(1)\nprint(2)\n"})),
        text("done"),
    )
    session = await open_session()
    await _task(session, "change things")
    plan = await session.plan_undo()
    assert isinstance(plan, UndoPlan) and not plan.ran_commands
    by_path = {f.path: f for f in plan.files}
    assert by_path["a.py"].action == "restore" and (by_path["a.py"].added, by_path["a.py"].removed) == (1, 2)
    assert by_path["run.sh"].action == "restore"
    assert by_path["pkg/new.py"].action == "delete" and by_path["pkg/new.py"].removed == 2
    assert plan.titles == ("change things",)
    result = await session.undo(plan)
    assert sorted(result.restored) == ["a.py", "run.sh"] and result.deleted == ("pkg/new.py",)
    assert (workspace / "a.py").read_text() == "x = 1\ny = 2\n"
    assert (workspace / "run.sh").read_text() == "echo old\n" and os.stat(workspace / "run.sh").st_mode & 0o777 == 0o755
    assert not (workspace / "pkg" / "new.py").exists()
    assert isinstance(await session.plan_undo(), Nothing)


async def test_repeated_undo_walks_back_task_by_task(open_session, provider, workspace: Path) -> None:
    provider.script(
        tools(("write", {"path": "f.txt", "content": "v1\n"})), text("one"),
        tools(("write", {"path": "f.txt", "content": "v2\n"})), text("two"),
    )
    session = await open_session()
    await _task(session, "first")
    await _task(session, "second")
    first = await session.plan_undo()
    assert isinstance(first, UndoPlan) and first.titles == ("second",)
    await session.undo(first)
    assert (workspace / "f.txt").read_text() == "v1\n"
    second = await session.plan_undo()
    assert isinstance(second, UndoPlan) and second.titles == ("first",) and second.files[0].action == "delete"
    await session.undo(second)
    assert not (workspace / "f.txt").exists()
    nothing = await session.plan_undo()
    assert isinstance(nothing, Nothing) and "nothing to undo" in nothing.reason


async def test_a_file_changed_since_is_skipped_with_why(open_session, provider, workspace: Path) -> None:
    provider.script(tools(("write", {"path": "a.txt", "content": "mine"}),
                          ("write", {"path": "b.txt", "content": "also mine"})), text("ok"))
    (workspace / "b.txt").write_text("before")
    session = await open_session()
    await _task(session, "write two")
    (workspace / "a.txt").write_text("the user's edit")
    plan = await session.plan_undo()
    assert isinstance(plan, UndoPlan)
    skipped = {f.path: f for f in plan.files}["a.txt"]
    assert skipped.action == "skip" and "changed since minicode wrote it" in skipped.why
    result = await session.undo(plan)
    assert result.restored == ("b.txt",) and (workspace / "b.txt").read_text() == "before"
    assert (workspace / "a.txt").read_text() == "the user's edit"
    assert [p for p, _ in result.skipped] == ["a.txt"]


async def test_a_change_between_plan_and_apply_is_not_overwritten(open_session, provider, workspace: Path) -> None:
    provider.script(tools(("write", {"path": "a.txt", "content": "mine"})), text("ok"))
    (workspace / "a.txt").write_text("before")
    session = await open_session()
    await _task(session, "write")
    plan = await session.plan_undo()
    (workspace / "a.txt").write_text("typed while the question waited")
    assert isinstance(plan, UndoPlan)
    result = await session.undo(plan)
    assert result.restored == () and "after /undo looked at it" in result.skipped[0][1]
    assert (workspace / "a.txt").read_text() == "typed while the question waited"


async def test_a_bash_only_task_says_commands_are_not_tracked(open_session, provider, workspace: Path) -> None:
    provider.script(tools(("bash", {"command": "echo hi > made-by-bash.txt"})), text("ran it"))
    session = await open_session()
    await _task(session, "run a command")
    assert (workspace / "made-by-bash.txt").exists()
    plan = await session.plan_undo()
    assert isinstance(plan, Nothing)
    assert "nothing to undo" in plan.reason and "bash are not tracked" in plan.reason


async def test_the_turn_end_and_the_commands_note_have_both_landed_when_the_task_reports(
        open_session, provider, workspace: Path) -> None:
    provider.script(tools(("bash", {"command": "true"})), text("ran it"))
    session = await open_session()
    seen: list[tuple[bool, bool]] = []

    def on_event(event: object) -> None:
        if isinstance(event, TurnFinished):  # what the frontends report: both files are saved
            journal = (workspace / ".minicode" / "snapshots" / session.id / "journal.jsonl").read_text()
            seen.append(('"turn_end"' in session._store.path.read_text(), '"commands"' in journal))

    await session.turn("run a command", approver=AutoApprover(), emit=on_event)
    assert seen == [(True, True)]


async def test_a_commands_note_that_cannot_be_written_is_said_and_the_turn_end_still_lands(
        open_session, provider, workspace: Path) -> None:
    provider.script(tools(("bash", {"command": "true"})), text("ran it"))
    session = await open_session()
    (workspace / ".minicode" / "snapshots").mkdir(exist_ok=True)
    (workspace / ".minicode" / "snapshots" / session.id).write_text("not a directory")
    events = Events()
    await session.turn("run a command", approver=AutoApprover(), emit=events.append)
    notes = [e.text for e in events if isinstance(e, Notice)]
    assert any(n.startswith("could not note in the undo journal that commands ran") for n in notes), notes
    assert '"turn_end"' in session._store.path.read_text()
    assert isinstance(events[-1], TurnFinished)


async def test_a_task_with_commands_and_writes_says_so(open_session, provider, workspace: Path) -> None:
    provider.script(tools(("write", {"path": "a.txt", "content": "x"})), tools(("bash", {"command": "true"})),
                    text("ok"), tools(("bash", {"command": "true"})), text("later"))
    session = await open_session()
    await _task(session, "mixed")
    await _task(session, "only a command")
    plan = await session.plan_undo()
    assert isinstance(plan, UndoPlan) and plan.ran_commands and plan.later_commands


async def test_a_damaged_copy_is_reported_and_the_rest_restored(open_session, provider, workspace: Path) -> None:
    (workspace / "a.txt").write_text("a before")
    (workspace / "b.txt").write_text("b before")
    provider.script(tools(("write", {"path": "a.txt", "content": "A"}), ("write", {"path": "b.txt", "content": "B"})),
                    text("ok"))
    session = await open_session()
    await _task(session, "write")
    blobs = workspace / ".minicode" / "snapshots" / session.id / "blobs"
    for blob in blobs.iterdir():
        if blob.read_bytes() == b"a before":
            blob.write_bytes(b"bit rot")
    plan = await session.plan_undo()
    assert isinstance(plan, UndoPlan)
    damaged = {f.path: f for f in plan.files}["a.txt"]
    assert damaged.action == "skip" and damaged.damaged and "does not match its checksum" in damaged.why
    result = await session.undo(plan)
    assert result.damaged and result.restored == ("b.txt",)
    assert (workspace / "a.txt").read_text() == "A"


async def test_the_next_message_tells_the_model_what_was_undone(open_session, provider, workspace: Path) -> None:
    provider.script(tools(("write", {"path": "a.txt", "content": "x"})), text("ok"), text("noted"))
    session = await open_session()
    await _task(session, "write")
    plan = await session.plan_undo()
    assert isinstance(plan, UndoPlan)
    await session.undo(plan)
    await _task(session, "what now?")
    sent = provider.requests[-1].messages[-1].content
    assert sent.startswith("[minicode note: the user undid file changes with /undo: deleted a.txt")
    assert sent.endswith("\n\nwhat now?")


async def test_a_link_put_in_place_of_the_file_is_never_restored_through(open_session, provider,
                                                                         workspace: Path) -> None:
    (workspace / "f.txt").write_text("old\n")
    provider.script(tools(("read", {"path": "f.txt"})), tools(("write", {"path": "f.txt", "content": "new\n"})),
                    text("done"))
    session = await open_session()
    await _task(session, "rewrite f")
    os.rename(workspace / "f.txt", workspace / "real.txt")  # same content, now behind a link
    os.symlink("real.txt", workspace / "f.txt")
    plan = await session.plan_undo()
    assert isinstance(plan, UndoPlan) and not plan.actionable
    (skipped,) = plan.files
    assert skipped.action == "skip" and "no longer the file minicode wrote" in skipped.why
    assert "choose a file path" not in skipped.why  # advice meant for the model is not shown
    result = await session.undo(plan)
    assert result.restored == () and (workspace / "real.txt").read_text() == "new\n"
    assert os.path.islink(workspace / "f.txt")


async def test_a_link_made_between_plan_and_apply_is_not_followed(open_session, provider, workspace: Path) -> None:
    (workspace / "f.txt").write_text("old\n")
    provider.script(tools(("read", {"path": "f.txt"})), tools(("write", {"path": "f.txt", "content": "new\n"})),
                    text("done"))
    session = await open_session()
    await _task(session, "rewrite f")
    plan = await session.plan_undo()
    assert isinstance(plan, UndoPlan) and [f.action for f in plan.files] == ["restore"]
    os.rename(workspace / "f.txt", workspace / "real.txt")
    os.symlink("real.txt", workspace / "f.txt")
    result = await session.undo(plan)
    assert result.restored == () and "symbolic link" in result.skipped[0][1]
    assert (workspace / "real.txt").read_text() == "new\n"
