"""read: pages, offsets, hints, binary refusal, huge files, stamps."""

from __future__ import annotations

from pathlib import Path

import pytest

from minicode.errors import ToolError
from minicode.tools.base import ToolContext
from minicode.tools.read import ReadTool
from minicode.tools.truncate import HASH_MAX_FILE_BYTES, READ_MAX_BYTES

from .rss import current_rss_bytes

read = ReadTool()


async def test_reads_numbered_lines_and_records_stamp(ws: Path, ctx: ToolContext) -> None:
    (ws / "a.txt").write_text("one\ntwo\nthree\n")
    result = await read.run({"path": "a.txt"}, ctx)
    assert not result.is_error
    lines = result.text.splitlines()
    assert lines[:3] == ["     1\tone", "     2\ttwo", "     3\tthree"]
    assert "end of file" in lines[3]
    assert result.summary == "3 lines"
    stamp = ctx.stamps[(ws / "a.txt").resolve()]
    assert stamp.size == 14 and len(stamp.sha256) == 64


async def test_offset_and_limit_with_continue_hint(ws: Path, ctx: ToolContext) -> None:
    (ws / "n.txt").write_text("".join(f"line {i}\n" for i in range(1, 11)))
    result = await read.run({"path": "n.txt", "offset": 4, "limit": 3}, ctx)
    lines = result.text.splitlines()
    assert lines[:3] == ["     4\tline 4", "     5\tline 5", "     6\tline 6"]
    assert "offset=7" in lines[3]


async def test_page_stops_at_2000_lines(ws: Path, ctx: ToolContext) -> None:
    (ws / "long.txt").write_text("".join(f"{i}\n" for i in range(1, 5001)))
    result = await read.run({"path": "long.txt", "limit": 9999}, ctx)
    body = result.text.splitlines()
    assert body[1999] == "  2000\t2000"
    assert "offset=2001" in body[2000]
    nxt = await read.run({"path": "long.txt", "offset": 2001}, ctx)
    assert nxt.text.splitlines()[0] == "  2001\t2001"


async def test_page_stops_at_64_kib(ws: Path, ctx: ToolContext) -> None:
    line = "x" * 999 + "\n"
    (ws / "wide.txt").write_text(line * 200)
    result = await read.run({"path": "wide.txt"}, ctx)
    shown = [l for l in result.text.splitlines() if "\tx" in l]
    assert len(shown) == READ_MAX_BYTES // 1000  # 65 full lines fit in 64 KiB
    assert f"offset={len(shown) + 1}" in result.text


async def test_single_huge_line_stops_at_byte_cap(ws: Path, ctx: ToolContext) -> None:
    (ws / "one.txt").write_bytes(b"y" * (5 * 1024 * 1024) + b"\nnext\n")
    result = await read.run({"path": "one.txt"}, ctx)
    assert len(result.text) < READ_MAX_BYTES + 500
    assert "longer than" in result.text and "offset=2" in result.text
    nxt = await read.run({"path": "one.txt", "offset": 2}, ctx)
    assert nxt.text.splitlines()[0] == "     2\tnext"


async def test_binary_file_is_refused(ws: Path, ctx: ToolContext) -> None:
    (ws / "bin.dat").write_bytes(b"abc\x00def")
    with pytest.raises(ToolError, match="binary file"):
        await read.run({"path": "bin.dat"}, ctx)
    assert not ctx.stamps


async def test_invalid_utf8_is_replaced_and_said(ws: Path, ctx: ToolContext) -> None:
    (ws / "latin.txt").write_bytes(b"caf\xe9\n")
    result = await read.run({"path": "latin.txt"}, ctx)
    assert "caf\ufffd" in result.text and "not valid UTF-8" in result.text


