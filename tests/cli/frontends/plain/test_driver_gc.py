"""The driver's start-up collector threshold (issue 16): the cyclic garbage collector runs rarely
while the first task imports the agent, the provider and the tools, and normally afterwards."""

from __future__ import annotations

import gc
import io
import weakref
from pathlib import Path
from typing import Callable, Iterator

import pytest

from minicode.agent.events import AgentEvent, ModelCallStarted
from minicode.cli.args import parse_args
from minicode.cli.frontends.plain.driver import START_UP_GC_THRESHOLD, drive
from minicode.cli.frontends.plain.driver import normal_threshold as normal_threshold_of_driver
from minicode.cli.frontends.plain.frontend import PlainFrontend, Printer
from minicode.config import Config, ModelConfig
from minicode.errors import ConfigError
from tests.support.fake_openai import FakeOpenAI, Reply


class Recording(PlainFrontend):
    """The plain frontend, noting the collector's threshold when each model call starts."""

    thresholds: list[tuple[int, int, int]]

    def emit(self, event: AgentEvent) -> None:
        if isinstance(event, ModelCallStarted):
            self.thresholds.append(gc.get_threshold())
        super().emit(event)


@pytest.fixture
def normal_threshold() -> Iterator[tuple[int, int, int]]:
    before = gc.get_threshold()
    gc.set_threshold(700, 10, 10)
    try:
        yield gc.get_threshold()
    finally:
        gc.set_threshold(*before)


def _front() -> Recording:
    front = Recording(Printer(io.StringIO(), io.StringIO(), progress=False), yes=True)
    front.thresholds = []
    return front


def _config(base_url: str, provider: str = "openai") -> Config:
    return Config(model=ModelConfig(base_url=base_url, name="m", api_key="k", provider=provider),
                  path=Path("/nonexistent/config.toml"))


async def test_the_first_task_runs_with_a_high_threshold_and_the_normal_one_comes_back(
        tmp_path: Path, normal_threshold: tuple[int, int, int]) -> None:
    (tmp_path / "notes.txt").write_text("a note\n")
    front = _front()
    with FakeOpenAI() as server:
        server.script(Reply.tool("read", path="notes.txt"), Reply.text("done"))
        code = await drive(parse_args(["--yes", "read the notes"]), _config(server.base_url), tmp_path, "oneshot",
                           None, {"HOME": str(tmp_path), "PATH": "/usr/bin:/bin"}, front)
    assert code == 0, front.printer.err.getvalue()
    assert front.thresholds == [(START_UP_GC_THRESHOLD, 10, 10)] * 2
    assert gc.get_threshold() == normal_threshold


async def test_a_session_that_cannot_open_leaves_the_normal_threshold(
        tmp_path: Path, normal_threshold: tuple[int, int, int]) -> None:
    with pytest.raises(ConfigError):
        await drive(parse_args(["hi"]), _config("http://127.0.0.1:9/v1", provider="bogus"), tmp_path, "oneshot",
                    None, {"HOME": str(tmp_path)}, _front())
    assert gc.get_threshold() == normal_threshold


def _collections_during(work: Callable[[], None]) -> list[int]:
    """The generations the collector collected while ``work`` ran."""
    seen: list[int] = []

    def note(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            seen.append(info["generation"])

    gc.callbacks.append(note)
    try:
        work()
    finally:
        gc.callbacks.remove(note)
    return seen


def test_the_normal_threshold_comes_back_without_collecting_what_the_start_up_made(
        normal_threshold: tuple[int, int, int]) -> None:
    gc.collect()
    gc.set_threshold(START_UP_GC_THRESHOLD, 10, 10)
    made = [[i] for i in range(20_000)]  # a young generation far above the normal threshold
    garbage = weakref.ref(_Holder())  # a cycle only the collector can free
    assert gc.get_count()[0] > normal_threshold[0]
    collections = _collections_during(lambda: (normal_threshold_of_driver(normal_threshold), [[i] for i in range(100)]))
    assert collections == []  # none at the next allocations (it used to collect all 20,000 then)
    assert gc.get_threshold() == normal_threshold
    assert gc.get_freeze_count() == 0  # nothing is left frozen
    assert gc.is_tracked(made[0]) and garbage() is not None
    gc.collect()
    assert garbage() is None  # counted as old, not exempt: a full collection still frees it


def test_objects_someone_else_froze_stay_frozen(normal_threshold: tuple[int, int, int]) -> None:
    gc.freeze()  # e.g. before a fork: not the driver's to undo
    try:
        frozen_before = gc.get_freeze_count()
        gc.set_threshold(START_UP_GC_THRESHOLD, 10, 10)
        normal_threshold_of_driver(normal_threshold)
        assert gc.get_threshold() == normal_threshold
        assert gc.get_freeze_count() == frozen_before
    finally:
        gc.unfreeze()


class _Holder:
    """A cyclic object the collector must still free after the threshold came back."""

    def __init__(self) -> None:
        self.me = self


def test_an_already_normal_threshold_leaves_the_young_generation_young(
        normal_threshold: tuple[int, int, int]) -> None:
    gc.collect()
    made = [[i] for i in range(100)]  # young, under the normal threshold (pipe mode's later tasks)
    young = gc.get_count()[0]
    assert young >= 100
    normal_threshold_of_driver(normal_threshold)
    assert gc.get_count()[0] >= young  # not moved to the old generation: collected young as before
    assert gc.get_threshold() == normal_threshold and made
