"""The model's context window in effect, and where the number came from.

From the configuration (``config``), from what the server reported (``llama.cpp /props``,
``ollama /api/show``, ``vllm max_model_len`` …, remembered per endpoint and model), or the
default while nothing better is known (``default (unknown)``). A window still to be asked of
the server is asked once: in the background when the frontend starts it (the full screen,
for its status line), else when the first compaction decision needs it
(``ModelContext.prepare``): a small first request never waits for it.
"""

from __future__ import annotations

import asyncio
from typing import Any, Callable, Coroutine

__all__ = ["Asker", "ContextWindow"]

Asker = Callable[[], Coroutine[Any, Any, tuple[int, str] | None]]
"""Asks the server: (tokens, source), or None when it did not say (never raises for that)."""


class ContextWindow:
    """Tokens and source; ``settle`` replaces the default by the server's answer."""

    __slots__ = ("_ask", "_listeners", "_task", "source", "tokens")

    def __init__(self, tokens: int, source: str, ask: Asker | None = None) -> None:
        self.tokens = tokens
        self.source = source
        self._ask = ask
        self._task: asyncio.Task[tuple[int, str] | None] | None = None
        self._listeners: list[Callable[[], None]] = []

    @property
    def pending(self) -> bool:
        """The server is still to be asked (or is being asked)."""
        return self._ask is not None

    def start(self, on_answer: Callable[[], None] | None = None) -> None:
        """Ask in the background (needs a running event loop); the answer applies when it
        comes, and ``on_answer`` is called then (a status line redraws)."""
        if on_answer is not None and self._ask is not None:
            self._listeners.append(on_answer)
        if self._ask is None or self._task is not None:
            return
        self._task = asyncio.get_running_loop().create_task(self._ask())
        self._task.add_done_callback(self._answered)

    async def settle(self) -> None:
        """Wait for the answer (asking now if nobody has): afterwards ``tokens`` is final. A
        cancelled caller leaves the question running for the next one."""
        self.start()
        task = self._task
        if task is not None:
            await asyncio.wait((task,))
            self._answered(task)  # unless its done callback came first

    def _answered(self, task: asyncio.Task[tuple[int, str] | None]) -> None:
        if self._task is not task:
            return
        self._ask = None
        self._task = None
        listeners, self._listeners = self._listeners, []
        if task.cancelled() or task.exception() is not None:
            return  # an asker's bug leaves the default in effect, like a server that says nothing
        found = task.result()
        if found is not None:
            self.tokens, self.source = found
        for listener in listeners:
            listener()

    def close(self) -> None:
        """Stop a question still out (the session is closing)."""
        if self._task is not None:
            self._task.cancel()