async def test_errors_directory_missing_offset_past_end_and_outside(ws: Path, ctx: ToolContext) -> None:
    (ws / "d").mkdir()
    (ws / "short.txt").write_text("a\nb\n")
    with pytest.raises(ToolError, match="is a directory; use ls"):
        await read.run({"path": "d"}, ctx)
    with pytest.raises(ToolError, match="no such file"):
        await read.run({"path": "missing.txt"}, ctx)
    with pytest.raises(ToolError, match="past the end"):
        await read.run({"path": "short.txt", "offset": 3}, ctx)
    with pytest.raises(ToolError, match="inside the workspace"):
        await read.run({"path": "/etc/passwd"}, ctx)
    with pytest.raises(ToolError, match="inside the workspace"):
        await read.run({"path": "../../etc/passwd"}, ctx)


async def test_empty_file(ws: Path, ctx: ToolContext) -> None:
    (ws / "e.txt").write_text("")
    assert "[empty file]" in (await read.run({"path": "e.txt"}, ctx)).text


async def test_crlf_lines_are_shown_without_cr(ws: Path, ctx: ToolContext) -> None:
    (ws / "w.txt").write_bytes(b"a\r\nb\r\n")
    assert (await read.run({"path": "w.txt"}, ctx)).text.splitlines()[:2] == ["     1\ta", "     2\tb"]


async def test_1gb_sparse_file_first_page_with_flat_memory(ws: Path, ctx: ToolContext) -> None:
    big = ws / "big.txt"
    with open(big, "wb") as f:
        f.write("".join(f"row {i}\n" for i in range(1, 3001)).encode())
        f.truncate(1024**3)  # the rest is a hole: no disk used
    before = current_rss_bytes()
    result = await read.run({"path": "big.txt"}, ctx)
    growth = current_rss_bytes() - before
    assert result.text.splitlines()[0] == "     1\trow 1"
    assert "offset=2001" in result.text
    assert growth < 32 * 1024 * 1024, growth
    stamp = ctx.stamps[big.resolve()]
    # Above the hash threshold the stamp is size+mtime only (documented policy).
    assert stamp.size == 1024**3 and stamp.sha256 == "" and 1024**3 > HASH_MAX_FILE_BYTES


async def test_one_line_summaries_are_singular(ws: Path, ctx: ToolContext) -> None:
    from minicode.tools.search import LsTool
    from minicode.tools.write import WriteTool

    (ws / "one.txt").write_text("only\n")
    assert (await read.run({"path": "one.txt"}, ctx)).summary == "1 line"
    written = await WriteTool().run({"path": "w.txt", "content": "x\n"}, ctx)
    assert written.text == "Created w.txt (1 line, 2 bytes)"
    (ws / "sub").mkdir()
    (ws / "sub" / "f").write_text("")
    assert (await LsTool().run({"path": "sub"}, ctx)).summary == "1 line"


async def test_assists_show_a_short_file_whole_whatever_the_page_asked(ws: Path, ctx: ToolContext) -> None:
    # a 1.5B model asks for offset 4 of a 2-line file, or two lines of five, and then gives up
    (ws / "settings.py").write_text('HOST = "0.0.0.0"\nPORT = 8731\n')
    ctx.read_before_write = True
    past = await read.run({"path": "settings.py", "offset": 4, "limit": 2}, ctx)
    assert past.text.splitlines()[:2] == ['     1\tHOST = "0.0.0.0"', "     2\tPORT = 8731"]
    (ws / "n.txt").write_text("".join(f"line {i}\n" for i in range(1, 301)))
    page = (await read.run({"path": "n.txt", "offset": 150, "limit": 100}, ctx)).text.splitlines()
    assert page[0] == "     1\tline 1" and page[248] == "   249\tline 249" and "offset=250" in page[249]


async def test_assists_keep_an_offset_past_the_first_pages(ws: Path, ctx: ToolContext) -> None:
    (ws / "n.txt").write_text("".join(f"line {i}\n" for i in range(1, 501)))
    ctx.read_before_write = True
    page = (await read.run({"path": "n.txt", "offset": 301, "limit": 5}, ctx)).text.splitlines()
    assert page[0] == "   301\tline 301" and len(page) == 201  # the 200-line floor, then the end
    with pytest.raises(ToolError, match="past the end"):
        await read.run({"path": "n.txt", "offset": 900}, ctx)
