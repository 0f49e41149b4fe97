"""The sessions of a workspace: listing them and resolving an id prefix to one of them.

Owns ``list_sessions`` (``minicode --sessions``, the ``/resume`` picker), the short unique id
prefixes they are shown with, and ``resolve_session_id`` (``--session PREFIX``, ``/resume
PREFIX``). Listing never parses a whole session: it reads the header line, finds the first
user message, and counts message records with a byte search (records are one JSON object
per line with ``"type"`` first, so ``\\n{"type":"message"`` marks exactly one message). The
counts are kept in a small cache (``.minicode/sessions/catalog.json``, see
``session.catalog_cache``): a session unchanged since is not read again.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from minicode import jsonsafe
from minicode.errors import SessionError
from minicode.session.catalog_cache import CachedScan, CatalogCache
from minicode.session.notes import strip_notes
from minicode.session.store import SESSIONS_DIR, is_session_id, validate_session_id

__all__ = [
    "FIRST_MESSAGE_CHARS",
    "MIN_PREFIX",
    "SessionInfo",
    "list_sessions",
    "resolve_session_id",
    "short_ids",
]

MIN_PREFIX = 8
"""Shown ids are at least this long (the first group of a UUID), longer where needed to be unique."""
FIRST_MESSAGE_CHARS = 500
"""At most this much of the first user message is kept for a listing (one line is shown)."""
_MESSAGE = b'\n{"type":"message"'
_USER = b'\n{"type":"message","role":"user"'
_CHUNK = 4 * 1024 * 1024
_HEADER_BYTES = 64 * 1024
_LINE_PARSE_BYTES = 1024 * 1024  # a longer first message is decoded from its start only
_PREFIX = re.compile(r"[0-9a-f-]{1,36}")
_DECODER = json.JSONDecoder()


@dataclass(frozen=True, slots=True)
class SessionInfo:
    """One listed session. ``modified`` is the file's mtime (the last append: last activity)."""

    id: str
    size: int
    modified_ns: int
    messages: int
    """Message records in the file (the raw history: rewound messages count too)."""
    first_message: str
    """The first user message (at most ``FIRST_MESSAGE_CHARS``), "" if it could not be read."""


def list_sessions(workspace: Path, *, use_cache: bool = True) -> tuple[list[SessionInfo], list[str]]:
    """The sessions of ``workspace`` that hold at least one message, newest first, and a note
    for each file that was skipped (damaged header, another workspace, unreadable).

    Raises SessionError only when the sessions directory itself cannot be listed."""
    directory = workspace / SESSIONS_DIR
    cache = CatalogCache(directory) if use_cache else None
    found: list[SessionInfo] = []
    skipped: list[str] = []
    for name, stem in _session_files(directory):
        try:
            info = _describe(directory / name, stem, str(workspace), cache)
        except _Skip as e:
            skipped.append(f"{name}: {e}")
            continue
        if info is not None and info.messages > 0:
            found.append(info)
    if cache is not None:
        cache.save({info.id for info in found})
    found.sort(key=lambda i: (i.modified_ns, i.id), reverse=True)
    return found, skipped


def short_ids(ids: Sequence[str], minimum: int = MIN_PREFIX) -> dict[str, str]:
    """The shortest prefix (at least ``minimum``) of each id that no other id starts with."""
    ordered = sorted(ids)
    out: dict[str, str] = {}
    for i, current in enumerate(ordered):
        shared = 0
        for j in (i - 1, i + 1):  # in sorted order the longest common prefix is with a neighbour
            if 0 <= j < len(ordered):
                shared = max(shared, _common(current, ordered[j]))
        out[current] = current[: max(minimum, shared + 1)]
    return out


def resolve_session_id(workspace: Path, text: str) -> str:
    """The full id of the session ``text`` names: a whole id, or a prefix of exactly one
    session of this workspace that holds messages — or, when none does, of exactly one file
    the listing skipped (damaged, another workspace's), so that loading it says what is wrong.
    SessionError(exit_code=2) otherwise: a malformed value, no such session, or an ambiguous
    prefix (the message lists them)."""
    candidate = text.strip().lower()
    if is_session_id(candidate):
        return validate_session_id(candidate)
    if not _PREFIX.fullmatch(candidate) or not candidate.strip("-"):
        shown = text if len(text) <= 80 else text[:80] + "…"
        raise SessionError(
            f"invalid session id {shown!r}: expected a session id or its first characters "
            "(see minicode --sessions)",
            exit_code=2,
        )
    sessions, skipped = list_sessions(workspace)
    matches = [s for s in sessions if s.id.startswith(candidate)]
    if len(matches) == 1:
        return matches[0].id
    damaged = [note.partition(".jsonl")[0] for note in skipped if note.startswith(candidate)]
    if not matches and len(damaged) == 1:
        return damaged[0]  # loading it says what is wrong ("corrupt at line 3"), not "no session"
    if not matches:
        raise SessionError(
            f"no session starting with {candidate!r} in this workspace ({workspace}); "
            "list them with minicode --sessions",
            exit_code=2,
        )
    lines = "\n".join(f"  {s.id}  {_one_line(s.first_message, 60)}" for s in matches[:20])
    more = f"\n  … and {len(matches) - 20} more" if len(matches) > 20 else ""
    raise SessionError(
        f"session id prefix {candidate!r} is ambiguous; it matches {len(matches)} sessions:\n"
        f"{lines}{more}\nuse more characters of the id",
        exit_code=2,
    )


