"""The session writer: appends leave the event loop free, keep their order, and a cancelled
append is kept in memory exactly when it lands in the file."""

from __future__ import annotations

import asyncio
import os
import threading
from pathlib import Path

import pytest

from minicode.errors import SessionError
from minicode.provider.types import Message
from minicode.session.history import StoredHistory
from minicode.session.reader import LoadedSession
from minicode.session.store import SessionStore
from minicode.session.writer import OrderedWriter


class GatedFsync:
    """os.fsync replacement that waits for the test to release it (from the event loop)."""

    def __init__(self) -> None:
        self.entered = threading.Event()
        self.release = threading.Event()
        self.real = os.fsync

    def __call__(self, fd: int) -> None:
        self.entered.set()
        assert self.release.wait(5), "the fsync ran on the event loop thread and blocked it"
        self.real(fd)


def _history(workspace: Path) -> tuple[SessionStore, OrderedWriter, StoredHistory]:
    store, _ = SessionStore.create(workspace)
    writer = OrderedWriter()
    return store, writer, StoredHistory(store, writer, LoadedSession(store.path.stem, ""))


async def _wait(event: threading.Event) -> None:
    while not event.is_set():
        await asyncio.sleep(0.005)


def _file_messages(store: SessionStore) -> list[str]:
    return [line for line in store.path.read_text().splitlines() if '"type":"message"' in line]


async def test_append_does_not_block_the_event_loop(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store, writer, history = _history(tmp_path)
    gate = GatedFsync()
    monkeypatch.setattr(os, "fsync", gate)  # after the header: only the append is gated
    task = asyncio.create_task(history.append(Message.user("hello")))
    await _wait(gate.entered)  # the loop still runs while the write waits in fsync
    assert history.messages == []  # kept only once it is in the file
    gate.release.set()
    await task
    assert history.messages == [Message.user("hello")] and len(_file_messages(store)) == 1
    await writer.aclose()
    store.close()


async def test_appends_land_in_order(tmp_path: Path) -> None:
    store, writer, history = _history(tmp_path)
    for i in range(20):
        await history.append(Message.user(f"m{i}"))
    await writer.aclose()
    store.close()
    _, loaded = SessionStore.open(tmp_path, store.path.stem)
    assert [m.content for m in loaded.messages] == [f"m{i}" for i in range(20)]


async def test_cancelled_append_under_way_is_kept_and_one_queued_is_dropped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store, writer, history = _history(tmp_path)
    gate = GatedFsync()
    monkeypatch.setattr(os, "fsync", gate)
    first = asyncio.create_task(history.append(Message.user("under way")))
    await _wait(gate.entered)
    second = asyncio.create_task(history.append(Message.user("queued")))
    await asyncio.sleep(0.01)
    first.cancel()
    second.cancel()
    # both end before the gate opens: the writer thread must not reach the queued write first
    # (on a fast disk it would, as soon as the first one's fsync returns)
    await asyncio.wait({first, second})
    gate.release.set()
    for task in (first, second):
        with pytest.raises(asyncio.CancelledError):
            await task
    await writer.aclose()
    assert [m.content for m in history.messages] == ["under way"]
    assert len(_file_messages(store)) == 1 and "under way" in _file_messages(store)[0]
    store.close()


async def test_a_failed_append_raises_and_is_not_kept(tmp_path: Path) -> None:
    store, writer, history = _history(tmp_path)
    store.close()  # every write now fails
    with pytest.raises(SessionError, match="closed"):
        await history.append(Message.user("lost"))
    assert history.messages == []
    await writer.aclose()


async def test_closing_after_every_write_was_awaited_stops_the_idle_thread(tmp_path: Path) -> None:
    others = set(threading.enumerate())  # other tests' writers may still be open
    store, writer, history = _history(tmp_path)
    await history.append(Message.user("saved"))
    workers = [t for t in set(threading.enumerate()) - others if t.name.startswith("minicode-session-writer")]
    assert len(workers) == 1
    await writer.aclose()  # nothing under way: no thread hop to wait for it
    with pytest.raises(RuntimeError):  # stopped: it takes no more writes
        await writer.run(lambda: None)
    for worker in workers:
        worker.join(10)  # it ends on its own (the interpreter joins it at exit)
    assert not any(w.is_alive() for w in workers)
    store.close()
    _, loaded = SessionStore.open(tmp_path, store.path.stem)
    assert [m.content for m in loaded.messages] == ["saved"]


async def test_closing_waits_for_a_write_still_under_way(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store, writer, history = _history(tmp_path)
    gate = GatedFsync()
    monkeypatch.setattr(os, "fsync", gate)
    append = asyncio.create_task(history.append(Message.user("slow")))
    await _wait(gate.entered)
    append.cancel()  # the caller stopped waiting; the write goes on
    with pytest.raises(asyncio.CancelledError):
        await append
    closing = asyncio.create_task(writer.aclose())
    await asyncio.sleep(0.05)
    assert not closing.done()  # it waits for the write in fsync (a test hang guard, not a time)
    gate.release.set()
    await closing
    store.close()  # after the write: the record is whole in the file
    assert len(_file_messages(store)) == 1
