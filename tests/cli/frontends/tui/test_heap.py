"""Freed memory is handed back to the system once a task ended (issue 16 item 4): once per
task however often asked, and nothing where the C library has no such call."""

from __future__ import annotations

import asyncio
import sys

import pytest

from minicode.cli.frontends.tui import heap


@pytest.fixture(autouse=True)
def fresh(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(heap, "_pending", None)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's malloc_trim")
def test_the_heap_is_trimmed_on_linux() -> None:
    garbage = [bytes(4096) for _ in range(2000)]  # freed below: pages to hand back
    del garbage
    assert heap.give_back() is True


def test_without_malloc_trim_nothing_is_done(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(heap, "_looked", True)
    monkeypatch.setattr(heap, "_trim", None)
    assert heap.give_back() is False


async def test_asked_many_times_it_runs_once_after_the_delay(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []
    monkeypatch.setattr(heap, "_looked", True)
    monkeypatch.setattr(heap, "_trim", lambda pad: calls.append(pad) or 1)
    for _ in range(5):
        heap.give_back_later(0.0)
    while heap._pending is not None:
        await asyncio.sleep(0)
    assert calls == [0]
    heap.give_back_later(0.0)  # the next task's end asks again
    while heap._pending is not None:
        await asyncio.sleep(0)
    assert calls == [0, 0]
