"""The pipe/one-shot frontend's pieces: approval prompt, line reader, printer."""

from __future__ import annotations

import asyncio
import io
import os

from minicode.agent.approval import ApprovalRequest, Decision
from minicode.cli.frontends.plain.line_approver import LineApprover
from minicode.cli.frontends.plain.line_reader import LineReader


class _Lines:
    """A LineReader stand-in with canned lines (None = end of input)."""

    def __init__(self, *lines: str | None, interactive: bool = True) -> None:
        self._lines = list(lines)
        self.interactive = interactive
        self.discarded = 0

    def discard_pending(self) -> None:
        self.discarded += 1

    async def next_line(self) -> str | None:
        return self._lines.pop(0) if self._lines else None

    def set_aside_typed_ahead(self) -> int:
        return 0

    async def next_answer(self) -> str | None:
        return await self.next_line()


def _request(body: str = "") -> ApprovalRequest:
    return ApprovalRequest("c1", "write", "a.txt", "2 lines", {}, body)


async def test_approval_prompt_shows_the_body_indented():
    err = io.StringIO()
    approval = await LineApprover(_Lines("y"), err).approve(_request("one\ntwo"))
    assert approval.decision is Decision.ALLOW_ONCE
    assert err.getvalue().startswith("    one\n    two\nminicode: allow write a.txt: 2 lines? [y/a/N] ")


async def test_approval_prompt_caps_a_long_body():
    err = io.StringIO()
    body = "\n".join(str(i) for i in range(100))
    request = ApprovalRequest("c1", "grep", "a.txt", "x", {}, body)  # a preview to glance at
    approval = await LineApprover(_Lines("n"), err).approve(request)
    assert approval.decision is Decision.DENY
    shown = err.getvalue().splitlines()
    assert "    23" in shown and "    24" not in shown and "    … 76 more lines" in shown


async def test_approval_prompt_shows_a_whole_write_up_to_its_limit():
    err = io.StringIO()
    body = "\n".join(str(i) for i in range(100))  # what it writes: every line is read first
    await LineApprover(_Lines("n"), err).approve(_request(body))
    shown = err.getvalue().splitlines()
    assert "    99" in shown and not any("more lines" in line for line in shown)


async def test_piped_answer_is_echoed_so_the_next_line_starts_clean():
    err = io.StringIO()
    await LineApprover(_Lines("  no  ", interactive=False), err).approve(_request())
    assert err.getvalue().endswith("? [y/N] no\n")
    # a person at a terminal already typed the newline: nothing is echoed
    err = io.StringIO()
    approver = LineApprover(_Lines("n", "n"), err)
    await approver.approve(_request())
    assert err.getvalue().endswith("? [y/a/N] (a: allow every write call for the rest of this session) ")
    # "a" is explained the first time a tool offers it, not at every question
    err.seek(0)
    err.truncate()
    await approver.approve(_request())
    assert err.getvalue().endswith("? [y/a/N] ")


async def test_typed_ahead_input_is_discarded_only_when_asked():
    lines = _Lines("y")
    await LineApprover(lines, io.StringIO(), discard_typed_ahead=True).approve(_request())
    assert lines.discarded == 1
    lines = _Lines("y")
    await LineApprover(lines, io.StringIO()).approve(_request())
    assert lines.discarded == 0


def _pipe_with(data: bytes):
    read_fd, write_fd = os.pipe()
    os.write(write_fd, data)
    os.close(write_fd)
    return open(read_fd, "r", encoding="utf-8", errors="strict")


async def _all_lines(reader: LineReader) -> list[str]:
    out = []
    while (line := await asyncio.wait_for(reader.next_line(), 5)) is not None:
        out.append(line)
    return out


async def test_reader_survives_lines_that_are_not_utf8():
    stream = _pipe_with(b"task one\n\xff\xfe bad\r\ntask three\n")
    try:
        lines = await _all_lines(LineReader(stream))
    finally:
        stream.close()
    assert lines == ["task one", "\ufffd\ufffd bad", "task three"]


