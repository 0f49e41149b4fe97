"""The thread-to-loop handoff: order, batching, wake-ups only for a waiting consumer."""

from __future__ import annotations

import asyncio
import threading

import pytest

from minicode.provider.handoff import Handoff


async def test_items_put_while_nobody_waits_come_in_one_batch_in_order() -> None:
    handoff: Handoff[int] = Handoff(asyncio.get_running_loop())
    done = threading.Event()

    def worker() -> None:
        for i in range(100):
            handoff.put(i)
        done.set()

    thread = threading.Thread(target=worker)
    thread.start()
    await asyncio.to_thread(done.wait, 10)
    thread.join()
    assert await handoff.get() == list(range(100))


async def test_a_waiting_consumer_is_woken_by_a_put_from_a_thread() -> None:
    handoff: Handoff[str] = Handoff(asyncio.get_running_loop())
    getter = asyncio.create_task(handoff.get())
    await asyncio.sleep(0)  # the consumer is now waiting
    threading.Thread(target=handoff.put, args=("x",)).start()
    assert await asyncio.wait_for(getter, 10) == ["x"]


async def test_a_cancelled_get_leaves_the_channel_usable() -> None:
    handoff: Handoff[int] = Handoff(asyncio.get_running_loop())
    getter = asyncio.create_task(handoff.get())
    await asyncio.sleep(0)
    getter.cancel()
    with pytest.raises(asyncio.CancelledError):
        await getter
    assert handoff.put(1)
    assert await handoff.get() == [1]


def test_put_after_the_loop_closed_says_nobody_listens() -> None:
    loop = asyncio.new_event_loop()
    handoff: Handoff[int] = Handoff(loop)
    handoff._waiter = loop.create_future()  # a consumer was waiting when its loop closed
    loop.close()
    assert handoff.put(1) is False
