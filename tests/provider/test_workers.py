"""The exchange worker threads: a job runs at once on a waiting worker or a new one, never
queued behind a busy one; an idle worker ends after a while; a job that raises ends its worker."""

from __future__ import annotations

import threading
from typing import Callable

import pytest

from minicode.provider import workers


def _job(ran: list[str], done: threading.Event, block: threading.Event | None = None) -> Callable[[], None]:
    def job() -> None:
        ran.append(threading.current_thread().name)
        if block is not None:
            assert block.wait(10)
        done.set()

    return job


def _until(condition: Callable[[], bool]) -> bool:
    for _ in range(1000):  # a condition, not a duration
        if condition():
            return True
        threading.Event().wait(0.01)
    return False


@pytest.fixture(autouse=True)
def no_idle_workers(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(workers, "_idle", [])  # this test's workers only


def test_a_finished_worker_takes_the_next_job() -> None:
    ran: list[str] = []
    first, second = threading.Event(), threading.Event()
    workers.run(_job(ran, first))
    assert first.wait(10)
    assert _until(lambda: len(workers._idle) == 1)  # waiting for another job
    threads_before = {t.ident for t in threading.enumerate()}
    workers.run(_job(ran, second))
    assert second.wait(10)
    assert {t.ident for t in threading.enumerate()} <= threads_before  # no new thread
    assert ran == [workers.RUNNING, workers.RUNNING]
    assert _until(lambda: any(t.name == workers.WAITING for t in threading.enumerate()))


def test_a_job_never_waits_for_a_busy_worker() -> None:
    ran: list[str] = []
    blocked, release, quick = threading.Event(), threading.Event(), threading.Event()
    workers.run(_job(ran, blocked, block=release))  # e.g. a connect nothing interrupts
    workers.run(_job(ran, quick))
    assert quick.wait(10)  # ran beside the blocked one
    release.set()
    assert blocked.wait(10)


def test_an_idle_worker_ends(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(workers, "IDLE_SECONDS", 0.05)
    done = threading.Event()
    workers.run(_job([], done))
    assert done.wait(10)
    assert _until(lambda: len(workers._idle) == 1)
    assert _until(lambda: workers._idle == [])  # gone after its idle time
    again = threading.Event()
    workers.run(_job([], again))  # a new worker then
    assert again.wait(10)


def test_a_job_that_raises_ends_its_worker_and_later_jobs_still_run() -> None:
    failed = threading.Event()

    def broken() -> None:
        failed.set()
        raise RuntimeError("a bug in a job")

    seen: list[threading.ExceptHookArgs] = []
    original = threading.excepthook
    threading.excepthook = seen.append
    try:
        workers.run(broken)
        assert failed.wait(10)
        assert _until(lambda: len(seen) == 1)
    finally:
        threading.excepthook = original
    assert workers._idle == []  # the broken worker never waits for a job
    done = threading.Event()
    workers.run(_job([], done))
    assert done.wait(10)
