"""A real rename-exchange race: a thread swaps a workspace directory and a symlink to an
outside directory as fast as it can (``renameat2(RENAME_EXCHANGE)``, falling back to a
rename/symlink swap where the call is missing). Shared by the tool-level and e2e race tests."""

from __future__ import annotations

import ctypes
import hashlib
import os
import threading
from pathlib import Path

__all__ = ["Swapper", "outside_fingerprint", "prepare_race_tree"]

_RENAME_EXCHANGE = 2
_AT_FDCWD = -100

OUTSIDE_MARK = "OUTSIDE-SECRET"


def prepare_race_tree(ws: Path, outside: Path) -> None:
    """ws/d (a real directory) and ws/l (a symlink to ``outside``), both holding f.txt."""
    (ws / "d").mkdir()
    (ws / "d" / "f.txt").write_text("inside line\n")
    outside.mkdir()
    (outside / "f.txt").write_text(f"{OUTSIDE_MARK} line\n")
    (outside / "outside-only.txt").write_text(f"{OUTSIDE_MARK}\n")
    (ws / "l").symlink_to(outside)


def outside_fingerprint(outside: Path) -> dict[str, str]:
    """Every name below ``outside`` with a hash of its content (directories as "dir")."""
    found: dict[str, str] = {}
    for path in sorted(outside.rglob("*")):
        rel = path.relative_to(outside).as_posix()
        found[rel] = "dir" if path.is_dir() else hashlib.sha256(path.read_bytes()).hexdigest()
    return found


class Swapper:
    """Swaps ``ws/d`` and ``ws/l`` in a loop until stopped; counts the swaps."""

    def __init__(self, ws: Path) -> None:
        self.a = os.fsencode(ws / "d")
        self.b = os.fsencode(ws / "l")
        self.swaps = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)
        libc = ctypes.CDLL(None, use_errno=True)
        self._renameat2 = getattr(libc, "renameat2", None)

    def __enter__(self) -> "Swapper":
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def _swap(self) -> None:
        if self._renameat2 is not None:
            if self._renameat2(_AT_FDCWD, self.a, _AT_FDCWD, self.b, _RENAME_EXCHANGE) != 0:
                raise OSError(ctypes.get_errno(), "renameat2")
            return
        tmp = self.a + b".swap"
        os.rename(self.a, tmp)
        os.rename(self.b, self.a)
        os.rename(tmp, self.b)

    def _loop(self) -> None:
        while not self._stop.is_set():
            self._swap()
            self.swaps += 1
