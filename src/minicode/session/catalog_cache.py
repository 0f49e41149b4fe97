"""A small cache of what listing learned about each session file: ``catalog.json``.

Beside the session files (``.minicode/sessions/catalog.json``, git-ignored with them). For
each session: the size and mtime it was scanned at, a digest of its last bytes, its message
count and its first user message. A file whose size and mtime are unchanged is not read at
all; one that grew and still ends, at the old size, with the same bytes was only appended to,
so only the new part is counted. It is only a cache: unreadable, damaged or from another
version, it is ignored and rebuilt; failing to save it is not an error.
"""

from __future__ import annotations

import json
import os
import secrets
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from minicode import jsonsafe

__all__ = ["CACHE_NAME", "CachedScan", "CatalogCache"]

CACHE_NAME = "catalog.json"
_VERSION = 1
_MAX_BYTES = 4 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class CachedScan:
    size: int
    mtime_ns: int
    tail: str
    """Hex of the last 64 bytes before ``size``."""
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
        tmp = self._path.with_name(f".{CACHE_NAME}.{secrets.token_hex(4)}.tmp")
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC | os.O_NOFOLLOW, 0o600)
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                json.dump(data, f, ensure_ascii=False, separators=(",", ":"))
            os.replace(tmp, self._path)
        except OSError:
            try:
                os.unlink(tmp)
            except OSError:
                pass


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
    if not isinstance(value.get("tail"), str) or not isinstance(value.get("first_message"), str):
        return None
    return CachedScan(value["size"], value["mtime_ns"], value["tail"], value["messages"], value["first_message"])
