"""Leftover write temp files: noted before they exist, removed at the next start — only the
noted ones, of the exact temp shape, of processes that are gone, never outside the workspace."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from minicode.tools.fsroot import write_target
from minicode.tools.fswrite import is_temp_name, temp_name
from minicode.tools.tempfiles import TEMP_JOURNAL_DIR, TempJournal, clean_leftover_temps


def _dead_pid() -> int:
    proc = subprocess.Popen(["true"])
    proc.wait()
    return proc.pid


def _journal(ws: Path, pid: int, *entries: tuple[str, str]) -> None:
    directory = ws / TEMP_JOURNAL_DIR
    directory.mkdir(parents=True, exist_ok=True)
    (directory / f"writes-{pid}.jsonl").write_text("".join(json.dumps(list(e)) + "\n" for e in entries))


def test_a_write_notes_its_temp_file_before_creating_it(ws: Path) -> None:
    journal = TempJournal(ws)
    seen: list[tuple[str, str]] = []

    def note(directory: str, name: str) -> None:
        assert not (ws / directory / name).exists()  # noted before it exists
        seen.append((directory, name))
        journal.note(directory, name)

    with write_target(ws, "sub/a.txt", make_parents=True, on_temp=note) as target:
        target.replace(b"data")
    assert len(seen) == 1 and seen[0][0] == "sub" and is_temp_name(seen[0][1])
    lines = (ws / TEMP_JOURNAL_DIR / f"writes-{os.getpid()}.jsonl").read_text().splitlines()
    assert [tuple(json.loads(line)) for line in lines] == seen
    journal.discard()
    assert not (ws / TEMP_JOURNAL_DIR / f"writes-{os.getpid()}.jsonl").exists()


def test_leftovers_of_a_dead_process_are_removed_and_nothing_else(ws: Path, tmp_path: Path) -> None:
    (ws / "sub").mkdir()
    left = temp_name("a.txt")
    (ws / "sub" / left).write_text("half written")
    unnoted = temp_name("b.txt")
    (ws / "sub" / unnoted).write_text("not ours: never noted")
    (ws / "keep.txt").write_text("a noted name that is not a temp name")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / left).write_text("outside")
    (ws / "escape").symlink_to(outside)
    dead = _dead_pid()
    _journal(ws, dead, ("sub", left), (".", "keep.txt"), ("escape", left), ("../outside", left), ("sub", "gone.0123456789ab.tmp"))
    (ws / TEMP_JOURNAL_DIR / f"writes-{dead}.jsonl").open("a").write('["torn')  # killed mid-append
    removed = clean_leftover_temps(ws)
    assert removed == [f"sub/{left}"]
    assert not (ws / "sub" / left).exists()
    assert (ws / "sub" / unnoted).exists() and (ws / "keep.txt").exists()
    assert (outside / left).exists()  # a link leading out is never followed
    assert not (ws / TEMP_JOURNAL_DIR / f"writes-{dead}.jsonl").exists()


def test_a_running_process_keeps_its_temp_files(ws: Path) -> None:
    live = temp_name("c.txt")
    (ws / live).write_text("being written right now")
    _journal(ws, os.getpid(), (".", live))
    with subprocess.Popen(["sleep", "30"]) as other:
        _journal(ws, other.pid, (".", live))
        assert clean_leftover_temps(ws) == []
        other.kill()
    assert (ws / live).exists()


def test_without_any_journal_nothing_happens(ws: Path) -> None:
    assert clean_leftover_temps(ws) == []
    assert not (ws / ".minicode").exists()


def test_a_planted_journal_nested_absurdly_deep_does_not_stop_the_start(ws: Path) -> None:
    """The journal lives in the workspace, where a command can write anything."""
    (ws / "sub").mkdir()
    left = temp_name("a.txt")
    (ws / "sub" / left).write_text("half written")
    dead = _dead_pid()
    _journal(ws, dead, ("sub", left))
    with (ws / TEMP_JOURNAL_DIR / f"writes-{dead}.jsonl").open("a") as f:
        f.write("[" * 100_000 + "]" * 100_000 + "\n")
    assert clean_leftover_temps(ws) == [f"sub/{left}"]
