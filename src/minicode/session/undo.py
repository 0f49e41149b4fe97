"""/undo and the file part of /rewind: which files to put back, and putting them back.

``plan_last`` looks at the newest task that changed files and was not undone yet; ``plan_since``
at every such task from a point on (a rewind). A plan says, per file, what would happen —
restore the kept copy, delete a file the task created, or skip it and why: changed since
minicode wrote it (never overwritten), no copy kept (too large), copy pruned, copy damaged — with
a line count of the change it undoes. ``apply`` checks each file again right before touching it,
restores through the same confined directory descriptors the tools use (``tools.fsroot``), and
records the tasks as undone. Commands run by bash are not tracked; a plan says when its tasks
(or later ones) ran any. Blocking: call through ``asyncio.to_thread``.
"""

from __future__ import annotations

import difflib
import hashlib
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Literal

from minicode.errors import MinicodeError
from minicode.session.snapshots import TOTAL_CAP_BYTES, Before, Change, DamagedSnapshot, Journal, SnapshotStore
from minicode.tools.fsresolve import NotARegularFile
from minicode.tools.fsroot import PathMissing, write_target
from minicode.tools.truncate import SNAPSHOT_MAX_FILE_BYTES

__all__ = ["PASSED_OVER", "FilePlan", "Nothing", "UndoPlan", "UndoResult", "apply", "plan_last", "plan_since"]

_DIFF_MAX_BYTES = 1024 * 1024
Action = Literal["restore", "delete", "skip", "same"]
PASSED_OVER = ("nothing can be put back; the task is left as it is and passed over: "
               "another /undo goes to the task before it")


@dataclass(frozen=True, slots=True)
class FilePlan:
    path: str
    action: Action
    """restore the copy, delete the created file, skip it (``why``), or nothing to do (same)."""
    why: str = ""
    added: int | None = None
    """Lines the undo adds back / removes (None: not counted: binary or large)."""
    removed: int | None = None
    damaged: bool = False


@dataclass(frozen=True, slots=True)
class UndoPlan:
    tasks: tuple[int, ...]
    titles: tuple[str, ...]
    files: tuple[FilePlan, ...]
    ran_commands: bool
    """These tasks ran bash commands: whatever they changed is not undone."""
    later_commands: bool
    """Tasks after these ran commands (their changes stay, and may depend on these files)."""
    changes: tuple[Change, ...] = ()
    latest: bool = True
    """The planned task is the conversation's newest one (False: later tasks changed no file
    or were undone already, so /undo reaches back to an earlier task)."""

    @property
    def actionable(self) -> tuple[FilePlan, ...]:
        return tuple(f for f in self.files if f.action in ("restore", "delete"))


@dataclass(frozen=True, slots=True)
class Nothing:
    """Nothing to undo, and why (with a note when commands ran: they are not tracked)."""

    reason: str


@dataclass(frozen=True, slots=True)
class UndoResult:
    restored: tuple[str, ...]
    deleted: tuple[str, ...]
    skipped: tuple[tuple[str, str], ...]
    """(path, why) — also files that changed between the plan and now."""

    @property
    def damaged(self) -> bool:
        return any("damaged" in why or "missing from the snapshot" in why for _, why in self.skipped)


def plan_last(store: SnapshotStore, workspace: Path, newest_task: int | None = None) -> UndoPlan | Nothing:
    """The newest task with file changes not undone yet (SessionError: damaged journal).
    ``newest_task``: the raw id of the conversation's last user message (the plan says whether
    it is that task or an earlier one)."""
    journal = store.read()
    tasks = journal.tasks_with_changes()
    if not tasks:
        ran = sorted(t for t in journal.commands if t not in journal.undone)
        note = " Commands run by bash are not tracked, so what they changed cannot be undone." if ran else ""
        return Nothing("nothing to undo: no file changed by write or edit is left to restore." + note)
    plan = _plan(store, workspace, journal, [tasks[-1]])
    if newest_task is not None and tasks[-1] < newest_task:
        plan = replace(plan, latest=False)
    return plan


def plan_since(store: SnapshotStore, workspace: Path, first_task: int) -> UndoPlan | Nothing:
    """Every task from ``first_task`` (a raw message id) on with changes not undone yet."""
    journal = store.read()
    tasks = [t for t in journal.tasks_with_changes() if t >= first_task]
    if not tasks:
        ran = any(t >= first_task for t in journal.commands)
        note = " Commands run by bash are not tracked." if ran else ""
        return Nothing("no file was changed by write or edit since that point." + note)
    return _plan(store, workspace, journal, tasks)


def _plan(store: SnapshotStore, workspace: Path, journal: Journal, tasks: list[int]) -> UndoPlan:
    chosen = set(tasks)
    changes = [c for c in journal.changes if c.task in chosen]
    first: dict[str, Change] = {}
    last: dict[str, Change] = {}
    for change in changes:
        first.setdefault(change.path, change)
        last[change.path] = change
    files = tuple(_file_plan(store, workspace, journal, first[p].before, last[p].after_sha, p) for p in first)
    return UndoPlan(
        tasks=tuple(tasks),
        titles=tuple(journal.titles.get(t, "") for t in tasks),
        files=files,
        ran_commands=bool(chosen & journal.commands),
        later_commands=any(t > max(tasks) for t in journal.commands),
        changes=tuple(changes),
    )


