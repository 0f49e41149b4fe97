"""Drive the real Application with a pipe input and a dummy output (no terminal involved)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass

import pytest
from prompt_toolkit.input import PipeInput, create_pipe_input
from prompt_toolkit.output import DummyOutput

from minicode.cli.tui.app import create_application, run_controller
from minicode.cli.tui.markdown import MarkdownRenderer
from minicode.cli.tui.controller import Controller
from tests.cli.tui.fake_session import FakeSession


@dataclass
class Harness:
    session: FakeSession
    controller: Controller
    input: PipeInput
    runner: asyncio.Task[int]

    async def type(self, text: str, wait: float = 0.15) -> None:
        self.input.send_text(text)
        await asyncio.sleep(wait)

    async def until(self, predicate, timeout: float = 5.0) -> None:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while not predicate():
            if loop.time() > deadline:
                raise AssertionError("condition not reached in time")
            await asyncio.sleep(0.02)

    def screen_text(self) -> str:
        c = self.controller
        width, height = c.view_size
        return "\n".join("".join(t for _, t in line) for line in c.transcript.visible(width, 0, 10_000))

    async def exit_code(self, timeout: float = 5.0) -> int:
        return await asyncio.wait_for(self.runner, timeout)


@pytest.fixture
async def harness() -> AsyncIterator[Harness]:
    with create_pipe_input() as pipe:
        session = FakeSession()
        controller = Controller(session, MarkdownRenderer())
        controller.start()
        app = create_application(controller, input=pipe, output=DummyOutput())
        runner = asyncio.ensure_future(run_controller(controller, app))
        await asyncio.sleep(0.1)
        h = Harness(session, controller, pipe, runner)
        try:
            yield h
        finally:
            if not runner.done():
                controller.exit(0)
                await asyncio.wait_for(runner, 5)
