"""Undecodable bytes and lone surrogates never leave a tool result or input line."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from minicode.provider.types import ToolCall
from minicode.tools.base import ToolContext
from minicode.tools.registry import PreparedCall, default_registry
from minicode.tools.scrub import scrub


def test_scrub_keeps_clean_text_and_replaces_surrogates() -> None:
    clean = "héllo ✓"
    assert scrub(clean) is clean
    assert scrub("caf\udce9") == "caf\ufffd"  # a surrogate-escaped byte (os.listdir, argv)
    assert scrub("x\ud800y") == "x\ufffdy"  # a lone surrogate that never was a byte
    assert scrub(b"\xff\xfe ok".decode("utf-8", "surrogateescape")) == "\ufffd\ufffd ok"


@pytest.mark.parametrize("tool, args", [("ls", "{}"), ("glob", '{"pattern": "*"}'), ("grep", '{"pattern": "hi"}')])
async def test_undecodable_file_names_come_back_as_valid_text(ws: Path, ctx: ToolContext, tool: str, args: str) -> None:
    os.close(os.open(os.fsencode(ws) + b"/bad\xff.txt", os.O_CREAT | os.O_WRONLY, 0o644))
    (ws / "bad\udcff.txt").write_text("hi\n") if tool == "grep" else None
    (ws / "good.txt").write_text("hi\n")
    registry = default_registry()
    prepared = registry.prepare(ToolCall("c1", tool, args))
    assert isinstance(prepared, PreparedCall)
    result = await registry.execute(prepared, ctx)
    assert not result.is_error
    result.text.encode("utf-8")  # strict: would raise on a surrogate
    assert "bad\ufffd.txt" in result.text and "good.txt" in result.text
