"""A small cache of what listing learned about each session file: ``catalog.json``.

Beside the session files (``.minicode/sessions/catalog.json``, git-ignored with them). For
each session: the size and mtime it was scanned at, its message count and its first user
message. A file whose size and mtime are unchanged is not read at all; any other is scanned
again (a byte search: ~60 ms for a 64 MiB session file, the largest). It is only a cache: unreadable, damaged or from another
version, it is ignored and rebuilt; failing to save it is not an error.
"""

from __future__ import annotations

import contextlib
import json
import os
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from minicode import jsonsafe
from minicode.private_file import write_private

__all__ = ["CACHE_NAME", "CachedScan", "CatalogCache"]

CACHE_NAME = "catalog.json"
_VERSION = 2  # 1 also kept a digest of each file's last bytes
_MAX_BYTES = 4 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class CachedScan:
    size: int
    mtime_ns: int
    messages: int
    first_message: str


class CatalogCache:
    """Load once, ``get``/``put`` per session, ``save`` at the end (only when something changed)."""

    def __init__(self, directory: Path) -> None:
        self._path = directory / CACHE_NAME
        self._entries = _load(self._path)
        self._changed = False

    def get(self, session_id: str) -> CachedScan | None:
        return self._entries.get(session_id)

    def put(self, session_id: str, scan: CachedScan) -> None:
        if self._entries.get(session_id) != scan:
            self._entries[session_id] = scan
            self._changed = True

    def save(self, keep: set[str]) -> None:
        """Write the cache (entries of ``keep`` only) atomically; errors are ignored."""
        stale = set(self._entries) - keep
        if not self._changed and not stale:
            return
        data = {"v": _VERSION, "sessions": {k: asdict(v) for k, v in self._entries.items() if k in keep}}
        with contextlib.suppress(OSError):
            write_private(self._path, json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode())


def _load(path: Path) -> dict[str, CachedScan]:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
        with os.fdopen(fd, "rb") as f:
            raw = f.read(_MAX_BYTES + 1)
        data = jsonsafe.loads(raw, repair_surrogates=True) if len(raw) <= _MAX_BYTES else None
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict) or data.get("v") != _VERSION or not isinstance(data.get("sessions"), dict):
        return {}
    out: dict[str, CachedScan] = {}
    for key, value in data["sessions"].items():
        scan = _entry(value)
        if isinstance(key, str) and scan is not None:
            out[key] = scan
    return out


def _entry(value: Any) -> CachedScan | None:
    if not isinstance(value, dict):
        return None
    ints = ("size", "mtime_ns", "messages")
    if not all(type(value.get(k)) is int and value[k] >= 0 for k in ints):
        return None
    if not isinstance(value.get("first_message"), str):
        return None
    return CachedScan(value["size"], value["mtime_ns"], value["messages"], value["first_message"])
