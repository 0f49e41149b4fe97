"""/rewind through a real session: the conversation continues before a user message, the raw
history stays, resume honours it, files can be restored, and a compaction checkpoint that
summarises rewound messages is never used again."""

from __future__ import annotations

from pathlib import Path

import pytest

from minicode.agent.approval import AutoApprover
from minicode.errors import SessionError
from minicode.session.store import SessionStore
from minicode.session.undo import UndoPlan
from tests.agent.conftest import Events
from tests.agent.scripted import text, tools


async def _task(session, prompt: str) -> None:
    await session.turn(prompt, approver=AutoApprover(), emit=Events().append)


def _contents(request) -> list[str]:
    return [m.content or "" for m in request.messages if m.role != "system"]


async def test_rewind_continues_before_the_message_and_resume_honours_it(open_session, provider, workspace: Path) -> None:
    provider.script(text("one"), text("two"), text("three"), text("again"))
    session = await open_session()
    for prompt in ("first", "second", "third"):
        await _task(session, prompt)
    points = session.rewind_points()
    assert [(p.index, p.text) for p in points] == [(0, "first"), (2, "second"), (4, "third")]
    draft, restored = await session.rewind(2)
    assert draft == "second" and restored is None
    assert [m.content for m in session.messages] == ["first", "one"]
    await _task(session, "second, better")
    assert _contents(provider.requests[-1])[-3:] == ["first", "one", "second, better"]
    raw = session._store.path.read_text()
    assert raw.count('"type":"message"') == 8 and '"type":"rewind","keep":2' in raw  # nothing is lost
    session._store.close()
    resumed = await open_session(resume=session.id)
    assert [m.content for m in resumed.messages] == ["first", "one", "second, better", "again"]


async def test_rewind_to_the_first_message_empties_the_conversation(open_session, provider) -> None:
    provider.script(text("one"), text("fresh"))
    session = await open_session()
    await _task(session, "first")
    draft, _ = await session.rewind(0)
    assert draft == "first" and len(session.messages) == 0
    await _task(session, "new start")
    assert _contents(provider.requests[-1]) == ["new start"]


async def test_rewind_to_something_that_is_not_a_user_message_is_refused(open_session, provider) -> None:
    provider.script(text("one"))
    session = await open_session()
    await _task(session, "first")
    for index in (1, 2, -1):
        with pytest.raises(SessionError):
            await session.rewind(index)
    assert len(session.messages) == 2


async def test_rewind_can_restore_the_files_changed_since(open_session, provider, workspace: Path) -> None:
    (workspace / "a.txt").write_text("original")
    provider.script(
        tools(("write", {"path": "a.txt", "content": "v1"})), text("one"),
        tools(("write", {"path": "a.txt", "content": "v2"}), ("write", {"path": "n.txt", "content": "new"})),
        text("two"),
    )
    session = await open_session()
    await _task(session, "first")
    await _task(session, "second")
    index = session.rewind_points()[1].index
    plan = await session.plan_rewind_files(index)
    assert isinstance(plan, UndoPlan) and {f.path for f in plan.actionable} == {"a.txt", "n.txt"}
    draft, result = await session.rewind(index, plan)
    assert draft == "second" and result is not None
    assert (workspace / "a.txt").read_text() == "v1" and not (workspace / "n.txt").exists()
    everything = await session.plan_rewind_files(0)
    assert isinstance(everything, UndoPlan) and [f.path for f in everything.actionable] == ["a.txt"]


async def test_files_kept_after_a_rewind_are_told_to_the_model(open_session, provider, workspace: Path) -> None:
    (workspace / "a.txt").write_text("original")
    provider.script(tools(("write", {"path": "a.txt", "content": "v1"})), text("one"), text("ok"))
    session = await open_session()
    await _task(session, "first")
    plan = await session.plan_rewind_files(0)
    (workspace / "a.txt").write_text("edited by the user")
    assert isinstance(plan, UndoPlan)
    await session.rewind(0, plan)
    await _task(session, "retry")
    sent = provider.requests[-1].messages[-1].content
    assert "still hold changes made after this point: a.txt" in sent and sent.endswith("\n\nretry")


async def _long_history(session, provider, turns: int, name: str = "question") -> None:
    for i in range(turns):
        provider.script(text(f"answer {i} " + "z" * 40_000))
        await _task(session, f"{name} {i} " + "y" * 40_000)


async def test_a_rewind_past_a_compaction_drops_the_checkpoint(open_session, provider, workspace: Path) -> None:
    session = await open_session()
    await _long_history(session, provider, 6)
    provider.script(text("SUMMARY OF EARLY WORK"))
    await session.compact(emit=Events().append)
    checkpoint = session._history.checkpoint
    assert checkpoint is not None and checkpoint.first_kept > 2
    # Rewind to a message the summary covers: the summary would speak of what was rewound.
    await session.rewind(2)
    assert session._history.checkpoint is None and session._context.checkpoint is None
    provider.script(text("fresh answer"))
    await _task(session, "question 1, differently")
    sent = provider.requests[-1].messages
    assert not any("SUMMARY OF EARLY WORK" in (m.content or "") for m in sent)
    assert [m.content[:10] for m in sent if m.role == "user"] == ["question 0", "question 1"]
    session._store.close()
    resumed = await open_session(resume=session.id)
    assert resumed._context.checkpoint is None and len(resumed.messages) == 4


async def test_a_rewind_after_the_kept_part_keeps_the_checkpoint(open_session, provider, workspace: Path) -> None:
    session = await open_session()
    await _long_history(session, provider, 6)
    provider.script(text("SUMMARY OF EARLY WORK"))
    await session.compact(emit=Events().append)
    checkpoint = session._history.checkpoint
    assert checkpoint is not None
    provider.script(text("small answer 0"), text("small answer 1"))
    await _task(session, "small 0")
    await _task(session, "small 1")
    last_user = session.rewind_points()[-1].index
    assert last_user > checkpoint.first_kept
    await session.rewind(last_user)
    assert session._context.checkpoint == checkpoint
    provider.script(text("fine"))
    await _task(session, "small 1, again")
    sent = [m for m in provider.requests[-1].messages if m.role != "system"]
    assert "SUMMARY OF EARLY WORK" in (sent[0].content or "")
    assert [m.content for m in sent[1:]] == [m.content for m in session.messages[checkpoint.first_kept:-1]]
    assert sent[-1].content == "small 1, again" and "small 1" not in [m.content for m in sent]


async def test_a_compaction_after_a_rewind_summarises_only_the_conversation(open_session, provider) -> None:
    session = await open_session()
    await _long_history(session, provider, 4)
    await session.rewind(4)  # drop the last two questions
    await _long_history(session, provider, 3, "redo")
    provider.script(text("NEW SUMMARY"))
    await session.compact(emit=Events().append)
    summarised = provider.chat_requests[-1].messages[-1].content
    assert "question 2 " not in summarised and "question 3 " not in summarised  # the rewound ones
    assert "question 0 " in summarised and "redo 0 " in summarised
    session._store.close()
    _, loaded = SessionStore.open(session.workspace, session.id)
    assert loaded.checkpoint is not None and loaded.checkpoint.summary == "NEW SUMMARY"
