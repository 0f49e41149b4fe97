"""A ``Provider`` that is built when it is first used, or earlier on a background thread.

Building the OpenAI adapter imports it and httpx2 (httpcore2, h11, anyio) and makes an HTTP client
with its CA bundle: CPU that nothing on screen needs. The full-screen mode therefore draws its first frame with a ``DeferredProvider`` in the session and builds the real one right after, on
a thread (``warm``), while the user reads; a request sent before that finished waits for it.
A failed build is not remembered: it happens again, and raises, at the first request, where
the turn reports it like any other provider error.

Only cheap checks may run before the build (the caller's; ``provider.factory.check_model``),
so a configuration the adapter would refuse still fails at start-up, not at the first request.
"""

from __future__ import annotations

import threading
from typing import AsyncGenerator, Callable

from minicode.errors import MinicodeError
from minicode.provider.base import Provider
from minicode.provider.types import ChatRequest, ChatResponse, StreamEvent

__all__ = ["DeferredProvider"]


class DeferredProvider:
    """``build()`` once, on first use (``chat``, ``stream``) or ``warm``; thread-safe."""

    def __init__(self, model: str, build: Callable[[], Provider]) -> None:
        self.model = model
        self._build = build
        self._lock = threading.Lock()
        self._provider: Provider | None = None
        self._closed = False

    @property
    def built(self) -> bool:
        return self._provider is not None

    def provider(self) -> Provider:
        """The real provider, built now if it is not yet (waits for a build under way)."""
        with self._lock:
            if self._provider is None:
                if self._closed:
                    raise MinicodeError("the provider was closed")
                self._provider = self._build()
            return self._provider

    def warm(self) -> None:
        """Build now unless closed; a failure is left for the first request to raise."""
        try:
            if not self._closed:
                self.provider()
        except (MinicodeError, ImportError, OSError, ValueError):
            pass

    async def chat(self, request: ChatRequest) -> ChatResponse:
        return await self.provider().chat(request)

    def stream(self, request: ChatRequest) -> AsyncGenerator[StreamEvent, None]:
        return self.provider().stream(request)  # the real generator itself: no layer per event

    async def aclose(self) -> None:
        with self._lock:  # a build under way finishes first, then is closed here
            self._closed = True
            provider = self._provider
        if provider is not None:
            await provider.aclose()
