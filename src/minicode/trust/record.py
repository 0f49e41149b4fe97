"""One confirmation kept outside the workspace: a small JSON file holding the digest a person
(or minicode itself) confirmed for one path, under ``~/.minicode/<kind>/`` (0700, the file 0600).

Both kinds of trust keep theirs this way — a project's config file (``trusted-config``) and a
workspace's rules file (``trusted-rules``) — where nothing the model runs in the workspace writes.
A record that cannot be read, or holds anything but a digest, is no confirmation. Blocking file
I/O (tiny files).
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from minicode import jsonsafe
from minicode.private_file import write_private

__all__ = ["TrustRecord"]

_DIR_MODE = 0o700


class TrustRecord:
    """The record of one path's confirmed digest (see the module docstring)."""

    def __init__(self, directory: Path, subject: Path, label: tuple[str, str]) -> None:
        self.directory = directory
        key = hashlib.sha256(os.path.realpath(subject).encode("utf-8", "surrogateescape")).hexdigest()[:32]
        self.file = directory / f"{key}.json"
        self._label = label
        """A field naming what the digest is of, written beside it for a person reading the file."""

    @classmethod
    def for_home(cls, home: str | None, kind: str, subject: Path, label: tuple[str, str]) -> TrustRecord | None:
        """The record under ``home`` (``$HOME``), or None without an absolute home to keep it in
        (then nothing is remembered, and a terminal is asked every time)."""
        if not home or not os.path.isabs(home):
            return None
        return cls(Path(home) / ".minicode" / kind, subject, label)

    def digest(self) -> str | None:
        """The digest recorded, or None (no record, unreadable, damaged)."""
        try:
            data = jsonsafe.loads(self.file.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        digest = data.get("sha256") if isinstance(data, dict) else None
        return digest if isinstance(digest, str) else None

    def remember(self, digest: str) -> None:
        """Record ``digest``; raises OSError when the record cannot be written."""
        self.directory.mkdir(mode=_DIR_MODE, parents=True, exist_ok=True)
        name, value = self._label
        write_private(self.file, json.dumps({name: value, "sha256": digest}).encode("utf-8") + b"\n")
