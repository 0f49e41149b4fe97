"""The one place for every size cap of the tools, and the head/tail truncation helpers.

Every cap a tool applies is a named constant here so the limits stay consistent and
documented; every truncation leaves an explicit marker saying how much was left out.
Pure: no I/O, no imports beyond the standard library.
"""

from __future__ import annotations

__all__ = [
    "BASH_HEAD_BYTES",
    "BASH_TAIL_BYTES",
    "BINARY_SNIFF_BYTES",
    "EDIT_MAX_FILE_BYTES",
    "GLOB_MAX_RESULTS",
    "GREP_FILE_BUDGET_S",
    "GREP_MAX_FILE_BYTES",
    "GREP_MAX_LINE_CHARS",
    "GREP_MAX_MATCHES",
    "GREP_TOTAL_BUDGET_S",
    "HASH_MAX_FILE_BYTES",
    "HeadTailBuffer",
    "LS_MAX_ENTRIES",
    "PREVIEW_DIFF_MAX_LINES",
    "PREVIEW_MAX_FILE_BYTES",
    "READ_MAX_BYTES",
    "READ_MAX_LINES",
    "SNAPSHOT_MAX_FILE_BYTES",
    "TOOL_OUTPUT_MAX_BYTES",
    "cap_output",
    "shorten_line",
]

# Everything a tool returns to the model is capped here (SPEC 9).
TOOL_OUTPUT_MAX_BYTES = 64 * 1024

# One `read` page: whichever limit is hit first.
READ_MAX_LINES = 2000
READ_MAX_BYTES = 64 * 1024

# A NUL byte within this prefix marks a file as binary (read refuses it, grep skips it).
BINARY_SNIFF_BYTES = 8 * 1024

# Files up to this size get a sha256 in their stamp when read; larger files are stamped by
# size and mtime only, because hashing 1 GB on every read would break the "first page of a
# huge file is as fast as a small one" promise. `edit` refuses larger files, so nothing is lost.
HASH_MAX_FILE_BYTES = 16 * 1024 * 1024
EDIT_MAX_FILE_BYTES = HASH_MAX_FILE_BYTES
# What a write/edit replaces is kept for /undo up to this size; a larger file is replaced
# without a copy (undo says it cannot restore it).
SNAPSHOT_MAX_FILE_BYTES = 16 * 1024 * 1024

# bash keeps the first and the last bytes of the combined output; the sum stays well below
# TOOL_OUTPUT_MAX_BYTES so the exit line and the elision marker fit without a second cut.
BASH_HEAD_BYTES = 24 * 1024
BASH_TAIL_BYTES = 36 * 1024

LS_MAX_ENTRIES = 1000

# Approval previews compare with the current file only up to this size (and never a binary
# one), and show at most this many diff lines.
PREVIEW_MAX_FILE_BYTES = 1024 * 1024
PREVIEW_DIFF_MAX_LINES = 40
GLOB_MAX_RESULTS = 500
GREP_MAX_MATCHES = 200
GREP_MAX_LINE_CHARS = 300
# grep reads a file whole (fast C-level search) and skips files larger than this, saying so.
GREP_MAX_FILE_BYTES = 32 * 1024 * 1024


def cap_output(text: str, max_bytes: int = TOOL_OUTPUT_MAX_BYTES) -> str:
    """Return ``text`` unchanged if its UTF-8 size fits, else its head and tail with a marker.

    The marker names how many bytes were left out, so the model knows the output is partial.
    """
    data = text.encode("utf-8", errors="surrogatepass")
    if len(data) <= max_bytes:
        return text
    budget = max(max_bytes - 200, 0)  # room for the marker itself
    head = budget // 2
    tail = budget - head
    elided = len(data) - head - tail
    return (
        _decode(data[:head])
        + f"\n[... output truncated: {elided} bytes omitted of {len(data)} ...]\n"
        + _decode(data[len(data) - tail :])
    )


def shorten_line(line: str, max_chars: int = GREP_MAX_LINE_CHARS) -> str:
    """Cut a single long line to ``max_chars`` characters, saying how many were dropped."""
    if len(line) <= max_chars:
        return line
    return f"{line[:max_chars]}… [+{len(line) - max_chars} chars]"


def _decode(data: bytes) -> str:
    # A cut may split a multi-byte character; replacement keeps the text valid.
    return data.decode("utf-8", errors="replace")


class HeadTailBuffer:
    """Keeps the first ``head_size`` and last ``tail_size`` bytes of a stream of any length.

    Memory stays constant whatever the volume fed: the head fills once, the tail is a
    sliding window, and everything in between is only counted.
    """

    __slots__ = ("_head", "_head_size", "_tail", "_tail_size", "total")

    def __init__(self, head_size: int = BASH_HEAD_BYTES, tail_size: int = BASH_TAIL_BYTES) -> None:
        self._head = bytearray()
        self._tail = bytearray()
        self._head_size = head_size
        self._tail_size = tail_size
        self.total = 0

    def feed(self, chunk: bytes) -> None:
        """Add the next bytes of the stream."""
        self.total += len(chunk)
        room = self._head_size - len(self._head)
        if room > 0:
            self._head += chunk[:room]
            chunk = chunk[room:]
        if not chunk:
            return
        if len(chunk) >= self._tail_size:
            self._tail = bytearray(chunk[len(chunk) - self._tail_size :])
            return
        self._tail += chunk
        excess = len(self._tail) - self._tail_size
        if excess > 0:
            del self._tail[:excess]

    @property
    def elided(self) -> int:
        """Bytes seen but kept in neither buffer."""
        return self.total - len(self._head) - len(self._tail)

    @property
    def kept(self) -> int:
        """Bytes currently held (never more than head_size + tail_size)."""
        return len(self._head) + len(self._tail)

    def render(self) -> str:
        """The kept text, with a marker where bytes were left out."""
        if self.elided == 0:
            return _decode(bytes(self._head + self._tail))
        return (
            _decode(bytes(self._head))
            + f"\n[... {self.elided} bytes of output omitted ...]\n"
            + _decode(bytes(self._tail))
        )

# grep's time budgets: one file's matching (a catastrophic pattern is abandoned on that file and
# the search goes on), and the whole call (the worker process is killed, partial results kept).
GREP_FILE_BUDGET_S = 2.0
GREP_TOTAL_BUDGET_S = 30.0
