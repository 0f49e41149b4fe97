"""A resumed session's earlier conversation in the transcript, rendered lazily."""

from __future__ import annotations

from minicode.agent.deps import ToolOutcome
from minicode.cli.frontends.tui.markdown import MarkdownRenderer
from minicode.cli.frontends.tui.controller import Controller
from minicode.cli.frontends.tui.view import plain_text
from minicode.provider.types import Message, ToolCall
from tests.cli.frontends.tui.fake_session import FakeSession


def _conversation() -> list[Message]:
    return [
        Message.system("you are minicode"),
        Message.user("fix the build"),
        Message(role="assistant", content=None, tool_calls=(
            ToolCall("c1", "bash", '{"command": "make"}'),
            ToolCall("c2", "write", '{"path": "Makefile", "content": "x"}'),
        )),
        Message.tool("c1", "exit code 2\nmake: *** error"),
        Message.tool("c2", "denied by the user: not now"),
        Message(role="assistant", content="The build is **fixed**."),
    ]


def _screen(c: Controller, width: int = 80) -> str:
    lines = c.transcript.visible(width, 0, c.transcript.total_lines(width) + 10)
    return "\n".join("".join(t for _, t in line).rstrip() for line in lines)


def test_resumed_history_is_replayed_under_a_resumed_line() -> None:
    c = Controller(FakeSession(messages=_conversation()), MarkdownRenderer())
    c.start()
    shown = _screen(c)
    assert "↺ resumed session · 6 messages" in shown
    after = shown[shown.index("resumed session"):]
    assert "› fix the build" in after and "The build is fixed." in after  # Markdown rendered
    assert "✓ bash make" in after and "✗ write Makefile  — denied" in after
    assert "you are minicode" not in shown
    assert after.index("fix the build") < after.index("bash make") < after.index("The build is")


def test_a_new_session_shows_no_resumed_line_and_the_exit_printout_leaves_history_out() -> None:
    fresh = Controller(FakeSession(), MarkdownRenderer())
    fresh.start()
    assert "resumed" not in _screen(fresh)
    resumed = Controller(FakeSession(messages=_conversation()), MarkdownRenderer())
    resumed.start()
    resumed.transcript.note("new words", "class:user", "› ")
    printed = plain_text(resumed.transcript, 80)
    assert "resumed session · 6 messages" in printed and "› new words" in printed
    assert "fix the build" not in printed  # printed when it happened, not again


def test_a_long_history_renders_only_what_is_on_screen() -> None:
    messages = [Message(role="user" if n % 2 == 0 else "assistant", content=f"earlier message {n}: **x**")
                for n in range(1000)]
    md = MarkdownRenderer()
    c = Controller(FakeSession(messages=messages), md)
    c.start()
    total = c.transcript.total_lines(100)
    bottom = c.transcript.visible(100, max(0, total - 30), 30)
    assert md.renders < 20  # only the answers near the bottom, not 500 of them
    text = "\n".join("".join(t for _, t in line) for line in bottom)
    assert "earlier message 999: x" in text
    top = c.transcript.visible(100, 0, 30)
    assert "earlier message 0: **x**" in "\n".join("".join(t for _, t in line) for line in top)
    assert md.renders < 40


def test_replayed_commands_that_failed_or_were_interrupted_are_marked_failed() -> None:
    messages = [
        Message.user("check"),
        Message(role="assistant", content=None, tool_calls=(
            ToolCall("c1", "bash", '{"command": "pytest"}'),
            ToolCall("c2", "bash", '{"command": "true"}'),
            ToolCall("c3", "bash", '{"command": "sleep 30"}'),
            ToolCall("c4", "bash", '{"command": "yes"}'),
            ToolCall("c5", "bash", '{"command": "echo [exit code 3] is fine"}'),
        )),
        Message.tool("c1", "Traceback (most recent call last):\nAssertionError: 4\n[exit code 1]"),
        Message.tool("c2", "[exit code 0]"),
        Message.tool("c3", "interrupted: the task stopped before this tool call finished"),
        Message.tool("c4", "y\ny\n[timed out after 5 s; the process group was killed]"),
        Message.tool("c5", "[exit code 3] is fine\n[exit code 0]"),
    ]
    c = Controller(FakeSession(messages=messages), MarkdownRenderer())
    c.start()
    shown = _screen(c)
    assert "✗ bash pytest  — failed" in shown
    assert "✓ bash true" in shown
    assert "✗ bash sleep 30  — failed" in shown
    assert "✗ bash yes  — failed" in shown
    assert "✓ bash echo [exit code 3] is fine" in shown


