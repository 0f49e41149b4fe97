"""Approval preview bodies of write, edit and bash (built from the arguments alone)."""

from __future__ import annotations

from minicode.tools.bash import BashTool
from minicode.tools.edit import EditTool
from minicode.tools.preview_body import MAX_BODY_LINES, content_body, diff_body
from minicode.tools.write import WriteTool


def test_write_body_is_the_start_of_the_content():
    content = "".join(f"line {i}\n" for i in range(1, 31))
    body = WriteTool().preview({"path": "a.txt", "content": content}).body
    lines = body.splitlines()
    assert lines[0] == "line 1" and lines[MAX_BODY_LINES - 1] == "line 20"
    assert lines[-1] == "… 10 more lines" and len(lines) == MAX_BODY_LINES + 1


def test_write_body_short_and_empty_content():
    assert WriteTool().preview({"path": "a", "content": "x\ny\n"}).body == "x\ny"
    assert WriteTool().preview({"path": "a", "content": ""}).body == ""
    assert content_body("a\nb", limit=1) == "a\n… 1 more line"


def test_edit_body_is_a_mini_diff():
    preview = EditTool().preview({"path": "f.py", "old_text": "a = 1\nb = 2", "new_text": "a = 3"})
    assert preview.body == "- a = 1\n- b = 2\n+ a = 3"
    every = EditTool().preview({"path": "f", "old_text": "x", "new_text": "y", "replace_all": True})
    assert every.body.splitlines() == ["- x", "+ y", "(replace_all)"]


def test_edit_body_is_capped_on_both_sides():
    old = "\n".join(f"o{i}" for i in range(50))
    new = "\n".join(f"n{i}" for i in range(50))
    lines = diff_body(old, new).splitlines()
    assert len([x for x in lines if x.startswith("- ")]) == 10
    assert len([x for x in lines if x.startswith("+ ")]) == 10
    assert "… 40 more lines" in lines
    # a short old side leaves the room to the new side
    lines = diff_body("a", new).splitlines()
    assert lines[0] == "- a" and len([x for x in lines if x.startswith("+ ")]) == MAX_BODY_LINES - 1


def test_bash_body_only_for_multi_line_commands():
    assert BashTool().preview({"command": "ls -la"}).body == ""
    script = "set -e\nmake\nmake test"
    assert BashTool().preview({"command": script}).body == script
    # a malformed argument does not break the preview
    assert BashTool().preview({}).body == ""


def test_content_body_squeezes_runs_of_blank_lines_before_capping() -> None:
    from minicode.tools.preview_body import content_body, squeeze_blank_runs

    body = content_body("#!/bin/sh\n" + "\n" * 40 + "rm -rf ~\n")
    assert body.splitlines() == ["#!/bin/sh", "⋯ 40 blank lines", "rm -rf ~"]
    assert squeeze_blank_runs(["a", "", "b", " ", "\t", "c"]) == ["a", "", "b", "⋯ 2 blank lines", "c"]
    assert squeeze_blank_runs(["", ""]) == ["⋯ 2 blank lines"]
