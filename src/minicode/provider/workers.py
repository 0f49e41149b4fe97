"""The daemon threads that run HTTP exchanges, kept between requests.

A new thread per request cost the event loop its ``Thread.start``, which waits until the new
thread runs: 0.2–0.5 ms of every model request on an idle machine, milliseconds on a busy one.
``run(job)`` hands ``job`` to a waiting worker instead and returns at once; only when none
waits is a new thread started. Jobs never queue behind one another: a job may block for long
(httpx's connect cannot be cut short), and each one gets a thread of its own. A worker is named
``minicode-http`` while it runs a job and ``minicode-http-idle`` while it waits for the next
one; a worker idle for ``IDLE_SECONDS`` ends. A job must not raise (``Exchange._run`` reports
every failure to its loop); one that does ends its worker, which then never takes another job.
Standard library only.
"""

from __future__ import annotations

import threading
from queue import Empty, SimpleQueue
from typing import Callable

__all__ = ["IDLE_SECONDS", "RUNNING", "WAITING", "run"]

IDLE_SECONDS = 30.0
"""How long a worker waits for another job before its thread ends."""
RUNNING = "minicode-http"
WAITING = "minicode-http-idle"

_idle: list[SimpleQueue[Callable[[], None]]] = []
"""The job queues of the workers waiting for a job, the most recently idle last."""
_lock = threading.Lock()


def run(job: Callable[[], None]) -> None:
    """Run ``job`` on a worker thread: a waiting one, else a new one."""
    with _lock:
        jobs = _idle.pop() if _idle else None
    if jobs is not None:
        jobs.put(job)
        return
    jobs = SimpleQueue()
    jobs.put(job)
    threading.Thread(target=_serve, args=(jobs,), name=RUNNING, daemon=True).start()


def _serve(jobs: SimpleQueue[Callable[[], None]]) -> None:
    me = threading.current_thread()
    while True:
        try:
            job = jobs.get(timeout=IDLE_SECONDS)
        except Empty:
            with _lock:
                if jobs in _idle:  # nobody is handing it a job: end
                    _idle.remove(jobs)
                    return
            continue  # ``run`` took it from the idle list just now: its job is on the way
        me.name = RUNNING
        job()  # if it raises, this thread ends here and never waits for another job
        me.name = WAITING
        with _lock:
            _idle.append(jobs)