async def test_reader_of_a_text_stream_scrubs_surrogates_and_ends():
    reader = LineReader(io.StringIO("ok\nbad \udcff\n"))
    assert await _all_lines(reader) == ["ok", "bad \ufffd"]
    assert reader.eof and await reader.next_line() is None


async def test_discard_pending_drops_lines_read_before_the_prompt():
    reader = LineReader(io.StringIO("typed ahead\n"))
    await asyncio.sleep(0.05)
    for _ in range(100):  # until the reader thread has queued the line and the end
        if reader._queue.qsize() == 2:
            break
        await asyncio.sleep(0.01)
    reader.discard_pending()
    assert reader.eof and await reader.next_line() is None


class _BrokenOut(io.StringIO):
    def write(self, text: str) -> int:
        raise BrokenPipeError(32, "Broken pipe")


def _finished(text: str):
    from minicode.agent.events import TaskStatus, TurnFinished
    from minicode.agent.stats import TaskStats

    return TurnFinished(TaskStatus.DONE, text, TaskStats())


def test_printer_notes_a_broken_stdout_once_and_goes_on():
    from minicode.cli.frontends.plain.frontend import Printer

    err = io.StringIO()
    printer = Printer(_BrokenOut(), err, progress=False)
    printer(_finished("one"))
    printer(_finished("two"))
    assert printer.undelivered
    assert err.getvalue().count("could not be written to stdout") == 1
    assert err.getvalue().count("minicode: done") == 2


def test_printer_writes_answers_to_a_working_stdout():
    from minicode.cli.frontends.plain.frontend import Printer

    out, err = io.StringIO(), io.StringIO()
    printer = Printer(out, err, progress=False)
    printer(_finished("answer\n\n"))
    assert out.getvalue() == "answer\n" and not printer.undelivered


async def test_terminal_answer_a_allows_the_tool_for_the_session():
    err = io.StringIO()
    approver = LineApprover(_Lines("a"), err)
    approval = await approver.approve(_request())
    assert approval.decision is Decision.ALLOW_SESSION
    assert "[y/a/N]" in err.getvalue()


async def test_piped_answer_a_denies_as_the_spec_says():
    err = io.StringIO()
    approver = LineApprover(_Lines("a", interactive=False), err)
    approval = await approver.approve(_request())
    assert approval.decision is Decision.DENY and approval.reason == "a"
    assert "[y/N]" in err.getvalue() and "y/a/N" not in err.getvalue()


def test_progress_shows_why_a_tool_failed_without_control_sequences():
    from minicode.agent.events import ToolFinished, ToolStarted
    from minicode.cli.frontends.plain.frontend import Printer

    err = io.StringIO()
    printer = Printer(io.StringIO(), err, progress=True)
    printer(ToolStarted("c1", "bash", "/ws", "make"))
    printer(ToolFinished("c1", "bash", True, "exit 2", 2, 0.5, output_tail="\x1b[31mmake: *** no rule\x1b[0m\n[exit code 2]"))
    printer(ToolStarted("c2", "read", "a.txt", ""))
    printer(ToolFinished("c2", "read", False, "3 lines", None, 0.0))
    assert err.getvalue().splitlines() == [
        "  … bash $ make", "  ✗ bash $ make (exit 2, 0.5s)", "      make: *** no rule",
        "  … read a.txt", "  ✓ read a.txt (3 lines, 0.0s)",
    ]


def test_no_failure_tail_without_progress():
    from minicode.agent.events import ToolFinished
    from minicode.cli.frontends.plain.frontend import Printer

    err = io.StringIO()
    printer = Printer(io.StringIO(), err, progress=False)
    printer(ToolFinished("c1", "bash", True, "exit 2", 2, 0.5, output_tail="boom"))
    assert err.getvalue() == ""


