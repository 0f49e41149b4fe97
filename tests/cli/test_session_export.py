"""``--export``: the conversation as Markdown (quotes, answers, tool calls, cut results)."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from minicode.agent.deps import ToolOutcome
from minicode.cli.session_export import RESULT_CHARS, run_export
from minicode.errors import SessionError
from minicode.provider.types import Message, ToolCall
from minicode.session.store import SessionStore


def _session(ws: Path, *messages: tuple[Message, ToolOutcome | None]) -> str:
    store, sid = SessionStore.create(ws)
    for message, outcome in messages:
        store.append_message(message, outcome)
    store.close()
    return sid


def _export(ws: Path, sid: str) -> str:
    out, err = io.StringIO(), io.StringIO()
    assert run_export(ws, sid[:10], out, err) == 0
    return out.getvalue()


def test_a_conversation_with_tool_calls(workspace: Path) -> None:
    calls = (
        ToolCall("c1", "bash", json.dumps({"command": "pytest -q"})),
        ToolCall("c2", "edit", json.dumps({"path": "a.py", "old_text": "x = 1", "new_text": "x = 2"})),
        ToolCall("c3", "read", json.dumps({"path": "b.py", "offset": 10})),
        ToolCall("c4", "write", json.dumps({"path": "c.md", "content": "# title\n```\ncode\n```\n"})),
    )
    sid = _session(
        workspace,
        (Message.user("# fix it\nplease"), None),
        (Message(role="assistant", content="Looking.", tool_calls=calls, reasoning="secret thoughts"), None),
        (Message.tool("c1", "1 failed\n[exit code 1]"), ToolOutcome(True, 1)),
        (Message.tool("c2", "Edited a.py"), ToolOutcome(False)),
        (Message.tool("c3", "10\tline"), ToolOutcome(False)),
        (Message.tool("c4", "Created c.md"), ToolOutcome(False)),
        (Message(role="assistant", content="**Fixed** it."), None),
    )
    md = _export(workspace, sid)
    assert md.startswith(f"# minicode session {sid}\n")
    assert "## User\n\n> ### fix it\n> please\n" in md  # below the turn's own "## User"
    assert "## Assistant\n\nLooking.\n" in md and "**Fixed** it." in md
    assert "**Tool call** `bash`:\n\n```sh\npytest -q\n```" in md
    assert "bash result (exit 1):\n\n```text\n1 failed\n[exit code 1]\n```" in md
    assert "**Tool call** `edit` `a.py`:\n\n```diff\n- x = 1\n+ x = 2\n```" in md
    assert "**Tool call** `read` `b.py` — offset: `10`" in md
    assert "````text\n# title\n```\ncode\n```\n````" in md  # a longer fence than the content's
    assert "secret thoughts" not in md
    assert "recovered" not in md


def test_a_call_recovered_from_text_is_marked(workspace: Path) -> None:
    call = ToolCall("text_call_1_1", "read", json.dumps({"path": "b.py"}), from_text=True)
    sid = _session(
        workspace,
        (Message.user("read b.py"), None),
        (Message(role="assistant", content="Let me read it:", tool_calls=(call,)), None),
        (Message.tool("text_call_1_1", "1\tx"), ToolOutcome(False)),
    )
    assert "**Tool call** `read` (recovered from text) `b.py`" in _export(workspace, sid)


def test_long_results_are_cut_saying_how_much(workspace: Path) -> None:
    output = "\n".join(f"line {i}" for i in range(1000))
    sid = _session(
        workspace,
        (Message.user("go"), None),
        (Message(role="assistant", tool_calls=(ToolCall("c1", "bash", '{"command": "seq 1000"}'),)), None),
        (Message.tool("c1", output), ToolOutcome(False, 0)),
        (Message.tool("c9", "x" * 50_000), None),
    )
    md = _export(workspace, sid)
    assert "line 0\n" in md and "line 999\n" in md and "line 500\n" not in md
    assert "[… 970 more lines …]" in md
    assert "x" * RESULT_CHARS in md and "x" * (RESULT_CHARS + 1) not in md and "more characters" in md


def test_rewound_messages_are_left_out(workspace: Path) -> None:
    sid = _session(workspace, (Message.user("one"), None), (Message(role="assistant", content="1"), None),
                   (Message.user("dropped"), None))
    store, _ = SessionStore.open(workspace, sid)
    store.append_rewind(2)
    store.append_message(Message.user("kept"))
    store.close()
    md = _export(workspace, sid)
    assert "dropped" not in md and "> kept" in md and "- messages: 3" in md


def test_unknown_session_is_an_error(workspace: Path) -> None:
    with pytest.raises(SessionError) as e:
        run_export(workspace, "abcdef", io.StringIO(), io.StringIO())
    assert e.value.exit_code == 2


@pytest.mark.parametrize("answer, closing", [
    ("Here:\n```python\nx = 1", "\n```"),
    ("Here:\n~~~~\nx = 1\n~~~", "\n~~~~"),  # a shorter run does not close a longer fence
    ("````md\n```\ninner\n```", "\n````"),
])
def test_an_answer_leaving_a_fence_open_is_closed_so_the_rest_stays_markdown(
        workspace: Path, answer: str, closing: str) -> None:
    sid = _session(workspace, (Message.user("show"), None), (Message(role="assistant", content=answer), None),
                   (Message.user("next"), None))
    md = _export(workspace, sid)
    assert f"## Assistant\n\n{answer}{closing}\n" in md
    assert md.rstrip().endswith("## User\n\n> next")


def test_balanced_fences_and_inline_backticks_are_left_as_they_are() -> None:
    from minicode.cli.session_export import closed_fences

    for text in ("```\ncode\n```", "a ``` b", "  ```sh\nls\n   ```", "~~~\nx\n~~~~~", ""):
        assert closed_fences(text) == text


def test_a_tool_name_cannot_break_out_of_its_markup(workspace: Path) -> None:
    call = ToolCall("c1", "bash`\n## Forged heading", json.dumps({"command": "ls"}))
    sid = _session(workspace, (Message(role="assistant", content="", tool_calls=(call,)), None),
                   (Message.tool("c1", "out"), ToolOutcome(False)))
    md = _export(workspace, sid)
    assert "\n## Forged heading" not in md


def test_the_stopped_note_is_exported_as_minicodes_note_not_as_an_answer(workspace: Path) -> None:
    from minicode.agent.stopped import STOPPED_NOTE, STOPPED_SHOWN

    sid = _session(
        workspace,
        (Message.user("first task"), None),
        (Message(role="assistant", content=STOPPED_NOTE), None),
        (Message.user("second task"), None),
        (Message(role="assistant", content="Done. " + STOPPED_NOTE), None),  # the model's own words
    )
    md = _export(workspace, sid)
    assert f"\n*{STOPPED_SHOWN}*\n" in md
    assert md.count("## Assistant") == 1 and f"Done. {STOPPED_NOTE}" in md
    assert f"## Assistant\n\n{STOPPED_NOTE}" not in md


def test_an_answers_own_headings_sit_below_the_turn_sections(workspace: Path) -> None:
    # trial R10: "# Plan" in an answer was at the level of the document's title and "## Summary"
    # at the level of "## Assistant"
    answer = ("# Plan\n\nintro\n\n## Steps\n\n#### Deep\n\n##### Deeper\n\nSetext\n======\n\n"
              "Two\n---\n\n```md\n# not a heading\n```\n\n#hashtag\n\nmany\nlines\n---")
    sid = _session(workspace, (Message.user("go"), None), (Message(role="assistant", content=answer), None))
    md = _export(workspace, sid)
    headings = [line for line in md.splitlines() if line.startswith("#")]
    assert headings == [f"# minicode session {sid}", "## User", "## Assistant", "### Plan", "#### Steps",
                        "###### Deep", "###### Deeper", "### Setext", "#### Two", "# not a heading", "#hashtag"]
    assert "```md\n# not a heading\n```" in md  # code is left alone
    assert "many\nlines\n---" in md  # a two-line setext paragraph is left as it is


def test_demoting_headings_leaves_an_unclosed_fence_and_odd_lines_alone() -> None:
    from minicode.cli.session_export import closed_fences, demoted_headings

    assert demoted_headings("```\n# x") == "```\n# x"
    assert closed_fences(demoted_headings("```\n# x")) == "```\n# x\n```"
    assert demoted_headings("---\n\n- item\n---\n> q\n===") == "---\n\n- item\n---\n> q\n==="
    assert demoted_headings("") == "" and demoted_headings("   # indented") == "   ### indented"
