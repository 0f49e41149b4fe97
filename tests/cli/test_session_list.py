"""``--sessions`` formatting: relative/absolute times, sizes, one-line messages cut to a width."""

from __future__ import annotations

import io
from pathlib import Path

from minicode.cli.frontends.shared.terminal_text import fit_cells
from minicode.cli.session_list import (
    absolute_time,
    format_sessions,
    human_size,
    one_line,
    relative_time,
    run_list,
)
from minicode.provider.types import Message
from minicode.session.catalog import SessionInfo
from minicode.session.store import SessionStore

NOW = 2_000_000_000.0


def _info(sid: str, age: float, text: str, messages: int = 3, size: int = 2048) -> SessionInfo:
    return SessionInfo(sid, size, int((NOW - age) * 1e9), messages, text)


def test_relative_times() -> None:
    assert relative_time(NOW - 5, NOW) == "just now"
    assert relative_time(NOW - 300, NOW) == "5 min ago"
    assert relative_time(NOW - 3 * 3600, NOW) == "3 h ago"
    assert relative_time(NOW - 86400, NOW) == "1 day ago"
    assert relative_time(NOW - 5 * 86400, NOW) == "5 days ago"
    assert relative_time(NOW - 21 * 86400, NOW) == "3 weeks ago"
    assert relative_time(NOW - 100 * 86400, NOW) == "3 months ago"
    assert relative_time(NOW + 60, NOW) == "just now"  # a clock set back


def test_sizes() -> None:
    assert human_size(512) == "512 B"
    assert human_size(2048) == "2.0 KiB"
    assert human_size(60 * 1024 * 1024) == "60 MiB"
    assert human_size(3 * 1024**3) == "3.0 GiB"


def test_one_line_removes_control_sequences_and_newlines() -> None:
    assert one_line("fix\nthe \x1b[31mbug\x1b[0m\tnow") == "fix the [31mbug[0m now"


def test_fit_cells_counts_wide_characters_twice() -> None:
    assert fit_cells("abcdef", 10) == "abcdef"
    assert fit_cells("abcdef", 4) == "abc…"
    assert fit_cells("日本語テキスト", 7) == "日本語…"


def test_table_rows_fit_the_width_and_show_short_ids() -> None:
    sessions = [
        _info("aaaa1111-0000-4000-8000-000000000001", 120, "first line\nsecond line " + "x" * 200),
        _info("bbbb2222-0000-4000-8000-000000000002", 90000, "docs", messages=1234, size=5 * 1024 * 1024),
    ]
    rows = format_sessions(sessions, NOW, 80)
    assert rows[0].startswith("ID") and "LAST ACTIVITY" in rows[0] and "FIRST MESSAGE" in rows[0]
    assert rows[1].startswith("aaaa1111  2 min ago · " + absolute_time(NOW - 120))
    assert "first line second line" in rows[1] and rows[1].endswith("…") and len(rows[1]) == 80
    assert rows[2].startswith("bbbb2222  1 day ago") and "1,234" in rows[2] and "5.0 MiB" in rows[2]
    assert all(len(r) <= 80 for r in rows)


def test_without_a_width_only_the_message_is_limited() -> None:
    rows = format_sessions([_info("aaaa1111-0000-4000-8000-000000000001", 5, "y" * 1000)], NOW, None)
    assert "y" * 199 + "…" in rows[1] and "y" * 201 not in rows[1]


def test_run_list_prints_rows_and_notes(workspace: Path) -> None:
    store, sid = SessionStore.create(workspace)
    store.append_message(Message.user("hello there"))
    store.close()
    out, err = io.StringIO(), io.StringIO()
    assert run_list(workspace, out, err, None) == 0
    assert sid[:8] in out.getvalue() and "hello there" in out.getvalue()
    assert "--session" in err.getvalue()


def test_run_list_with_no_sessions_says_so(workspace: Path) -> None:
    out, err = io.StringIO(), io.StringIO()
    assert run_list(workspace, out, err, 80) == 0
    assert out.getvalue() == "" and "no sessions" in err.getvalue()