async def test_a_cancelled_question_ends_its_line():
    class _Waits(_Lines):
        async def next_answer(self) -> str | None:
            await asyncio.sleep(60)
            return None

    err = io.StringIO()
    task = asyncio.ensure_future(LineApprover(_Waits(), err).approve(_request()))
    await asyncio.sleep(0.01)
    task.cancel()
    try:
        await task
    except asyncio.CancelledError:
        pass
    else:
        raise AssertionError("the cancellation was swallowed")
    assert err.getvalue().endswith("? [y/a/N] (a: allow every write call for the rest of this session) \n")


class _BrokenStream(io.BytesIO):
    """Two lines, then the device fails (EIO): the reader must say so, not pass it off as EOF."""

    def __iter__(self):
        yield b"first\n"
        raise OSError(5, "Input/output error")


async def test_reader_keeps_why_the_input_broke():
    reader = LineReader(_BrokenStream())
    assert await _all_lines(reader) == ["first"]
    assert isinstance(reader.failure, OSError) and reader.failure.errno == 5
    assert reader.failure_text() == " (cannot read stdin: Input/output error)"


async def test_a_normal_end_of_input_is_no_failure():
    reader = LineReader(io.StringIO("one\n"))
    assert await _all_lines(reader) == ["one"]
    assert reader.failure is None and reader.failure_text() == ""


async def test_approval_names_the_command_not_the_workspace():
    from pathlib import Path

    err = io.StringIO()
    request = ApprovalRequest("c1", "bash", "/tmp/proj", "python3 -m pytest -q", {"command": "python3 -m pytest -q"})
    await LineApprover(_Lines("n"), err, workspace=Path("/tmp/proj")).approve(request)
    assert err.getvalue().startswith("minicode: allow bash $ python3 -m pytest -q? [y/a/N] ")
    assert "/tmp/proj" not in err.getvalue()


def test_tool_labels():
    from pathlib import Path

    from minicode.cli.frontends.plain.tool_label import tool_label

    ws = Path("/tmp/proj")
    assert tool_label("bash", "/tmp/proj", "make test", ws) == "bash $ make test"
    assert tool_label("bash", "/tmp/proj", "set -e\nmake\nmake test", ws) == "bash $ set -e … (+2 more lines)"
    assert tool_label("bash", "/tmp/proj", "x" * 300, ws).endswith("x…")
    assert tool_label("write", "src/a.py", "3 lines", ws) == "write src/a.py"
    assert tool_label("ls", "/tmp/proj", "", ws) == "ls ."
    assert tool_label("grep", "/tmp/proj", "TODO", ws) == "grep TODO in ."
    assert tool_label("glob", "src", "*.py", ws) == "glob *.py in src"


def test_failure_tail_keeps_an_exit_line_that_is_not_the_last():
    from minicode.agent.events import ToolFinished, ToolStarted
    from minicode.cli.frontends.plain.frontend import Printer

    err = io.StringIO()
    printer = Printer(io.StringIO(), err, progress=True)
    printer(ToolStarted("c1", "read", "a.txt", ""))
    printer(ToolFinished("c1", "read", True, "error", None, 0.1, output_tail="[exit code 3]"))
    # not a command's exit line (no exit code): nothing above says it, so it stays
    assert err.getvalue().splitlines()[-1] == "      [exit code 3]"


async def test_lines_typed_ahead_are_the_next_tasks_not_the_answer():
    r, w = os.pipe()
    reader = LineReader(os.fdopen(r, "rb"))
    reader.interactive = True  # as on a terminal, where the user types tasks and answers
    os.write(w, b"second task\ny\n")
    while reader._queue.qsize() < 2:  # the reader thread has both lines
        await asyncio.sleep(0.01)
    err = io.StringIO()
    asking = asyncio.ensure_future(LineApprover(reader, err).approve(_request()))
    await asyncio.sleep(0.05)
    assert not asking.done()  # "y" was typed before the question: it answers nothing
    assert "2 lines typed ahead kept as the next task" in err.getvalue()
    os.write(w, b"n\n")
    approval = await asking
    assert approval.decision is Decision.DENY and approval.reason is None
    assert [await reader.next_line(), await reader.next_line()] == ["second task", "y"]
    os.close(w)
    assert await reader.next_line() is None


