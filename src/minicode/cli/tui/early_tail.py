"""The end of a session file, read cheaply for the early frame (``early.py``).

The full screen's first frame shows the last entries of a resumed conversation before the
session modules are imported or the file is opened: this reads only the file's last bytes
(64 KiB, doubled while the entries found do not fill the screen, at most 4 MiB), parses the
records there and turns their messages into plain entries — a user line, an answer's text, a
tool call's line as it ended. A settings record (``/model``, ``/think``) up to 8 MiB before
that window is found by searching backwards for its first bytes, never by parsing the rest.

Best effort by design: what cannot be read or parsed here is left out (the real app opens
the file a moment later and reports any damage). Every text from the file is neutralised
(escape sequences shown, not obeyed) as everywhere else on the terminal. Light: the standard
library, ``jsonsafe`` and the pure text helpers only.
"""

from __future__ import annotations

import mmap
import os
from typing import Any, Callable

from minicode import jsonsafe
from minicode.cli.shown_call import RECOVERED, preview_lines, reveal
from minicode.cli.tui.replay_text import call_target, collapse_user
from minicode.cli.terminal_text import neutralise

__all__ = ["FIRST_WINDOW", "MAX_WINDOW", "SETTINGS_SEARCH", "Entry", "Tail", "read_tail", "tool_line"]

FIRST_WINDOW = 64 * 1024
MAX_WINDOW = 4 * 1024 * 1024
_MESSAGE = b'{"type":"message",'
_REWIND = b'{"type":"rewind",'
_TURN_END = b'{"type":"turn_end",'
_SHOWN_MAX = 400
_SETTINGS = b'{"type":"settings"'
_SETTINGS_AT = b"\n" + _SETTINGS
SETTINGS_SEARCH = 8 * 1024 * 1024
"""How far before the window a ``/model`` or ``/think`` record is looked for (~2 ms; the whole
of a 60 MB file would cost ~15 ms of every resume and its size in peak RSS). One recorded
earlier than that shows in the status bar with the application's frame."""
_SETTINGS_LINE_MAX = 4096
"""A settings record is a model name (≤ 200 characters) and a level: far less than this."""

Entry = tuple[str, str, str]
"""(style class, text, prefix of its first line): ``("user", "fix it", "› ")``."""


class Tail:
    """What the end of a session file shows: entries, oldest first; the settings recorded
    (``/model``, ``/think``); the message count when the whole file was read."""

    def __init__(self, entries: list[Entry], model: str | None, thinking: str | None,
                 messages: int | None) -> None:
        self.entries = entries
        self.model = model
        self.thinking = thinking
        self.messages = messages
        """How many messages the conversation has, or None when only its end was read."""


