"""The one task beside the Application: launched, drawn as its events arrive, stopped.

A mixin of ``Controller`` (``controller.py``): the turn or compaction runs as an asyncio task
on the Application's loop and never raises — errors become transcript entries. Streamed
output is drawn at the pacer's rate (``pacing.py``), a retry is shown while the provider
waits, and when the task ends the next queued message goes. Esc cancels only that task (the
Session saves and emits ``TurnFinished(INTERRUPTED)``); leaving while it runs cancels it
first and exits 130. The state the Controller shares with it is declared below.
"""

from __future__ import annotations

import asyncio
import inspect
from typing import TYPE_CHECKING, Any, Awaitable, Callable

from prompt_toolkit.application import Application

from minicode.agent.events import (
    AgentEvent,
    CompactionDone,
    ModelCallStarted,
    ReasoningChunk,
    Retrying,
    TaskStatus,
    TextChunk,
    ToolFinished,
    ToolOutput,
    TurnFinished,
)
from minicode.cli.frontends.shared.plan_lines import PLAN_READY
from minicode.cli.frontends.tui.draft import Queued
from minicode.cli.frontends.tui.editor import Editor
from minicode.cli.frontends.tui.heap import give_back_later
from minicode.cli.frontends.tui.pacing import StreamPacer
from minicode.cli.frontends.tui.session_like import SessionLike
from minicode.cli.frontends.tui.view import Transcript

__all__ = ["TICK", "TaskRunner"]

TICK = 1.0  # the status bar's elapsed-time counter is redrawn this often, only while a task runs


class TaskRunner:
    """Running, drawing and stopping the task (the Controller sets this state up)."""

    task: asyncio.Task[None] | None
    task_kind: str
    task_started: float
    exiting: bool
    exit_code: int
    retry: tuple[Retrying, float] | None
    pacer: StreamPacer
    _ticker: asyncio.Task[None] | None
    _exit_task: asyncio.Future[None] | None
    _stream_frame: asyncio.TimerHandle | None
    _last_stream_frame: float
    # the Controller's own
    clock: Callable[[], float]
    editor: Editor
    transcript: Transcript
    queue: list[Queued]
    session: SessionLike
    _app: Application[int] | None

    if TYPE_CHECKING:
        def invalidate(self) -> None: ...

        def settle_soon(self) -> None: ...

        def dispatch(self, text: str, shown: str | None = None, pastes: tuple[tuple[str, str], ...] = ()) -> None: ...

        def _refresh_context(self) -> None: ...

    def launch(self, work: Awaitable[Any], kind: str) -> None:
        """Run ``work`` as the task (``kind``: "turn", "compact", …); the caller checked it is idle."""
        self.task_kind = kind
        self.task_started = self.clock()
        self.editor.end_flash()  # the status bar shows what the new task does
        task = self.task = asyncio.ensure_future(self._guarded(work))
        task.add_done_callback(lambda done: self._cancelled_before_start(done, work))
        self._ticker = asyncio.ensure_future(self._tick())

    def _cancelled_before_start(self, task: asyncio.Future[None], work: Awaitable[Any]) -> None:
        """An Esc read in the same batch as the Enter that launched ``task`` cancels it before
        its first step: ``_guarded`` never ran, so its ``finally`` did not either. Finish here
        what it would have, or the screen says "thinking" forever with nothing running."""
        if self.task is not task:
            return  # ``_guarded`` ran and cleaned up
        if inspect.iscoroutine(work) and inspect.getcoroutinestate(work) == inspect.CORO_CREATED:
            work.close()  # never started: nothing was sent or saved
        self.transcript.note("interrupted before it started (Up brings the message back)", "class:notice", "■ ")
        self._after_task()

    async def _tick(self) -> None:
        """Redraw once a second while a task runs (the elapsed counter); never while idle."""
        while self.task is not None:
            await asyncio.sleep(TICK)
            self.invalidate()

    async def _guarded(self, work: Awaitable[Any]) -> None:
        try:
            await work
        except asyncio.CancelledError:
            pass  # we cancelled it (Esc, Ctrl+C, exit); the Session already saved and reported
        except Exception as e:  # top of a task: an error becomes a transcript entry
            self.transcript.note(f"error: {type(e).__name__}: {e}", "class:error", "✗ ")
        finally:
            self._after_task()

    def _after_task(self) -> None:
        self.task = None
        self.retry = None
        if self._ticker is not None:
            self._ticker.cancel()
            self._ticker = None
        self._refresh_context()
        self.invalidate()
        give_back_later()  # the task's peaks (request bodies, a compaction) back to the system
        if self.queue and not self.exiting:
            queued = self.queue.pop(0)
            self.dispatch(queued.text, queued.shown, queued.pastes)

    # --- events from the agent ----------------------------------------------------------
    def on_event(self, event: AgentEvent) -> None:
        # a retry is announced before its wait; anything else that arrives ends it
        self.retry = (event, self.clock()) if isinstance(event, Retrying) else None
        self.transcript.apply(event)
        if isinstance(event, (ModelCallStarted, ToolFinished, TurnFinished, CompactionDone)):
            self._refresh_context()
        if isinstance(event, TurnFinished):
            self.settle_soon()  # what the stream scrolled past, ready for the exit printout
            if self.session.mode == "plan" and self.session.todo and event.status is TaskStatus.DONE:
                self.transcript.note(PLAN_READY, "class:notice", "◆ ")
        if isinstance(event, (TextChunk, ReasoningChunk, ToolOutput)):
            self._streamed()
        else:
            self.invalidate()

    def _streamed(self) -> None:
        """Streamed output: one frame for all that arrives within the pacer's interval (the
        first at once); any other redraw meanwhile shows it too."""
        if self._app is None or self._stream_frame is not None:
            return
        wait = self._last_stream_frame + self.pacer.interval() - self.clock()
        if wait <= 0:
            self._draw_stream()
        else:
            wait = min(wait, self.pacer.interval())  # a clock that went back must not stall it
            self._stream_frame = asyncio.get_running_loop().call_later(wait, self._draw_stream)

    def _draw_stream(self) -> None:
        self._stream_frame = None
        self._last_stream_frame = self.clock()
        self.invalidate()

    # --- interrupts and exit ------------------------------------------------------------
    def interrupt(self) -> None:
        """Esc: stop the running task only; queued messages come back into the draft."""
        if self.task is None:
            return
        if self.queue:
            # as typed: a big paste comes back as its placeholder, still holding the full text
            for q in reversed(self.queue):
                self.editor.prepend(q.shown, q.pastes)
            self.queue.clear()
        self.task.cancel()

    def exit(self, code: int) -> None:
        """Leave the app; a running task is cancelled and awaited first (so it saves)."""
        if self.exiting:
            return
        self.exiting = True
        self.exit_code = code
        # asyncio keeps only a weak reference to tasks: hold this one until it is done
        self._exit_task = asyncio.ensure_future(self._exit_after_task())

    async def _exit_after_task(self) -> None:
        task = self.task
        if task is not None:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
        app = self._app
        if app is not None and app.is_running and app.future is not None and not app.future.done():
            app.exit(result=self.exit_code)