async def test_input_ending_before_a_question_denies_it_and_keeps_the_typed_tasks():
    reader = LineReader(io.BytesIO(b"next task\n"))
    reader.interactive = True
    while reader._queue.qsize() < 2:  # the line and the end of input
        await asyncio.sleep(0.01)
    approver = LineApprover(reader, io.StringIO())
    approval = await approver.approve(_request())
    assert approval.decision is Decision.DENY and approval.input_ended and approver.ended
    assert await reader.next_line() == "next task"
    assert await reader.next_line() is None


def test_a_call_recovered_from_text_is_said_on_every_stderr():
    from minicode.agent.events import ToolFinished, ToolStarted
    from minicode.cli.frontends.plain.frontend import Printer

    for progress, expected in [
        (True, ["  … write hello.py (recovered from text)", "  ✓ write hello.py (created, 0.0s)"]),
        (False, ["minicode: write hello.py (recovered from text)"]),
    ]:
        err = io.StringIO()
        printer = Printer(io.StringIO(), err, progress=progress)
        printer(ToolStarted("t1", "write", "hello.py", "", from_text=True))
        printer(ToolFinished("t1", "write", False, "created", None, 0.0))
        assert err.getvalue().splitlines() == expected


def test_a_native_call_says_nothing_of_text_without_progress():
    from minicode.agent.events import ToolStarted
    from minicode.cli.frontends.plain.frontend import Printer

    err = io.StringIO()
    Printer(io.StringIO(), err, progress=False)(ToolStarted("c1", "write", "hello.py", ""))
    assert err.getvalue() == ""


def test_a_sub_agents_calls_are_indented_under_its_agent_line():
    from minicode.agent.events import Notice, SubAgentEvent, ToolFinished, ToolStarted
    from minicode.cli.frontends.plain.frontend import Printer

    def sub(event):
        return SubAgentEvent("c1", "agent-1", event)

    err = io.StringIO()
    printer = Printer(io.StringIO(), err, progress=True)
    printer(ToolStarted("c1", "agent", "", "find where\nx is set"))
    printer(sub(ToolStarted("c1", "read", "a.py", "")))  # its ids are its model's: the task's may repeat
    printer(sub(ToolFinished("c1", "read", False, "3 lines", None, 0.1)))
    printer(sub(ToolStarted("c2", "grep", "src", "x =")))
    printer(sub(ToolFinished("c2", "grep", True, "error", None, 0.0)))
    printer(sub(Notice("the answer was cut off at the output limit")))
    printer(ToolFinished("c1", "agent", False, "reported · 2 calls", None, 1.5))
    assert err.getvalue().splitlines() == [
        "  … agent: find where … (+1 more line)", "    … read a.py", "    ✓ read a.py (3 lines, 0.1s)",
        "    … grep x = in src", "    ✗ grep x = in src (error, 0.0s)",
        "minicode: agent-1: the answer was cut off at the output limit",
        "  ✓ agent: find where … (+1 more line) (reported · 2 calls, 1.5s)",
    ]


def test_without_progress_only_a_sub_agents_notices_are_said():
    from minicode.agent.events import Notice, SubAgentEvent, ToolFinished, ToolStarted
    from minicode.cli.frontends.plain.frontend import Printer

    err = io.StringIO()
    printer = Printer(io.StringIO(), err, progress=False)
    printer(SubAgentEvent("c1", "agent-1", ToolStarted("r1", "read", "a.py", "")))
    printer(SubAgentEvent("c1", "agent-1", ToolFinished("r1", "read", False, "3 lines", None, 0.1)))
    printer(SubAgentEvent("c1", "agent-1", Notice("retrying")))
    assert err.getvalue().splitlines() == ["minicode: agent-1: retrying"]
