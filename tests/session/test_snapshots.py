"""The undo snapshot store: copies of what write/edit replace, the journal, the size cap."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest

from minicode.errors import SessionError, ToolError
from minicode.session.snapshots import DamagedSnapshot, SnapshotStore
from minicode.tools.base import Replaced

SID = "aaaa1111-0000-4000-8000-000000000001"


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def test_a_replaced_file_is_kept_with_its_mode_and_the_new_hash(workspace: Path) -> None:
    store = SnapshotStore(workspace, SID)
    store.begin_task(3, "fix the\nparser")
    store.before_replace(Replaced("src/a.py", True, b"old\n", 0o755, 4, b"new\n"))
    journal = store.read()
    (change,) = journal.changes
    assert change.task == 3 and change.path == "src/a.py"
    assert change.before.state == "file" and change.before.sha == _sha(b"old\n") and change.before.mode == 0o755
    assert change.after_sha == _sha(b"new\n")
    assert journal.titles == {3: "fix the parser"} and journal.tasks_with_changes() == [3]
    assert store.blob(change.before.sha) == b"old\n"
    root = workspace / ".minicode" / "snapshots"
    assert (root / ".gitignore").read_text() == "*\n"
    blob = root / SID / "blobs" / change.before.sha
    assert oct(blob.stat().st_mode & 0o777) == "0o600"


def test_created_and_too_large_files(workspace: Path) -> None:
    store = SnapshotStore(workspace, SID)
    store.begin_task(0, "t")
    store.before_replace(Replaced("new.txt", False, None, None, 0, b"x"))
    store.before_replace(Replaced("big.bin", True, None, 0o644, 20 * 2**20, b"y"))
    created, big = store.read().changes
    assert created.before.state == "missing"
    assert big.before.state == "unsaved" and big.before.size == 20 * 2**20
    assert not list((workspace / ".minicode" / "snapshots" / SID / "blobs").iterdir())


def test_commands_and_undone_tasks_are_recorded(workspace: Path) -> None:
    store = SnapshotStore(workspace, SID)
    store.begin_task(5, "run it")
    store.note_commands(5)
    store.before_replace(Replaced("a", True, b"1", 0o644, 1, b"2"))
    store.mark_undone([5])
    journal = store.read()
    assert journal.commands == {5} and journal.undone == {5} and journal.tasks_with_changes() == []


def test_a_damaged_journal_line_is_an_error(workspace: Path) -> None:
    store = SnapshotStore(workspace, SID)
    store.begin_task(1, "t")
    store.before_replace(Replaced("a", True, b"1", 0o644, 1, b"2"))
    with open(store.directory / "journal.jsonl", "a") as f:
        f.write('{"type":"change","task":1,"path":"/etc/passwd","before":{"state":"missing"},"after":{}}\n')
    with pytest.raises(SessionError, match="damaged at line 3"):
        store.read()


def test_a_damaged_or_missing_copy_is_reported(workspace: Path) -> None:
    store = SnapshotStore(workspace, SID)
    store.begin_task(1, "t")
    store.before_replace(Replaced("a", True, b"original", 0o644, 8, b"2"))
    sha = store.read().changes[0].before.sha
    (store.directory / "blobs" / sha).write_bytes(b"tampered")
    with pytest.raises(DamagedSnapshot, match="does not match its checksum"):
        store.blob(sha)
    (store.directory / "blobs" / sha).unlink()
    with pytest.raises(DamagedSnapshot, match="missing"):
        store.blob(sha)


def test_copies_are_pruned_oldest_first_past_the_cap(workspace: Path) -> None:
    other = SnapshotStore(workspace, "bbbb2222-0000-4000-8000-000000000002", cap=250)
    other.begin_task(1, "older session")
    other.before_replace(Replaced("x", True, b"o" * 100, 0o644, 100, b"n"))
    old_sha = other.read().changes[0].before.sha
    os.utime(other.directory / "blobs" / old_sha, (1, 1))  # long ago
    store = SnapshotStore(workspace, SID, cap=250)
    store.begin_task(1, "t")
    store.before_replace(Replaced("a", True, b"a" * 100, 0o644, 100, b"1"))
    assert other.read().pruned == set()  # 200 bytes: under the cap
    store.before_replace(Replaced("b", True, b"b" * 100, 0o644, 100, b"2"))
    assert other.read().pruned == {old_sha}  # the oldest copy went, in the other session
    assert not (other.directory / "blobs" / old_sha).exists()
    kept = {c.before.sha for c in store.read().changes}
    assert all((store.directory / "blobs" / sha).exists() for sha in kept)


def test_a_copy_that_cannot_be_kept_refuses_the_change(workspace: Path) -> None:
    (workspace / ".minicode").mkdir()
    (workspace / ".minicode" / "snapshots").write_text("not a directory")
    store = SnapshotStore(workspace, SID)
    with pytest.raises(ToolError, match="nothing was changed"):
        store.before_replace(Replaced("a", True, b"1", 0o644, 1, b"2"))


def test_undecodable_file_names_round_trip(workspace: Path) -> None:
    store = SnapshotStore(workspace, SID)
    name = os.fsdecode(b"caf\xe9.txt")
    store.before_replace(Replaced(name, False, None, None, 0, b"x"))
    line = (store.directory / "journal.jsonl").read_bytes().splitlines()[-1]
    json.loads(line)  # valid JSON (ASCII)
    assert store.read().changes[0].path == name


def _journal_lines(store: SnapshotStore) -> list[dict[str, object]]:
    return [json.loads(line) for line in (store.directory / "journal.jsonl").read_bytes().splitlines()]


def test_a_tasks_first_record_and_its_task_line_land_in_one_synced_write(
        workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    synced: list[int] = []
    real_fsync = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: (synced.append(fd), real_fsync(fd))[1])
    store = SnapshotStore(workspace, SID)
    store.begin_task(2, "build it")
    store.note_commands(2)
    assert len(synced) == 1  # was two: the task line, then the commands line
    store.note_commands(2)  # the task is announced: the commands line alone
    store.before_replace(Replaced("a", True, b"1", 0o644, 1, b"2"))
    assert len(synced) == 4  # the copy, then its change line
    assert [line["type"] for line in _journal_lines(store)] == ["task", "commands", "commands", "change"]
    journal = store.read()
    assert journal.titles == {2: "build it"} and journal.commands == {2}


def test_a_journal_that_cannot_be_written_leaves_the_task_unannounced(workspace: Path) -> None:
    (workspace / ".minicode").mkdir()
    elsewhere = workspace / "elsewhere"
    elsewhere.mkdir()
    (workspace / ".minicode" / "snapshots").symlink_to(elsewhere)  # refused: nothing written through it
    store = SnapshotStore(workspace, SID)
    store.begin_task(4, "t")
    with pytest.raises(OSError, match="symbolic link"):
        store.note_commands(4)
    assert list(elsewhere.iterdir()) == []
    (workspace / ".minicode" / "snapshots").unlink()
    store.note_commands(4)  # the task line was never written: it comes first now
    assert [line["type"] for line in _journal_lines(store)] == ["task", "commands"]


def test_a_change_whose_copy_fails_writes_no_journal_line(workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = SnapshotStore(workspace, SID)
    store.begin_task(1, "t")

    def full(path: Path, data: bytes) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr("minicode.session.snapshots.write_private", full)
    with pytest.raises(ToolError, match="nothing was changed"):
        store.before_replace(Replaced("a", True, b"old", 0o644, 3, b"new"))
    assert not (store.directory / "journal.jsonl").exists()  # no task line without its change
    monkeypatch.undo()
    store.before_replace(Replaced("a", True, b"old", 0o644, 3, b"new"))
    assert [line["type"] for line in _journal_lines(store)] == ["task", "change"]
