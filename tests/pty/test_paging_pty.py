"""PageUp / PageDown through a resumed session in a real terminal (finding T34): the entries of
a resumed history count by estimates until drawn, yet every page shares exactly one row with
the one before — no line of the long Markdown answers and tool lines is skipped."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Callable

from minicode.agent.deps import ToolOutcome
from minicode.provider.types import Message, ToolCall
from minicode.session.store import SessionStore
from tests.pty.conftest import Term

Start = Callable[..., Term]
TASKS = 12
PAGE_UP, PAGE_DOWN, CTRL_HOME = "\x1b[5~", "\x1b[6~", "\x1b[1;5H"


def _answer(t: int) -> str:
    items = "\n".join(f"- t{t} item {i} with *emphasis* and `code {i}`" for i in range(6))
    code = "\n".join(f"value_{t}_{i} = {i}  # t{t} code line {i}" for i in range(5))
    para = " ".join(f"t{t}w{w}" for w in range(50))
    return f"## t{t} heading\n\n{para}\n\n{items}\n\n```python\n{code}\n```\n\nt{t} last line."


def _session(ws: Path, sid: str) -> None:
    store, _ = SessionStore.create(ws.resolve(), new_id=lambda: sid)
    for t in range(TASKS):
        store.append_message(Message.user(f"t{t} question"))
        call = ToolCall(f"c{t}", "bash", json.dumps({"command": f"make t{t}"}))
        store.append_message(Message(role="assistant", content=f"t{t} running it", tool_calls=(call,)))
        out = "\n".join(f"t{t} output line {i}" for i in range(8)) + "\n[exit code 2]"
        store.append_message(Message.tool(call.id, out),
                             ToolOutcome(True, 2, status="failed", duration_seconds=1.5, summary="exit 2"))
        store.append_message(Message(role="assistant", content=_answer(t)))
    store.close()


def _rows(t: Term) -> list[str]:
    """The transcript rows: everything above the status bar."""
    lines = t.screen.lines()
    status = max(i for i, line in enumerate(lines) if "context" in line)
    return [line.rstrip() for line in lines[:status]]


def _expected_lines() -> list[str]:
    """Lines of every answer that fit a row whole: each must be on some page."""
    out = []
    for t in range(TASKS):
        out += [f"t{t} item {i} with emphasis and code {i}" for i in range(6)]
        out += [f"t{t} code line {i}" for i in range(5)]
        out += [f"t{t} question", f"t{t} heading", f"t{t} last line."]
    return out


def _page(t: Term, key: str, before: list[str], ends: Callable[[list[str]], bool]) -> list[str]:
    """Press ``key`` and wait for the page that shares its edge row with ``before``."""
    t.keys(key)
    up = key == PAGE_UP

    def arrived() -> bool:
        rows = _rows(t)
        if rows == before or not rows:
            return False
        return (rows[-1] == before[0] if up else rows[0] == before[-1]) or ends(rows)

    t.wait(arrived, what=f"a page abutting the last one ({'up' if up else 'down'})")
    return _rows(t)


def _covered(pages: list[list[str]]) -> str:
    shown = "\n".join(row for page in pages for row in page)
    return re.sub(r"[*`]", "", shown)


def test_paging_a_resumed_session_up_and_down_skips_no_line(term_factory: Start, tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    sid = "dddd4444-0000-4000-8000-000000000004"
    _session(ws, sid)
    t = term_factory("--session", sid)
    t.wait_text(f"t{TASKS - 1} last line.")
    pages = [_rows(t)]
    while not any("resumed session" in row for row in pages[-1]):
        pages.append(_page(t, PAGE_UP, pages[-1], lambda rows: any("resumed session" in row for row in rows)))
        assert len(pages) < 200
    missing = [line for line in _expected_lines() if line not in _covered(pages)]
    assert not missing, missing
    # and down again, from the very top
    t.keys(CTRL_HOME)
    t.wait(lambda: _rows(t)[0].startswith("session "), what="the top")
    down = [_rows(t)]
    while "↑ scrolled" in t.screen.text():
        down.append(_page(t, PAGE_DOWN, down[-1], lambda rows: "↑ scrolled" not in t.screen.text()))
        assert len(down) < 200
    missing = [line for line in _expected_lines() if line not in _covered(down)]
    assert not missing, missing
    t.send("\x03")
    assert "EXIT=0" in t.finish()
