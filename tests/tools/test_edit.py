"""edit: freshness, uniqueness, CRLF, byte-exactness, miss diagnosis, atomicity, validation."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from minicode.errors import ToolError
from minicode.tools.base import ToolContext
from minicode.tools.edit import EditTool
from minicode.tools.read import ReadTool
from minicode.tools.write import WriteTool

edit = EditTool()


async def _read(ctx: ToolContext, path: str) -> None:
    await ReadTool().run({"path": path}, ctx)


async def test_edit_after_read_replaces_once(ws: Path, ctx: ToolContext) -> None:
    (ws / "a.py").write_text("def f():\n    return 1\n\ndef g():\n    return 2\n")
    await _read(ctx, "a.py")
    result = await edit.run({"path": "a.py", "old_text": "return 2", "new_text": "return 3"}, ctx)
    assert (ws / "a.py").read_text() == "def f():\n    return 1\n\ndef g():\n    return 3\n"
    assert result.text == "Edited a.py: 1 replacement (first at line 5)"
    assert result.summary == "1 replacement"
    # The session's own edit keeps the file fresh: a second edit needs no re-read.
    await edit.run({"path": "a.py", "old_text": "return 1", "new_text": "return 0"}, ctx)
    assert "return 0" in (ws / "a.py").read_text()


async def test_edit_after_write_needs_no_read(ws: Path, ctx: ToolContext) -> None:
    await WriteTool().run({"path": "n.txt", "content": "hello world\n"}, ctx)
    await edit.run({"path": "n.txt", "old_text": "world", "new_text": "there"}, ctx)
    assert (ws / "n.txt").read_text() == "hello there\n"


async def test_edit_without_prior_read_is_refused(ws: Path, ctx: ToolContext) -> None:
    (ws / "a.txt").write_text("x = 1\n")
    with pytest.raises(ToolError, match=r"has not been read in this session; read it first \(read path=a.txt\)"):
        await edit.run({"path": "a.txt", "old_text": "1", "new_text": "2"}, ctx)
    assert (ws / "a.txt").read_text() == "x = 1\n"


async def test_edit_after_external_change_is_refused(ws: Path, ctx: ToolContext) -> None:
    target = ws / "a.txt"
    target.write_text("x = 1\n")
    await _read(ctx, "a.txt")
    target.write_text("x = 10\n")
    with pytest.raises(ToolError, match="changed on disk since you last read it"):
        await edit.run({"path": "a.txt", "old_text": "x", "new_text": "y"}, ctx)
    assert target.read_text() == "x = 10\n"


async def test_same_size_same_mtime_change_is_caught_by_hash(ws: Path, ctx: ToolContext) -> None:
    target = ws / "a.txt"
    target.write_text("aaaa\n")
    await _read(ctx, "a.txt")
    st = target.stat()
    target.write_text("bbbb\n")
    os.utime(target, ns=(st.st_atime_ns, st.st_mtime_ns))  # hide the change from size/mtime
    with pytest.raises(ToolError, match="changed on disk"):
        await edit.run({"path": "a.txt", "old_text": "bbbb", "new_text": "cccc"}, ctx)


async def test_non_unique_old_text_lists_lines_and_replace_all_counts(ws: Path, ctx: ToolContext) -> None:
    (ws / "a.txt").write_text("x\nfoo\ny\nfoo\nfoo\n")
    await _read(ctx, "a.txt")
    with pytest.raises(ToolError, match=r"occurs 3 times \(starting at lines 2, 4, 5\).*replace_all=true"):
        await edit.run({"path": "a.txt", "old_text": "foo", "new_text": "bar"}, ctx)
    result = await edit.run({"path": "a.txt", "old_text": "foo", "new_text": "bar", "replace_all": True}, ctx)
    assert result.text.startswith("Edited a.txt: 3 replacements")
    assert (ws / "a.txt").read_text() == "x\nbar\ny\nbar\nbar\n"


async def test_missing_old_text_is_explained(ws: Path, ctx: ToolContext) -> None:
    (ws / "a.txt").write_text("alpha\nbeta\n")
    await _read(ctx, "a.txt")
    with pytest.raises(ToolError, match="old_text was not found"):
        await edit.run({"path": "a.txt", "old_text": "gamma delta epsilon", "new_text": "x"}, ctx)


async def test_tabs_vs_spaces_miss_is_explained_with_visible_whitespace(ws: Path, ctx: ToolContext) -> None:
    (ws / "m.go").write_text("func main() {\n\tfmt.Println(\"hi\")\n}\n")
    await _read(ctx, "m.go")
    with pytest.raises(ToolError) as info:
        await edit.run({"path": "m.go", "old_text": '    fmt.Println("hi")', "new_text": "x"}, ctx)
    message = str(info.value)
    assert "the file indents with tabs; old_text uses spaces" in message
    assert '     2  →fmt.Println("hi")' in message
    assert '····fmt.Println("hi")' in message
    assert "closest region is at line 2" in message


async def test_crlf_file_edited_with_lf_text_keeps_crlf(ws: Path, ctx: ToolContext) -> None:
    (ws / "w.txt").write_bytes(b"one\r\ntwo\r\nthree\r\n")
    await _read(ctx, "w.txt")
    await edit.run({"path": "w.txt", "old_text": "one\ntwo\n", "new_text": "ONE\nTWO\nextra\n"}, ctx)
    assert (ws / "w.txt").read_bytes() == b"ONE\r\nTWO\r\nextra\r\nthree\r\n"


async def test_bytes_outside_span_are_untouched(ws: Path, ctx: ToolContext) -> None:
    original = b"\xff\xfe junk \x80\nkeep me\ttabs  \nTARGET\nmixed\r\nend-no-newline"
    (ws / "raw.txt").write_bytes(original)
    await _read(ctx, "raw.txt")
    await edit.run({"path": "raw.txt", "old_text": "TARGET", "new_text": "DONE"}, ctx)
    assert (ws / "raw.txt").read_bytes() == original.replace(b"TARGET", b"DONE")


async def test_failure_before_rename_keeps_old_file(ws: Path, ctx: ToolContext, monkeypatch: pytest.MonkeyPatch) -> None:
    (ws / "a.txt").write_text("keep\n")
    await _read(ctx, "a.txt")

    def broken_replace(src: object, dst: object, **kwargs: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", broken_replace)
    with pytest.raises(ToolError, match="No space left"):
        await edit.run({"path": "a.txt", "old_text": "keep", "new_text": "lose"}, ctx)
    assert (ws / "a.txt").read_text() == "keep\n"
    assert [p.name for p in ws.iterdir()] == ["a.txt"]


async def test_validate_write_refusal_keeps_old_file(ws: Path, ctx: ToolContext) -> None:
    (ws / "MiniCode.md").write_text("fact\n")
    await _read(ctx, "MiniCode.md")
    ctx.validate_write = lambda path, data: "contains a NUL byte" if b"\x00" in data else None
    with pytest.raises(ToolError, match="refused: contains a NUL byte"):
        await edit.run({"path": "MiniCode.md", "old_text": "fact", "new_text": "fa\x00ct"}, ctx)
    assert (ws / "MiniCode.md").read_text() == "fact\n"


async def test_argument_errors(ws: Path, ctx: ToolContext) -> None:
    (ws / "d").mkdir()
    with pytest.raises(ToolError, match="old_text is empty"):
        await edit.run({"path": "x", "old_text": "", "new_text": "y"}, ctx)
    with pytest.raises(ToolError, match="identical"):
        await edit.run({"path": "x", "old_text": "y", "new_text": "y"}, ctx)
    with pytest.raises(ToolError, match="not a regular file"):
        await edit.run({"path": "d", "old_text": "a", "new_text": "b"}, ctx)
    with pytest.raises(ToolError, match="no such file"):
        await edit.run({"path": "missing.txt", "old_text": "a", "new_text": "b"}, ctx)


def test_preview_summarises() -> None:
    preview = edit.preview({"path": "a.py", "old_text": "a\nb", "new_text": "c", "replace_all": True})
    assert preview.target == "a.py"
    assert preview.detail == "replace every occurrence of 2 lines with 1 line"


@pytest.mark.parametrize(("old", "new", "renamed"), [
    ("calc_total", "compute_total", "calc_total"),
    ("def calc_total(lines):", "def compute_total(lines):", "calc_total"),  # the definition's line (seen live)
    ("x = calc_total(a) + calc_total(b)", "x = compute_total(a) + compute_total(b)", "calc_total"),
    ("return price * percent / 100", "return price * (100 - percent) / 100", None),  # a fix, not a rename
    ("def f(a, b):", "def g(a, c):", None),  # two names changed
    ("ab", "cd", None),  # too short to be a name worth a scan
    ("total = 1", "total = 2", None),
])
def test_which_edits_rename_a_name(old: str, new: str, renamed: str | None) -> None:
    from minicode.tools.edit import renamed_name

    assert renamed_name(old, new) == renamed
