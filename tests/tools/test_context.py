"""The tool context: a copy with other hooks shares the session's read tracking, and nothing
about it shows the secrets it carries."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from minicode.tools.base import FileStamp, ToolContext


def test_a_copy_with_other_hooks_shares_the_read_tracking(tmp_path: Path) -> None:
    ctx = ToolContext(tmp_path, {"PATH": "/bin"}, secrets=("sk-1",))
    assert ctx.stamps is not ToolContext(tmp_path, {}).stamps  # a fresh dict each
    seen: list[str] = []
    quiet = replace(ctx, on_output=seen.append)
    assert quiet.on_output is not None and ctx.on_output is None
    quiet.stamps[tmp_path / "a"] = FileStamp(1, 2, "x")
    assert tmp_path / "a" in ctx.stamps
    assert "sk-1" not in repr(ctx) and "sk-1" not in str(quiet)  # no field dump in a log


def test_a_misspelt_field_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(TypeError):
        replace(ToolContext(tmp_path, {}), on_outptu=print)
