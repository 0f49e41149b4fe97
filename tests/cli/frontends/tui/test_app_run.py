"""``app._run_session``: the exit path prints the transcript, any crash, and the resume command."""

from __future__ import annotations

import asyncio
import io
import re

from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput

from pathlib import Path

from minicode.cli.frontends.tui.app import _run_session
from minicode.cli.args import Options
from minicode.cli.frontends.tui.controller import Controller
from tests.cli.frontends.tui.conftest import FakeClock, Harness
from tests.cli.frontends.tui.fake_session import FakeSession, text_steps


class CrashingSession(FakeSession):
    """Its model name blows up once the UI starts drawing the status bar."""

    def __init__(self) -> None:
        super().__init__()
        self._reads = 0

    def __getattribute__(self, name: str):  # type: ignore[no-untyped-def]
        if name == "model":
            reads = object.__getattribute__(self, "_reads") + 1
            object.__setattr__(self, "_reads", reads)
            if reads > 1:
                raise RuntimeError("status bar exploded")
        return object.__getattribute__(self, name)


async def _drive(session: FakeSession, lines: list[str], out: io.StringIO, err: io.StringIO) -> int:
    """``_run_session`` over a pipe with a fake clock: send each line (Enter a moment after
    it), wait for its task, and return the exit code; the last line should leave."""
    made: list[Controller] = []
    clock = FakeClock()
    with create_pipe_input() as pipe:
        run = asyncio.ensure_future(_run_session(session, Options(), stdout=out, stderr=err, input=pipe,
                                                 output=DummyOutput(), clock=clock, started=made.append))
        h = Harness(session, made[0] if made else None, pipe, run, clock)  # type: ignore[arg-type]
        await h.until(lambda: bool(made) and made[0].app is not None and made[0].app.render_counter > 0)
        h.controller = made[0]
        for line in lines:
            await h.send(line)
            await h.until(lambda: h.controller.task is None)
        return await asyncio.wait_for(run, 5)


async def test_exit_prints_transcript_to_stdout_and_resume_command_to_stderr(tmp_path: Path) -> None:
    session = FakeSession(workspace=tmp_path)
    session.scripts.append(text_steps("the **answer**"))
    out, err = io.StringIO(), io.StringIO()
    assert await _drive(session, ["question", "/exit"], out, err) == 0
    printed = out.getvalue()
    assert "› question" in printed and "the answer" in printed and "■ done" in printed
    assert "\x1b" not in printed  # plain rendering
    assert err.getvalue().strip() == f"minicode: resume with: {session.resume_command}"
    assert (tmp_path / ".minicode" / "sessions" / "input-history.jsonl").exists()


async def test_a_crash_in_the_ui_is_reported_after_the_transcript() -> None:
    session = CrashingSession()
    out, err = io.StringIO(), io.StringIO()
    with create_pipe_input() as pipe:
        code = await asyncio.wait_for(
            _run_session(session, Options(), stdout=out, stderr=err, input=pipe, output=DummyOutput()), 5
        )
    assert code == 1
    assert "session 0b7e1c2a" in out.getvalue()
    assert "the interactive session crashed" in err.getvalue()
    assert "RuntimeError: status bar exploded" in err.getvalue()
    assert err.getvalue().rstrip().endswith(session.resume_command)


class TerminalOut(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_the_exit_printout_keeps_its_styles_on_a_terminal_and_is_plain_otherwise() -> None:
    from minicode.cli.frontends.tui.app import print_transcript
    from minicode.cli.frontends.tui.markdown import MarkdownRenderer
    from minicode.cli.frontends.tui.answer import AnswerItem
    from minicode.cli.frontends.tui.view import Transcript

    t = Transcript(MarkdownRenderer())
    t.note("question", "class:user", "› ")
    t.note("boom", "class:error", "✗ ")
    t.add(AnswerItem("the **answer**"))
    styled, plain = TerminalOut(), io.StringIO()
    print_transcript(t, styled, 60)
    print_transcript(t, plain, 60)
    assert plain.getvalue() == "› question\n\n✗ boom\n\nthe answer\n"
    raw = styled.getvalue().replace("\r\n", "\n")
    # colours only (and autowrap left on): no screen, cursor or mouse modes
    assert "\x1b[" in raw and not re.search(r"\x1b\[\?(?!7h)", raw) and "\x1b[H" not in raw
    assert re.sub(r"\x1b\[(\?7h|[0-9;]*m)", "", raw) == plain.getvalue()  # no padding either
    assert re.search(r"\x1b\[[0-9;]*1[;m][^\n]*answer", raw)  # **answer** is still bold


async def _exit_at_once(session: FakeSession, first: str = "") -> str:
    out, err = io.StringIO(), io.StringIO()
    assert await _drive(session, [first, "/exit"] if first else ["/exit"], out, err) == 0
    return err.getvalue()


async def test_a_new_session_left_without_a_message_prints_no_resume_hint(tmp_path: Path) -> None:
    assert "resume with" not in await _exit_at_once(FakeSession(is_new=True, workspace=tmp_path))


async def test_a_new_session_with_a_message_and_a_resumed_one_print_the_hint(tmp_path: Path) -> None:
    assert "resume with" in await _exit_at_once(FakeSession(is_new=True, workspace=tmp_path), first="hello")
    assert "resume with" in await _exit_at_once(FakeSession(is_new=False, workspace=tmp_path))


async def test_the_first_frame_hook_runs_once_after_the_first_frame(tmp_path: Path) -> None:
    """What the screen need not wait for (the provider's build) starts once it is drawn."""
    session = FakeSession(workspace=tmp_path)
    made: list[Controller] = []
    rendered_then: list[int] = []

    def first_frame() -> None:
        app = made[0].app
        assert app is not None
        rendered_then.append(app.render_counter)

    clock = FakeClock()
    with create_pipe_input() as pipe:
        run = asyncio.ensure_future(_run_session(session, Options(), stdout=io.StringIO(), stderr=io.StringIO(),
                                                 input=pipe, output=DummyOutput(), clock=clock,
                                                 started=made.append, first_frame=first_frame))
        h = Harness(session, None, pipe, run, clock)  # type: ignore[arg-type]
        await h.until(lambda: bool(rendered_then))
        h.controller = made[0]
        await h.send("hello")  # more frames: the hook does not run again
        await h.until(lambda: h.controller.task is None)
        await h.send("/exit")
        assert await asyncio.wait_for(run, 5) == 0
    assert rendered_then == [1]


async def test_a_failing_first_frame_hook_is_reported_like_any_crash_of_the_ui(tmp_path: Path) -> None:
    def first_frame() -> None:
        raise RuntimeError("warm-up exploded")

    out, err = io.StringIO(), io.StringIO()
    with create_pipe_input() as pipe:
        code = await asyncio.wait_for(_run_session(FakeSession(workspace=tmp_path), Options(), stdout=out, stderr=err,
                                                   input=pipe, output=DummyOutput(), first_frame=first_frame), 5)
    assert code == 1 and "RuntimeError: warm-up exploded" in err.getvalue()
