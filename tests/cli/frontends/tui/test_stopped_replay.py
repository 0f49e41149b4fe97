"""The note minicode records when a task stopped without an answer (strict role alternation)
replays as minicode's note, never as the model's answer."""

from __future__ import annotations

from pathlib import Path

from minicode.agent.stopped import STOPPED_NOTE, STOPPED_SHOWN, is_stopped_note
from minicode.cli.frontends.tui.history import message_items
from minicode.cli.frontends.tui.items import TextItem
from minicode.cli.frontends.tui.markdown import MarkdownRenderer
from minicode.cli.frontends.tui.view import Transcript
from minicode.provider.types import Message, ToolCall
from minicode.session.store import SessionStore


def _text(transcript: Transcript) -> str:
    lines = transcript.visible(80, 0, 1000)
    return "\n".join("".join(t for _, t in line) for line in lines)


def test_the_note_is_recognised_only_as_minicode_records_it() -> None:
    assert is_stopped_note(Message(role="assistant", content=STOPPED_NOTE))
    assert is_stopped_note(Message(role="assistant", content=STOPPED_NOTE + "\n"))
    assert not is_stopped_note(Message.user(STOPPED_NOTE))
    assert not is_stopped_note(Message(role="assistant", content="So: " + STOPPED_NOTE))
    call = ToolCall("c1", "bash", '{"command": "ls"}')
    assert not is_stopped_note(Message(role="assistant", content=STOPPED_NOTE, tool_calls=(call,)))


def test_a_resumed_session_shows_the_note_as_minicodes(workspace: Path) -> None:
    store, sid = SessionStore.create(workspace)
    for message in (Message.user("first task"), Message(role="assistant", content=STOPPED_NOTE),
                    Message.user("second task"), Message(role="assistant", content="All done.")):
        store.append_message(message)
    store.close()
    store, loaded = SessionStore.open(workspace, sid)
    transcript = Transcript(MarkdownRenderer(), str(workspace))
    transcript.replay(loaded.messages, loaded.outcomes)
    shown = _text(transcript)
    assert f"■ {STOPPED_SHOWN}" in shown and "All done." in shown
    assert "That task stopped before I could finish it" not in shown
    store.close()


def test_an_answer_that_only_quotes_the_note_stays_the_models_answer() -> None:
    items = message_items(Message(role="assistant", content="I said: " + STOPPED_NOTE), {}, {})
    assert len(items) == 1 and not isinstance(items[0], TextItem)