# --- scanning one file -----------------------------------------------------------------------


class _Skip(Exception):
    """A file in the sessions directory that is not a loadable session of this workspace."""


def _session_files(directory: Path) -> list[tuple[str, str]]:
    try:
        entries = list(os.scandir(directory))
    except FileNotFoundError:
        return []
    except OSError as e:
        raise SessionError(f"cannot list sessions in {directory}: {e.strerror}") from e
    out = []
    for entry in entries:
        stem = entry.name.removesuffix(".jsonl")
        if stem != entry.name and is_session_id(stem) and entry.is_file(follow_symlinks=False):
            out.append((entry.name, stem))
    return out


def _describe(path: Path, session_id: str, workspace: str, cache: CatalogCache | None) -> SessionInfo | None:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except FileNotFoundError:
        return None  # removed meanwhile (an empty session closing)
    except OSError as e:
        raise _Skip(f"unreadable ({e.strerror})") from e
    try:
        st = os.fstat(fd)
        cached = cache.get(session_id) if cache is not None else None
        scan = _scan(fd, st.st_size, st.st_mtime_ns, session_id, workspace, cached)
    except OSError as e:
        raise _Skip(f"unreadable ({e.strerror})") from e
    finally:
        os.close(fd)
    if cache is not None:
        cache.put(session_id, scan)
    return SessionInfo(session_id, scan.size, scan.mtime_ns, scan.messages, strip_notes(scan.first_message))


def _scan(fd: int, size: int, mtime_ns: int, session_id: str, workspace: str, cached: CachedScan | None) -> CachedScan:
    if cached is not None and cached.size == size and cached.mtime_ns == mtime_ns:
        return cached
    _check_header(fd, session_id, workspace)
    count = _count(fd, size)
    first = _first_user_message(fd, size) if count else ""
    return CachedScan(size, mtime_ns, count, first)


def _check_header(fd: int, session_id: str, workspace: str) -> None:
    head = os.pread(fd, _HEADER_BYTES, 0).split(b"\n", 1)[0]
    try:
        header = jsonsafe.loads(head, repair_surrogates=True)
    except ValueError:
        raise _Skip("no valid header line") from None
    if not isinstance(header, dict) or header.get("type") != "header" or header.get("id") != session_id:
        raise _Skip("no valid header line")
    if header.get("workspace") != workspace:
        raise _Skip(f"belongs to another workspace ({header.get('workspace')!r})")


def _count(fd: int, end: int) -> int:
    """Occurrences of the message-record marker before ``end``."""
    count = 0
    carry = b""
    pos = 0
    while pos < end:
        chunk = os.pread(fd, min(_CHUNK, end - pos), pos)
        if not chunk:
            break
        data = carry + chunk
        count += data.count(_MESSAGE)
        # keep the bytes that could begin a marker split by the chunk boundary
        # A marker split by the chunk boundary is found next time; the kept bytes are too few
        # to hold a whole one, so none is counted twice.
        carry = data[-(len(_MESSAGE) - 1):]
        pos += len(chunk)
    return count


def _first_user_message(fd: int, size: int) -> str:
    pos = 0
    carry = b""
    while pos < size:
        chunk = os.pread(fd, min(_CHUNK, size - pos), pos)
        if not chunk:
            return ""
        data = carry + chunk
        found = data.find(_USER)
        if found >= 0:
            return _message_text(fd, pos - len(carry) + found + 1, size)
        carry = data[-(len(_USER) - 1):]
        pos += len(chunk)
    return ""


def _message_text(fd: int, start: int, size: int) -> str:
    """The content of the message record starting at ``start`` (its beginning when huge)."""
    line = os.pread(fd, min(_LINE_PARSE_BYTES, size - start), start).split(b"\n", 1)[0]
    try:
        rec = jsonsafe.loads(line, repair_surrogates=True)
        content = rec.get("content") if isinstance(rec, dict) else None
        return content[:FIRST_MESSAGE_CHARS] if isinstance(content, str) else ""
    except ValueError:
        pass
    # Longer than we parse: decode the start of the JSON string after "content":"
    marker = line.find(b'"content":"')
    if marker < 0:
        return ""
    raw = line[marker + len(b'"content":"') :][: FIRST_MESSAGE_CHARS * 6].decode("utf-8", "ignore")
    for cut in range(len(raw), max(-1, len(raw) - 12), -1):  # drop an escape cut in half
        try:
            # raw_decode stops at the string's real end when it is within the bytes read
            text, _ = _DECODER.raw_decode('"' + raw[:cut] + '"')
        except ValueError:
            continue
        return str(text)[:FIRST_MESSAGE_CHARS]
    return ""


def _common(a: str, b: str) -> int:
    n = 0
    for x, y in zip(a, b):
        if x != y:
            break
        n += 1
    return n


def _one_line(text: str, limit: int) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"