def _bash_calls() -> list[Message]:
    return [
        Message.user("check"),
        Message(role="assistant", content=None, tool_calls=(
            ToolCall("c1", "bash", '{"command": "pytest"}'),
            ToolCall("c2", "bash", '{"command": "make"}'),
            ToolCall("c3", "read", '{"path": "gone.py"}'),
            ToolCall("c4", "bash", '{"command": "ls"}'),
        )),
        # texts that the old heuristic would misjudge: the recorded outcome decides
        Message.tool("c1", "3 failed, 10 passed"),
        Message.tool("c2", "error: nothing wrong, just a word"),
        Message.tool("c3", "no such file"),
        Message.tool("c4", "error.log\n[exit code 2]"),
    ]


def test_recorded_outcomes_mark_failed_calls_with_their_exit_code() -> None:
    outcomes = {"c1": ToolOutcome(True, 1), "c2": ToolOutcome(False, 0), "c3": ToolOutcome(True, None),
                "c4": ToolOutcome(False, 0)}
    c = Controller(FakeSession(messages=_bash_calls(), outcomes=outcomes), MarkdownRenderer())
    c.start()
    shown = _screen(c)
    assert "✗ bash pytest  — failed · exit 1" in shown
    assert "✓ bash make\n" in shown + "\n" and "bash make  —" not in shown
    assert "✗ read gone.py  — failed\n" in shown + "\n"
    assert "✓ bash ls" in shown and "bash ls  —" not in shown


def test_without_recorded_outcomes_the_result_text_decides() -> None:
    # an older session file: no outcomes at all, or only for some calls
    c = Controller(FakeSession(messages=_bash_calls(), outcomes={"c1": ToolOutcome(True, 4)}),
                   MarkdownRenderer())
    c.start()
    shown = _screen(c)
    assert "✗ bash pytest  — failed · exit 4" in shown
    assert "✗ bash make  — failed" in shown  # "error…" at the start reads as a failure
    assert "✓ read gone.py" in shown and "gone.py  —" not in shown
    assert "✗ bash ls  — failed" in shown  # the closing [exit code 2]
    assert "exit 2" not in shown  # a guess from the text carries no exit code


def test_a_long_replayed_user_message_is_collapsed_to_its_first_lines() -> None:
    paste = "\n".join(f"row {i}" for i in range(1, 2501))
    c = Controller(FakeSession(messages=[Message.user(paste), Message(role="assistant", content="ok")]),
                   MarkdownRenderer())
    c.start()
    shown = _screen(c)
    assert "› row 1\n" in shown and "  row 20\n" in shown
    assert "row 21" not in shown and "row 2500" not in shown
    assert "[… 2,480 more lines]" in shown
    assert c.transcript.total_lines(80) < 40


def test_a_replayed_user_message_of_twenty_lines_is_shown_whole() -> None:
    text = "\n".join(f"row {i}" for i in range(1, 21))
    c = Controller(FakeSession(messages=[Message.user(text)]), MarkdownRenderer())
    c.start()
    shown = _screen(c)
    assert "row 20" in shown and "more lines" not in shown


