"""Freed memory handed back to the system once a task has ended (issue 16 item 4).

A long session's peaks — each request body (the whole conversation, ~1 MB near a full
window), a compaction's summary request, the answers read back for a look back — are freed
into the C allocator's heap, and glibc returns free memory to the system only from the top
of its heaps: the process would keep, scattered in pages it no longer uses, the high-water
mark of every peak. ``malloc_trim(0)`` hands those pages back (glibc ≥ 2.8 releases free
pages anywhere in the heap, every arena). It costs a walk of the heap — about a millisecond
for the full screen's — so the full screen runs it once per task, a moment after the task
ended (``give_back_later``), when its last frame is out. Elsewhere (macOS, musl)
there is no such call and nothing is done. Pure: no prompt_toolkit, no rich.
"""

from __future__ import annotations

import asyncio
import sys
from typing import Callable

__all__ = ["DELAY", "give_back", "give_back_later"]

DELAY = 0.1
"""Seconds after a task ends: its last frame goes out first (redraws are 50 ms apart)."""

_trim: Callable[[int], int] | None = None
_looked = False
_pending: tuple[asyncio.AbstractEventLoop, asyncio.TimerHandle] | None = None


def _malloc_trim() -> Callable[[int], int] | None:
    global _trim, _looked
    if not _looked:
        _looked = True
        if sys.platform.startswith("linux"):
            try:
                import ctypes

                _trim = ctypes.CDLL(None).malloc_trim
            except (OSError, AttributeError):  # not glibc: no malloc_trim
                _trim = None
    return _trim


def give_back() -> bool:
    """Hand the free pages of the heap back to the system now; False where it cannot."""
    global _pending
    _pending = None
    trim = _malloc_trim()
    if trim is None:
        return False
    trim(0)
    return True


def give_back_later(delay: float = DELAY) -> None:
    """``give_back`` ``delay`` seconds from now on the running loop (once, however often asked)."""
    global _pending
    loop = asyncio.get_running_loop()
    if _pending is None or _pending[0] is not loop:  # (a loop that was closed never ran its call)
        _pending = loop, loop.call_later(delay, give_back)
