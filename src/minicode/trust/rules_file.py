"""Which content of the workspace's rules file minicode wrote (or a person confirmed).

``.minicode/local/permissions.toml`` lives in the workspace, where an allowed command can
write it (``tar xf``, ``git checkout``, a script). Its rules are honoured only when its bytes
are the ones minicode last wrote there — by "always allow … in this project", ``/permissions
remove`` or ``/permissions trust`` — so rules the model planted are never in effect. The
digest is kept outside the workspace, under ``~/.minicode/trusted-rules/`` (one small JSON
file per workspace, 0600), a protected directory. Blocking file I/O (tiny files).
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from minicode import jsonsafe
from minicode.private_file import write_private

__all__ = ["RulesTrust"]

_DIR_MODE = 0o700


class RulesTrust:
    """The trusted digest of one workspace's rules file (see the module docstring)."""

    def __init__(self, directory: Path, workspace: Path) -> None:
        self.directory = directory
        self.workspace = str(workspace)
        key = hashlib.sha256(os.path.realpath(workspace).encode("utf-8", "surrogateescape")).hexdigest()[:32]
        self.record_file = directory / f"{key}.json"

    @classmethod
    def for_home(cls, home: str | None, workspace: Path) -> RulesTrust | None:
        """The record under ``home`` (``$HOME``), or None without a home to keep it in."""
        if not home or not os.path.isabs(home):
            return None
        return cls(Path(home) / ".minicode" / "trusted-rules", workspace)

    def trusted(self, data: bytes) -> bool:
        """Whether ``data`` is the content minicode last wrote or a person confirmed."""
        return self._recorded() == _digest(data)

    def record(self, data: bytes) -> None:
        """Remember ``data`` as trusted; raises OSError when the record cannot be written."""
        self.directory.mkdir(mode=_DIR_MODE, parents=True, exist_ok=True)
        body = json.dumps({"workspace": self.workspace, "sha256": _digest(data)}).encode("utf-8") + b"\n"
        write_private(self.record_file, body)

    def _recorded(self) -> str | None:
        try:
            data = jsonsafe.loads(self.record_file.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        digest = data.get("sha256") if isinstance(data, dict) else None
        return digest if isinstance(digest, str) else None


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()
