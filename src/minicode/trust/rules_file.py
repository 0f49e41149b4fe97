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
import os
from pathlib import Path

from minicode.trust.record import TrustRecord

__all__ = ["RulesTrust"]


class RulesTrust:
    """The trusted digest of one workspace's rules file (see the module docstring)."""

    def __init__(self, directory: Path, workspace: Path) -> None:
        self._record = TrustRecord(directory, workspace, ("workspace", str(workspace)))
        self.record_file = self._record.file

    @classmethod
    def for_home(cls, home: str | None, workspace: Path) -> RulesTrust | None:
        """The record under ``home`` (``$HOME``), or None without a home to keep it in."""
        if not home or not os.path.isabs(home):
            return None
        return cls(Path(home) / ".minicode" / "trusted-rules", workspace)

    def trusted(self, data: bytes) -> bool:
        """Whether ``data`` is the content minicode last wrote or a person confirmed."""
        return self._record.digest() == _digest(data)

    def record(self, data: bytes) -> None:
        """Remember ``data`` as trusted; raises OSError when the record cannot be written."""
        self._record.remember(_digest(data))


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()
