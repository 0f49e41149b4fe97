"""Live output of a running tool: decoded, made safe, coalesced and throttled for a hook.

``LiveOutput`` takes raw bytes as they arrive and calls ``ctx.on_output`` with the text
produced since its previous call: at most once per ``interval`` (chunks in between are
coalesced; a timer flushes what a quiet command left pending) and once more by ``close``.
Memory is constant: only the last ``LIVE_TAIL_CHARS`` of pending text are kept, since a
live view shows a tail anyway. Every text is ``redact(scrub(...))``'d like a tool result,
and a secret split across two chunks is never shown in halves: a pending end that could be
the start of a secret waits for the next call. A hook that raises is dropped, never lets
the tool fail.
"""

from __future__ import annotations

import asyncio
import codecs
from typing import Callable, Iterable

from minicode.redact import redact, significant_secrets
from minicode.tools.scrub import scrub

__all__ = ["LIVE_INTERVAL_S", "LIVE_TAIL_CHARS", "LiveOutput"]

LIVE_INTERVAL_S = 0.1
LIVE_TAIL_CHARS = 2048


class LiveOutput:
    """Feeds a hook from a byte stream; a no-op when ``hook`` is None. Use on one event loop."""

    def __init__(
        self,
        hook: Callable[[str], None] | None,
        secrets: Iterable[str] = (),
        interval: float = LIVE_INTERVAL_S,
        tail_chars: int = LIVE_TAIL_CHARS,
    ) -> None:
        self._hook = hook
        self._secrets = significant_secrets(secrets)
        longest = max((len(s) for s in self._secrets), default=0)
        # Room for a secret that straddles the front of the kept window (cut away on emit).
        self._margin = longest
        self._keep = tail_chars + longest
        self._interval = interval
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._pending = ""
        self._dropped = False  # raw text was cut from the front since the last emission
        self._last = float("-inf")
        self._timer: asyncio.TimerHandle | None = None

    def feed(self, data: bytes) -> None:
        """Take a chunk of output; emits now if the interval has passed, else schedules it."""
        if self._hook is None or not data:
            return
        self._add(self._decoder.decode(data))
        loop = asyncio.get_running_loop()
        wait = self._last + self._interval - loop.time()
        if wait <= 0:
            self._flush(final=False)
        elif self._timer is None:
            self._timer = loop.call_later(wait, self._on_timer)

    def close(self) -> None:
        """Emit whatever is left (the end of the output) and stop the timer. Idempotent."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._hook is None:
            return
        self._add(self._decoder.decode(b"", final=True))
        self._flush(final=True)

    def _add(self, text: str) -> None:
        self._pending += text
        if len(self._pending) > self._keep:
            self._pending = self._pending[-self._keep :]
            self._dropped = True

    def _on_timer(self) -> None:
        self._timer = None
        self._flush(final=False)

    def _flush(self, final: bool) -> None:
        text = redact(scrub(self._pending), self._secrets)
        if self._dropped:
            # A secret that began before the kept window may end inside its first
            # ``margin`` chars: drop them rather than show that secret's tail. (After
            # redacting: a whole secret further in must not be cut into a visible tail.)
            text = text[self._margin :]
            self._dropped = False
        hold = 0 if final else _secret_start_at_end(text, self._secrets)
        out, self._pending = (text[:-hold], text[-hold:]) if hold else (text, "")
        self._last = asyncio.get_running_loop().time()
        if out:
            self._call(out)

    def _call(self, text: str) -> None:
        hook = self._hook
        if hook is None:
            return
        try:
            hook(text)
        except Exception:  # noqa: BLE001 - a broken view must not break the command it shows
            self._hook = None


def _secret_start_at_end(text: str, secrets: tuple[str, ...]) -> int:
    """The length of the longest end of ``text`` that is a proper start of some secret."""
    best = 0
    for secret in secrets:
        for size in range(min(len(secret) - 1, len(text)), best, -1):
            if text.endswith(secret[:size]):
                best = size
                break
    return best
