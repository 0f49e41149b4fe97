"""Listing a workspace's sessions and resolving id prefixes (session.catalog)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from minicode.errors import SessionError
from minicode.provider.types import Message
from minicode.session.catalog import FIRST_MESSAGE_CHARS, list_sessions, resolve_session_id, short_ids
from minicode.session.catalog_cache import CACHE_NAME
from minicode.session.store import SessionStore, session_path

A = "aaaa1111-0000-4000-8000-000000000001"
B = "aaaa2222-0000-4000-8000-000000000002"
C = "bbbb3333-0000-4000-8000-000000000003"


def _session(ws: Path, sid: str, *texts: str, mtime: int | None = None) -> Path:
    store, _ = SessionStore.create(ws, new_id=lambda: sid)
    for i, text in enumerate(texts):
        store.append_message(Message.user(text) if i % 2 == 0 else Message(role="assistant", content=text))
    store.close()
    path = session_path(ws, sid)
    if mtime is not None:
        os.utime(path, ns=(mtime * 10**9, mtime * 10**9))
    return path


def test_lists_sessions_with_messages_newest_first(workspace: Path) -> None:
    _session(workspace, A, "first task", "answer", mtime=1000)
    _session(workspace, B, "second task", mtime=3000)
    _session(workspace, C, mtime=5000)  # no message: not listed
    sessions, skipped = list_sessions(workspace)
    assert [s.id for s in sessions] == [B, A] and skipped == []
    assert sessions[1].messages == 2 and sessions[1].first_message == "first task"
    assert sessions[0].modified_ns == 3000 * 10**9
    assert sessions[0].size == session_path(workspace, B).stat().st_size


def test_no_sessions_directory_lists_nothing(workspace: Path) -> None:
    assert list_sessions(workspace) == ([], [])


def test_damaged_or_foreign_files_are_skipped_with_a_note(workspace: Path, tmp_path: Path) -> None:
    _session(workspace, A, "kept")
    other = tmp_path / "other"
    other.mkdir()
    foreign = _session(other.resolve(), B, "elsewhere")
    os.replace(foreign, session_path(workspace, B))
    session_path(workspace, C).write_text("not json\n")
    sessions, skipped = list_sessions(workspace)
    assert [s.id for s in sessions] == [A]
    assert len(skipped) == 2
    assert any("another workspace" in note for note in skipped)
    assert any("no valid header" in note for note in skipped)


def test_first_message_is_the_first_user_message_even_when_huge(workspace: Path) -> None:
    huge = "start " + "x" * 3_000_000 + ' "quoted" \\ end'
    _session(workspace, A, huge)
    (info,), _ = list_sessions(workspace, use_cache=False)
    assert info.first_message == huge[:FIRST_MESSAGE_CHARS]


def test_a_first_message_with_escapes_cut_in_the_middle(workspace: Path) -> None:
    text = '"\\é\n' * 400_000  # every character needs an escape in JSON; the line is > 1 MiB
    _session(workspace, A, text)
    (info,), _ = list_sessions(workspace, use_cache=False)
    assert info.first_message == text[:FIRST_MESSAGE_CHARS]


def test_a_session_that_grew_is_counted_again(workspace: Path) -> None:
    path = _session(workspace, A, "one", "two")
    assert list_sessions(workspace)[0][0].messages == 2
    cache = json.loads((path.parent / CACHE_NAME).read_text())
    assert cache["sessions"][A]["messages"] == 2
    store, _ = SessionStore.open(workspace, A)
    store.append_message(Message.user("three"))
    store.close()
    assert list_sessions(workspace)[0][0].messages == 3


def test_a_rewritten_file_is_scanned_again(workspace: Path) -> None:
    path = _session(workspace, A, "one", "two", "three")
    assert list_sessions(workspace)[0][0].messages == 3
    lines = path.read_bytes().splitlines(keepends=True)
    # same length, different bytes before the old end: not an append
    path.write_bytes(lines[0] + lines[1] + b" " * (sum(map(len, lines[2:])) - 1) + b"\n" + lines[1])
    assert list_sessions(workspace)[0][0].messages == 2


def test_a_damaged_cache_is_ignored(workspace: Path) -> None:
    path = _session(workspace, A, "one")
    (path.parent / CACHE_NAME).write_text("{broken")
    assert list_sessions(workspace)[0][0].messages == 1
    assert json.loads((path.parent / CACHE_NAME).read_text())["v"] == 2


def test_short_ids_are_unique_and_at_least_eight_characters() -> None:
    shorts = short_ids([A, B, C, "aaaa1111-0000-4000-8000-000000000009"])
    assert shorts[B] == "aaaa2222" and shorts[C] == "bbbb3333"
    assert shorts[A] == A  # it differs from ...009 only in its last character
    assert len(set(shorts.values())) == 4
    assert short_ids([A]) == {A: "aaaa1111"}


def test_resolve_a_whole_id_or_a_unique_prefix(workspace: Path) -> None:
    _session(workspace, A, "a")
    _session(workspace, B, "b")
    _session(workspace, C)  # empty: only its whole id names it
    assert resolve_session_id(workspace, "AAAA2") == B
    with pytest.raises(SessionError):  # an empty session is not found by a prefix
        resolve_session_id(workspace, "bbbb")
    assert resolve_session_id(workspace, C.upper()) == C
    assert resolve_session_id(workspace, " aaaa1111-0 ") == A


def test_a_prefix_of_a_damaged_session_names_it_so_loading_says_what_is_wrong(workspace: Path) -> None:
    """The id --sessions showed before the file was damaged still finds it: the load then says
    "corrupt at line N" instead of "no session starting with …"."""
    _session(workspace, A, "a")
    session_path(workspace, C).write_text("not json\n")
    assert resolve_session_id(workspace, "bbbb") == C
    session_path(workspace, "bbbb4444-0000-4000-8000-000000000004").write_text("{}\n")
    with pytest.raises(SessionError, match="no session starting with 'bbbb'"):
        resolve_session_id(workspace, "bbbb")  # two damaged files: which one is not guessed


def test_an_ambiguous_prefix_lists_the_candidates(workspace: Path) -> None:
    _session(workspace, A, "fix the parser")
    _session(workspace, B, "write the docs")
    with pytest.raises(SessionError) as e:
        resolve_session_id(workspace, "aaaa")
    assert e.value.exit_code == 2
    text = str(e.value)
    assert "ambiguous" in text and A in text and B in text and "fix the parser" in text


@pytest.mark.parametrize("given", ["zzz", "", "  ", "../etc/passwd", "a" * 37, "----"])
def test_malformed_or_unknown_prefixes_exit_2(workspace: Path, given: str) -> None:
    _session(workspace, A, "a")
    with pytest.raises(SessionError) as e:
        resolve_session_id(workspace, given)
    assert e.value.exit_code == 2


def test_an_unknown_prefix_says_how_to_list(workspace: Path) -> None:
    _session(workspace, A, "a")
    with pytest.raises(SessionError) as e:
        resolve_session_id(workspace, "c0ffee")
    assert e.value.exit_code == 2 and "minicode --sessions" in str(e.value)
