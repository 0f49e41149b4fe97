"""Drive the real Application with a pipe input and a dummy output (no terminal involved).

Time is a ``FakeClock`` the tests move; waiting is always for a condition (the input read,
the burst layer and the key processor idle, or a state reached), never for a fixed time.
``type`` writes its text at once (a burst: it arrives as one paste edit, like text typed
ahead or pasted); ``key`` sends one key as a person presses it, the clock moved on first.
"""

from __future__ import annotations

import asyncio
import select
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Callable

import pytest
from prompt_toolkit.application import Application
from prompt_toolkit.input import PipeInput, create_pipe_input
from prompt_toolkit.output import DummyOutput

from minicode.cli.frontends.tui.app import create_application, run_controller
from minicode.cli.frontends.tui.burst import BurstInput
from minicode.cli.frontends.tui.controller import Controller
from minicode.cli.frontends.tui.markdown import MarkdownRenderer
from tests.cli.frontends.tui.fake_session import FakeSession

KEYS = {"enter": "\r", "esc": "\x1b", "up": "\x1b[A", "down": "\x1b[B", "tab": "\t", "s-tab": "\x1b[Z",
        "c-c": "\x03", "c-d": "\x04", "c-r": "\x12", "c-o": "\x0f", "c-t": "\x14", "c-g": "\x07",
        "pageup": "\x1b[5~", "pagedown": "\x1b[6~", "home": "\x1b[H", "end": "\x1b[F",
        "c-home": "\x1b[1;5H", "backspace": "\x7f", "c-j": "\n"}
HUMAN = 0.25  # seconds the fake clock moves before each key a person presses


class FakeClock:
    def __init__(self, now: float = 1000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


@dataclass
class Harness:
    session: FakeSession
    controller: Controller
    input: PipeInput
    runner: asyncio.Task[int]
    clock: FakeClock

    async def type(self, text: str) -> None:
        """Write ``text`` at once and wait until the app has taken all of it."""
        self.input.send_text(text)
        await self.settle()

    async def key(self, *names: str, pause: float = HUMAN) -> None:
        """Press keys one by one, ``pause`` (fake) seconds apart, as a person does."""
        for name in names:
            self.clock.advance(pause)
            self.input.send_text(KEYS.get(name, name))
            await self.settle()

    async def send(self, text: str) -> None:
        """Type ``text`` and press Enter a moment later, as a person sends a message."""
        await self.type(text)
        await self.key("enter", pause=1.0)

    async def settle(self, timeout: float = 5.0) -> None:
        """Until the pipe is read, the burst layer flushed and the key processor empty."""
        app = self.controller.app
        assert app is not None
        burst = app.input
        assert isinstance(burst, BurstInput)

        def idle() -> bool:
            if self.runner.done() or not app.is_running:
                return True  # it left: nothing more will be read
            unread = select.select([self.input.fileno()], [], [], 0)[0]
            kp = app.key_processor
            return not unread and not burst.unflushed and not kp.input_queue and not kp.key_buffer

        await self.until(idle, timeout)
        await asyncio.sleep(0)  # what the handlers scheduled

    async def until(self, predicate: Callable[[], bool], timeout: float = 5.0) -> None:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while not predicate():
            if loop.time() > deadline:
                raise AssertionError("condition not reached in time")
            await asyncio.sleep(0.01)

    async def redrawn(self) -> None:
        """Until the app has drawn a frame after now (the layout pulled the new state)."""
        app = self.controller.app
        assert app is not None
        before = app.render_counter
        app.invalidate()
        await self.until(lambda: app.render_counter > before)

    def screen_text(self) -> str:
        c = self.controller
        width, height = c.view_size
        return "\n".join("".join(t for _, t in line) for line in c.transcript.visible(width, 0, 10_000))

    async def exit_code(self, timeout: float = 5.0) -> int:
        return await asyncio.wait_for(self.runner, timeout)


def quicken(app: Application[int]) -> None:
    """prompt_toolkit's own real-time waits, shortened: ``settle`` waits for both after every
    key. The input is flushed ``ttimeoutlen`` after its last read and a lone Esc waits
    ``timeoutlen`` for a longer key binding; the app's 50 ms and 250 ms are for a terminal's
    split reads and a person's Alt sequences. A key here is written at once (one read), and
    the burst rules run on the fake clock, so the shorter waits change what is read together
    in no test: they only make every key about 40 ms, and every Esc about 200 ms, sooner."""
    app.ttimeoutlen = 0.01
    app.timeoutlen = 0.05


@pytest.fixture
async def harness() -> AsyncIterator[Harness]:
    with create_pipe_input() as pipe:
        session = FakeSession()
        clock = FakeClock()
        controller = Controller(session, MarkdownRenderer(), clock=clock)
        controller.start()
        app = create_application(controller, input=pipe, output=DummyOutput())
        quicken(app)
        runner = asyncio.ensure_future(run_controller(controller, app))
        h = Harness(session, controller, pipe, runner, clock)
        await h.until(lambda: app.is_running and app.render_counter > 0)
        try:
            yield h
        finally:
            if not runner.done():
                controller.exit(0)
                await asyncio.wait_for(runner, 5)
