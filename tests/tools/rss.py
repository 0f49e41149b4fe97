"""Current resident set size of this process, for loose memory-growth checks (Linux /proc)."""

from __future__ import annotations

import os


def current_rss_bytes() -> int:
    with open("/proc/self/statm") as f:
        resident_pages = int(f.read().split()[1])
    return resident_pages * os.sysconf("SC_PAGE_SIZE")
