"""The workspace guard (``fsroot.locate``): inside is accepted, every way out is refused with an
actionable message."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from minicode.errors import ToolError
from minicode.tools.fsroot import locate
from minicode.tools.stamps import display_path


def resolve_in_workspace(workspace: Path, path: str, *, must_exist: bool = False) -> Path:
    """The real path inside the workspace ``path`` leads to (``fsroot.locate``)."""
    return locate(workspace, path, must_exist=must_exist).path


def test_relative_and_absolute_inside_are_accepted(ws: Path) -> None:
    (ws / "src").mkdir()
    (ws / "src" / "x.py").write_text("x\n")
    real = Path(os.path.realpath(ws))
    assert resolve_in_workspace(ws, "src/x.py", must_exist=True) == real / "src" / "x.py"
    assert resolve_in_workspace(ws, str(ws / "src" / "x.py")) == real / "src" / "x.py"
    assert resolve_in_workspace(ws, "./src/../src/x.py") == real / "src" / "x.py"
    assert resolve_in_workspace(ws, ".") == real
    assert resolve_in_workspace(ws, "new/dir/file.txt") == real / "new" / "dir" / "file.txt"


@pytest.mark.parametrize("bad", ["../../etc/passwd", "..", "src/../../outside.txt", "/etc/passwd", "/"])
def test_escapes_are_refused_with_actionable_message(ws: Path, bad: str) -> None:
    (ws / "src").mkdir()
    with pytest.raises(ToolError) as info:
        resolve_in_workspace(ws, bad)
    message = str(info.value)
    assert "paths must stay inside the workspace" in message
    assert "use a relative path like src/x.py" in message


def test_symlink_to_etc_inside_workspace_is_refused(ws: Path) -> None:
    (ws / "etc").symlink_to("/etc")
    with pytest.raises(ToolError, match="symlink 'etc' that points outside"):
        resolve_in_workspace(ws, "etc/passwd")
    with pytest.raises(ToolError):
        resolve_in_workspace(ws, "etc")


def test_symlinked_parent_directory_pointing_outside_is_refused(ws: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("secret")
    (ws / "a").mkdir()
    (ws / "a" / "b").symlink_to(outside)
    with pytest.raises(ToolError, match="points outside"):
        resolve_in_workspace(ws, "a/b/secret.txt", must_exist=True)
    with pytest.raises(ToolError, match="points outside"):
        resolve_in_workspace(ws, "a/b/new.txt")


def test_dangling_symlink_with_outside_target_is_refused(ws: Path, tmp_path: Path) -> None:
    (ws / "dangling").symlink_to(tmp_path / "does-not-exist-yet.txt")
    with pytest.raises(ToolError, match="points outside"):
        resolve_in_workspace(ws, "dangling")


def test_symlink_inside_pointing_inside_is_resolved_to_target(ws: Path) -> None:
    (ws / "real").mkdir()
    (ws / "alias").symlink_to(ws / "real")
    (ws / "link-to-new").symlink_to("real/new.txt")  # dangling but inside
    real = Path(os.path.realpath(ws))
    assert resolve_in_workspace(ws, "alias/f.txt") == real / "real" / "f.txt"
    assert resolve_in_workspace(ws, "link-to-new") == real / "real" / "new.txt"


def test_symlink_out_and_back_in_is_still_refused(ws: Path, tmp_path: Path) -> None:
    # ws/up -> tmp_path; "up/ws/x" ends inside, but goes through a link pointing outside.
    (ws / "up").symlink_to(tmp_path)
    with pytest.raises(ToolError, match="points outside"):
        resolve_in_workspace(ws, "up/ws/x")


def test_workspace_reached_through_symlink_accepts_absolute_paths(tmp_path: Path, ws: Path) -> None:
    alias = tmp_path / "alias"
    alias.symlink_to(ws)
    (ws / "f.txt").write_text("x")
    assert resolve_in_workspace(alias, str(alias / "f.txt"), must_exist=True) == Path(os.path.realpath(ws)) / "f.txt"
    assert resolve_in_workspace(alias, str(ws / "f.txt"), must_exist=True).name == "f.txt"


def test_missing_and_empty_paths(ws: Path) -> None:
    with pytest.raises(ToolError, match="no such file"):
        resolve_in_workspace(ws, "nope.txt", must_exist=True)
    with pytest.raises(ToolError, match="empty path"):
        resolve_in_workspace(ws, "  ")
    with pytest.raises(ToolError, match="NUL"):
        resolve_in_workspace(ws, "a\x00b")


def test_display_path_is_workspace_relative(ws: Path) -> None:
    real = Path(os.path.realpath(ws))
    assert display_path(ws, real / "src" / "x.py") == "src/x.py"
    assert display_path(ws, real) == "."