def _recorded_calls() -> tuple[list[Message], dict[str, ToolOutcome]]:
    messages = [
        Message.user("go"),
        Message(role="assistant", content=None, tool_calls=(
            ToolCall("c1", "bash", '{"command": "pytest"}'),
            ToolCall("c2", "edit", '{"path": "a.py", "old_text": "x = 1", "new_text": "x = 2"}'),
            ToolCall("c3", "write", '{"path": "b.py", "content": "y"}'),
            ToolCall("c4", "bash", '{"command": "for i in 1 2 3 4 5; do echo tick $i; sleep 1; done"}'),
            ToolCall("c5", "ls", "{}"),
        )),
        Message.tool("c1", "FAILED test_x\n2 failed\n[exit code 2]"),
        Message.tool("c2", "1 replacement"),
        Message.tool("c3", "denied by the user: use the other file"),
        Message.tool("c4", "interrupted after 4.9 s; output so far:\ntick 1\ntick 2\ntick 3\ntick 4\ntick 5"),
        Message.tool("c5", "interrupted: the task stopped before this tool call finished"),
    ]
    outcomes = {
        "c1": ToolOutcome(True, 2, "failed", 2.34, "exit 2"),
        "c2": ToolOutcome(False, None, "done", 0.01, "1 replacement", "@@ -1 +1 @@\n-x = 1\n+x = 2"),
        "c3": ToolOutcome(True, None, "denied"),
        "c4": ToolOutcome(True, None, "interrupted", 4.9, "interrupted after 4.9 s"),
        "c5": ToolOutcome(True, None, "interrupted"),
    }
    return messages, outcomes


def test_replay_shows_each_call_as_it_ended_with_duration_diff_reason_and_output() -> None:
    messages, outcomes = _recorded_calls()
    c = Controller(FakeSession(messages=messages, outcomes=outcomes), MarkdownRenderer())
    c.start()
    shown = _screen(c, 100)
    assert "✗ bash pytest  — 2.3s · exit 2\n    FAILED test_x\n    2 failed\n" in shown
    assert "✓ edit a.py  — 0.0s · 1 replacement\n    @@ -1 +1 @@\n    -x = 1\n    +x = 2" in shown
    assert "✗ write b.py  — denied: use the other file" in shown
    assert "✗ bash for i in 1 2 3 4 5; do echo tick $i; sleep 1; done  — interrupted after 4.9 s" in shown
    assert "    tick 1\n" in shown and "    tick 5" in shown  # what it printed before it was stopped
    assert "✗ ls  — interrupted" in shown


def test_replay_of_an_older_file_without_the_new_fields_still_loads_and_says_failed() -> None:
    messages, outcomes = _recorded_calls()
    old = {k: ToolOutcome(o.is_error, o.exit_code) for k, o in outcomes.items()}
    c = Controller(FakeSession(messages=messages, outcomes=old), MarkdownRenderer())
    c.start()
    shown = _screen(c, 100)
    assert "✗ bash pytest  — failed · exit 2" in shown
    assert "✓ edit a.py\n" in shown + "\n"
    assert "✗ write b.py  — denied" in shown


def test_replay_survives_damaged_arguments_lone_surrogates_and_absurd_nesting() -> None:
    """Recorded arguments are JSON text read only at replay: a lone ``\\ud800`` escape shows as
    U+FFFD, and arguments nested 100,000 deep show no target instead of crashing the screen."""
    messages = [
        Message.user("go"),
        Message(role="assistant", content=None, tool_calls=(
            ToolCall("c1", "bash", '{"command": "echo \\ud800 here"}'),
            ToolCall("c2", "bash", "[" * 100_000 + "]" * 100_000),
        )),
        Message.tool("c1", "ok"),
        Message.tool("c2", "error: the arguments are not valid JSON"),
        Message(role="assistant", content="done"),
    ]
    c = Controller(FakeSession(messages=messages), MarkdownRenderer())
    c.start()
    shown = _screen(c)
    assert "bash echo \ufffd here" in shown
    shown.encode("utf-8")  # everything on screen can be written to the terminal
    assert "done" in shown


def test_a_resumed_call_recovered_from_text_still_says_so() -> None:
    messages = [
        Message.user("list the files"),
        Message(role="assistant", content="Let me look:", tool_calls=(ToolCall("text_call_1_1", "ls", "{}", from_text=True),)),
        Message.tool("text_call_1_1", "a.py"),
        Message(role="assistant", content="There is a.py."),
    ]
    c = Controller(FakeSession(messages=messages), MarkdownRenderer())
    c.start()
    shown = _screen(c)
    assert "Let me look:" in shown and "ls (recovered from text)" in shown
