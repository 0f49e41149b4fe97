"""``.minicode/`` stays private and git-ignored, and a session survives it being removed
while open (``git clean -fdx``, ``rm -rf .minicode``)."""

from __future__ import annotations

import shutil
import stat
import subprocess
from pathlib import Path

import pytest

from minicode.errors import SessionError
from minicode.provider.types import Message
from minicode.session.store import SessionStore, session_path
from minicode.statedir import ensure_state_dir
from minicode.tools.tempfiles import TempJournal


def test_the_state_dir_is_private_and_ignores_everything_in_it(tmp_path: Path) -> None:
    root = ensure_state_dir(tmp_path)
    assert stat.S_IMODE(root.stat().st_mode) == 0o700
    assert (root / ".gitignore").read_text().splitlines()[-1] == "*"
    (root / ".gitignore").write_text("mine\n")
    ensure_state_dir(tmp_path)  # an existing .gitignore is left alone
    assert (root / ".gitignore").read_text() == "mine\n"


def test_a_link_in_place_of_the_gitignore_is_not_followed(tmp_path: Path) -> None:
    (tmp_path / ".minicode").mkdir()
    outside = tmp_path / "outside.txt"
    (tmp_path / ".minicode" / ".gitignore").symlink_to(outside)
    ensure_state_dir(tmp_path)
    assert not outside.exists()


@pytest.mark.parametrize("link", [".minicode", ".minicode/sessions", ".minicode/snapshots", ".minicode/local",
                                  ".minicode/tmp"])
def test_a_state_directory_that_is_a_link_is_refused_and_nothing_written_through_it(tmp_path: Path, link: str) -> None:
    """A repository can ship ``.minicode`` (or ``.minicode/sessions``) as a link to anywhere:
    minicode would write conversations and file copies there. It says so instead."""
    workspace, outside = tmp_path / "ws", tmp_path / "outside"
    workspace.mkdir()
    outside.mkdir()
    (workspace / link).parent.mkdir(parents=True, exist_ok=True)
    (workspace / link).symlink_to(outside)
    with pytest.raises(OSError, match="is a symbolic link .*remove the link"):
        ensure_state_dir(workspace)
    with pytest.raises(SessionError, match="is a symbolic link"):
        SessionStore.create(workspace)
    assert list(outside.iterdir()) == []


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_git_sees_nothing_of_minicode_state_including_temp_journals(tmp_path: Path) -> None:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    store, _ = SessionStore.create(tmp_path)
    store.append_message(Message.user("hi"))
    TempJournal(tmp_path, pid=4242).note(".", ".a.txt.0123.tmp")
    status = subprocess.run(["git", "status", "--porcelain", "-uall"], cwd=tmp_path, capture_output=True,
                            text=True, check=True).stdout
    store.close()
    assert (tmp_path / ".minicode" / "tmp").is_dir() and status == ""


def test_a_session_file_removed_while_open_is_written_again_whole(tmp_path: Path) -> None:
    store, sid = SessionStore.create(tmp_path)
    store.append_message(Message.user("first"))
    shutil.rmtree(tmp_path / ".minicode")  # git clean -fdx in another terminal
    store.append_message(Message(role="assistant", content="answer"))
    store.append_message(Message.user("second"))
    store.close()
    assert session_path(tmp_path, sid).exists()
    assert stat.S_IMODE((tmp_path / ".minicode").stat().st_mode) == 0o700
    assert (tmp_path / ".minicode" / ".gitignore").exists()
    again, loaded = SessionStore.open(tmp_path, sid)
    again.close()
    assert [m.content for m in loaded.messages] == ["first", "answer", "second"]


def test_another_file_in_its_place_is_never_overwritten(tmp_path: Path) -> None:
    store, sid = SessionStore.create(tmp_path)
    store.append_message(Message.user("first"))
    path = session_path(tmp_path, sid)
    path.unlink()
    path.write_text("someone else's\n")
    with pytest.raises(SessionError, match="another file now has its name"):
        store.append_message(Message.user("second"))
    with pytest.raises(SessionError, match="nothing more is saved"):
        store.append_message(Message.user("third"))
    store.close()
    assert path.read_text() == "someone else's\n"