def read_tail(path: str, enough: Callable[[list[Entry]], bool]) -> Tail | None:
    """The end of the session file at ``path``: a window of its last bytes, grown until
    ``enough(entries)`` or the whole file is read. None when the file cannot be read."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        size = os.fstat(fd).st_size
        window = FIRST_WINDOW
        while True:
            start = max(0, size - window)
            records = _records(os.pread(fd, size - start, start), whole=start == 0)
            entries, messages = _entries(records, whole=start == 0)
            if start == 0 or window >= MAX_WINDOW or enough(entries):
                break
            window *= 2
        model, thinking = _settings(records)
        if start > 0 and (model is None or thinking is None):
            earlier_model, earlier_thinking = _settings_before(fd, start, size)
            model, thinking = model or earlier_model, thinking or earlier_thinking
        return Tail(entries, model, thinking, messages)
    except (OSError, ValueError):
        return None
    finally:
        os.close(fd)


def _records(data: bytes, *, whole: bool) -> list[dict[str, Any]]:
    """The message, rewind, turn-end and settings records of ``data`` (the file's end; unless
    ``whole``, its first line is a fragment). A line that does not parse is left out."""
    lines = data.split(b"\n")
    if not whole:
        lines = lines[1:]
    out: list[dict[str, Any]] = []
    for line in lines:
        if not line.startswith((_MESSAGE, _REWIND, _SETTINGS, _TURN_END)) or not line.endswith(b"}"):
            continue
        try:
            record = jsonsafe.loads(line.decode("utf-8", "replace"))  # a lone surrogate: "?" on screen
        except ValueError:
            continue
        if isinstance(record, dict):
            out.append(record)
    return out


def _entries(records: list[dict[str, Any]], *, whole: bool) -> tuple[list[Entry], int | None]:
    """The entries of the messages in ``records`` with rewinds applied, and the message
    count when ``whole``. A rewind in a partial window drops what came before it: the
    messages it keeps lie partly outside the window."""
    messages: list[dict[str, Any]] = []
    ends: dict[int, Entry] = {}  # a task's "■ done · …" line, by the messages before it
    for record in records:
        kind = record.get("type")
        if kind == "message":
            messages.append(record)
        elif kind == "turn_end":
            shown, status = record.get("shown"), record.get("status")
            if isinstance(shown, str) and isinstance(status, str):  # first wins, as in session.turn_ends
                style = "stats" if status == "done" else "status.bad"
                ends.setdefault(len(messages), (style, neutralise(shown[:_SHOWN_MAX]), "■ "))
        elif kind == "rewind":
            keep = record.get("keep")
            if whole and type(keep) is int and keep >= 0:
                del messages[keep:]
            else:
                messages.clear()
                whole = False
            ends = {count: end for count, end in ends.items() if count <= len(messages)}
    results = {m.get("tool_call_id"): m for m in messages if m.get("role") == "tool"}
    entries: list[Entry] = []
    for index, m in enumerate(messages):
        entries.extend(_message_entries(m, results))
        if index + 1 in ends:
            entries.append(ends[index + 1])
    return entries, len(messages) if whole else None


def _message_entries(m: dict[str, Any], results: dict[Any, dict[str, Any]]) -> list[Entry]:
    role, content = m.get("role"), m.get("content")
    text = content if isinstance(content, str) else ""
    if role == "user" and text:
        return [("user", collapse_user(neutralise(text)), "› ")]
    if role != "assistant":
        return []
    out: list[Entry] = []
    if text.strip():
        out.append(("answer", neutralise(text.strip("\n")), ""))
    calls = m.get("tool_calls")
    for call in calls if isinstance(calls, list) else []:
        if isinstance(call, dict):
            out.extend(tool_line(call, results.get(call.get("id"))))
    return out


def tool_line(call: dict[str, Any], result: dict[str, Any] | None) -> list[Entry]:
    """A tool call's line as the resumed transcript shows it (``✓ bash $ make — exit 0 ·
    0.4s · 12 lines``), and the diff of a write or edit under it."""
    name = call.get("name") if isinstance(call.get("name"), str) else "tool"
    arguments = call.get("arguments")
    head = " ".join(x for x in (reveal(str(name)), reveal(call_target(arguments if isinstance(arguments, str) else "")),
                                RECOVERED if call.get("from_text") is True else "") if x)
    if result is None:
        return [("tool.ok", head, "✓ ")]
    is_error, exit_code = result.get("is_error") is True, result.get("exit_code")
    exit_code = exit_code if type(exit_code) is int else None
    status, summary = result.get("status"), result.get("summary")
    summary = neutralise(summary) if isinstance(summary, str) else ""
    failed = is_error or bool(exit_code)
    style, mark = ("tool.error", "✗ ") if failed else ("tool.ok", "✓ ")
    if status not in ("done", "failed", "denied", "interrupted"):  # an older file: whether it failed
        return [(style, head if not failed else f"{head}  — failed" + (f" · exit {exit_code}" if exit_code else ""),
                 mark)]
    if status == "denied":
        return [(style, f"{head}  — denied", mark)]
    if status == "interrupted" and summary.startswith("interrupted"):
        return [(style, f"{head}  — {summary}", mark)]
    parts: list[str] = []
    if exit_code is not None and f"exit {exit_code}" not in summary:
        parts.append(f"exit {exit_code}")
    duration = result.get("duration")
    seconds = float(duration) if isinstance(duration, (int, float)) and not isinstance(duration, bool) else 0.0
    if seconds or not is_error:
        parts.append(f"{seconds:.1f}s")
    if summary:
        parts.append(summary)
    out: list[Entry] = [(style, f"{head}  — {' · '.join(parts)}", mark)]
    diff = result.get("diff")
    if name in ("edit", "write") and not failed and isinstance(diff, str):
        out.extend(("diff", "    " + line.expandtabs(4), "") for line in preview_lines(diff)[:12])
    return out


def _settings(records: list[dict[str, Any]]) -> tuple[str | None, str | None]:
    """The latest model and thinking level the settings records of ``records`` set."""
    model = thinking = None
    for record in records:
        if record.get("type") == "settings":
            model = _text(record.get("model")) or model
            thinking = _text(record.get("thinking")) or thinking
    return model, thinking


def _settings_before(fd: int, end: int, size: int) -> tuple[str | None, str | None]:
    """The latest model and thinking level set by settings records in the ``SETTINGS_SEARCH``
    bytes before ``end``, found by searching backwards for the records' first bytes in a
    mapping of just that part (no copy; bounded, since mapped pages count in the peak RSS)."""
    model = thinking = None
    floor = max(0, end - SETTINGS_SEARCH)
    base = floor - floor % mmap.ALLOCATIONGRANULARITY
    stop_at = min(size, end + _SETTINGS_LINE_MAX)  # a record starting before ``end`` ends after it
    with mmap.mmap(fd, stop_at - base, offset=base, access=mmap.ACCESS_READ) as data:
        at = end - base
        while model is None or thinking is None:
            at = data.rfind(_SETTINGS_AT, floor - base, at)
            if at < 0:
                break
            stop = data.find(b"\n", at + 1)
            try:
                record = jsonsafe.loads(data[at + 1:stop if stop >= 0 else len(data)].decode("utf-8", "replace"))
            except ValueError:
                continue
            if isinstance(record, dict):
                model = model or _text(record.get("model"))
                thinking = thinking or _text(record.get("thinking"))
    return model, thinking


def _text(value: object) -> str | None:
    return neutralise(value) if isinstance(value, str) and value else None