def _file_plan(store: SnapshotStore, workspace: Path, journal: Journal, before: Before, after_sha: str,
               path: str) -> FilePlan:
    try:
        current = _current(workspace, path)
    except NotARegularFile:
        return FilePlan(path, "skip", "it is no longer the file minicode wrote (now a link, a directory or "
                                      "another kind of file); not touched")
    except MinicodeError as e:
        return FilePlan(path, "skip", f"cannot be read now ({str(e).split(';')[0]})")
    if current is None:
        if before.state == "missing":
            return FilePlan(path, "same")
        return FilePlan(path, "skip", "it was deleted since minicode changed it; not recreated")
    if before.state == "file" and _sha(current) == before.sha:
        return FilePlan(path, "same")
    if _sha(current) != after_sha:
        return FilePlan(path, "skip", "it was changed since minicode wrote it (by you or another program); not overwritten")
    if before.state == "missing":
        return FilePlan(path, "delete", removed=_count_lines(current))
    if before.state == "unsaved":
        return FilePlan(path, "skip", f"no copy was kept: it was {before.size:,} bytes, above the "
                                      f"{SNAPSHOT_MAX_FILE_BYTES // (1024 * 1024)} MiB snapshot limit")
    if before.sha in journal.pruned:
        return FilePlan(path, "skip", f"its copy was pruned (snapshots keep at most "
                                      f"{TOTAL_CAP_BYTES // (1024 * 1024)} MiB, oldest first)")
    try:
        old = store.blob(before.sha)
    except DamagedSnapshot as e:
        return FilePlan(path, "skip", f"cannot be restored: {e}", damaged=True)
    added, removed = _line_changes(current, old)
    return FilePlan(path, "restore", added=added, removed=removed)


def apply(store: SnapshotStore, workspace: Path, plan: UndoPlan) -> UndoResult:
    """Put the plan's files back (each checked again first) and mark its tasks undone."""
    restored: list[str] = []
    deleted: list[str] = []
    skipped: list[tuple[str, str]] = [(f.path, f.why) for f in plan.files if f.action == "skip"]
    first: dict[str, Change] = {}
    last: dict[str, Change] = {}
    for change in plan.changes:
        first.setdefault(change.path, change)
        last[change.path] = change
    for item in plan.actionable:
        try:
            done = _put_back(store, workspace, item.path, first[item.path].before, last[item.path].after_sha)
        except (MinicodeError, OSError) as e:
            skipped.append((item.path, f"not restored: {e}"))
            continue
        if done is None:
            skipped.append((item.path, "it was changed after /undo looked at it; not overwritten"))
        elif done:
            restored.append(item.path)
        else:
            deleted.append(item.path)
    store.mark_undone(list(plan.tasks))
    return UndoResult(tuple(restored), tuple(deleted), tuple(skipped))


def _put_back(store: SnapshotStore, workspace: Path, path: str, before: Before, after_sha: str) -> bool | None:
    """Restore (True) or delete (False) ``path``; None when it changed since the plan."""
    data = store.blob(before.sha) if before.state == "file" else None
    with write_target(workspace, path, make_parents=before.state == "file", follow_link=False) as target:
        current = target.read_existing(SNAPSHOT_MAX_FILE_BYTES)
        if current is None or len(current[0]) > SNAPSHOT_MAX_FILE_BYTES or _sha(current[0]) != after_sha:
            return None
        if data is None:
            target.remove()
            return False
        target.replace(data, mode=before.mode)
        return True


def _current(workspace: Path, path: str) -> bytes | None:
    """The file's content now (beyond the copy limit it cannot be what minicode wrote, and its
    hash will say so), or None when it is gone (its directory too)."""
    try:
        with write_target(workspace, path, follow_link=False) as target:
            found = target.read_existing(SNAPSHOT_MAX_FILE_BYTES)
    except PathMissing:
        return None
    return None if found is None else found[0]


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _count_lines(data: bytes) -> int | None:
    if b"\x00" in data[:8192]:
        return None
    return data.count(b"\n") + (0 if data.endswith(b"\n") or not data else 1)


def _line_changes(current: bytes, old: bytes) -> tuple[int | None, int | None]:
    """(lines the restore adds back, lines it removes), or (None, None) for binary/large files."""
    if max(len(current), len(old)) > _DIFF_MAX_BYTES or b"\x00" in current[:8192] or b"\x00" in old[:8192]:
        return None, None
    a = current.decode("utf-8", "replace").splitlines()
    b = old.decode("utf-8", "replace").splitlines()
    added = removed = 0
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b).get_opcodes():
        if tag in ("replace", "delete"):
            removed += i2 - i1
        if tag in ("replace", "insert"):
            added += j2 - j1
    return added, removed
