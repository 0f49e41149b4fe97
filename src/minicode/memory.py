"""Project memory (SPEC 8): ``MiniCode.md`` at the workspace root and its detail files.

Owns loading and validating the memory index, the ``<project-memory>`` message built from
it, the validator that guards writes to memory files, and the maintenance rules the system
prompt includes. Only the workspace root is looked at: no parent, child or global files.
Memory is never created, truncated or summarised here. Imports only the standard library,
``minicode.errors``, ``minicode.tokens`` and the wire/tool types.
"""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path

from minicode.errors import MemoryFileError
from minicode.provider.types import Message
from minicode.tokens import estimate_text

TYPE_CHECKING = False
if TYPE_CHECKING:  # not at run time: loading memory needs no tools
    from minicode.tools.base import WriteValidator

__all__ = [
    "MAX_MEMORY_BYTES",
    "MAX_MEMORY_TOKENS",
    "MEMORY_DIR",
    "MEMORY_FILE",
    "MEMORY_RULES",
    "is_memory_detail",
    "is_memory_index",
    "load_memory",
    "memory_message",
    "memory_write_validator",
]

MEMORY_FILE = "MiniCode.md"
"""The memory index, at the workspace root only."""
MEMORY_DIR = Path(".minicode") / "memory"
"""Where on-demand detail files (``*.md``) live, relative to the workspace."""
MAX_MEMORY_BYTES = 64 * 1024
"""Size limit of the index and of each detail file."""
MAX_MEMORY_TOKENS = 4096
"""Estimated-token limit of the index (it is sent with every request); none for details."""

MEMORY_RULES = f"""\
Project memory: {MEMORY_FILE} (workspace root) comes with every request and links details in \
{MEMORY_DIR.as_posix()}/*.md — open them with the read tool when relevant. Change memory only \
when the user asks. Keep stable, reusable project facts (conventions, commands, architecture); \
never secrets, credentials or task progress. Before changing {MEMORY_FILE}, read \
the whole file and keep unrelated content; no duplicates: update an entry, replace one the new \
fact contradicts. Keep {MEMORY_FILE} under {MAX_MEMORY_BYTES // 1024} KiB and \
{MAX_MEMORY_TOKENS:,} estimated tokens: longer details go in {MEMORY_DIR.as_posix()}/<topic>.md \
(save a detail file before linking it)."""

_FIX_HINT = "Fix the file and try again."


def load_memory(workspace: Path) -> str | None:
    """The text of ``<workspace>/MiniCode.md``, or None when missing or blank.

    Raises ``MemoryFileError`` (with a message telling the user how to fix the file) when
    it cannot be read, is not UTF-8, contains NUL, exceeds 64 KiB or 4,096 estimated
    tokens. Never creates or truncates the file. Blocking, but reads at most 64 KiB + 1.
    """
    path = workspace / MEMORY_FILE
    try:
        real = _inside(workspace, path)
        with open(real, "rb") as f:
            data = f.read(MAX_MEMORY_BYTES + 1)
    except FileNotFoundError:
        return None
    except OSError as e:
        raise MemoryFileError(f"{MEMORY_FILE} cannot be read: {e.strerror or e}. {_FIX_HINT}") from e
    try:
        text = _checked(data, MEMORY_FILE, token_limit=True)
    except MemoryFileError as e:
        raise MemoryFileError(f"{e} {_FIX_HINT}") from e
    text = text.removeprefix("\ufeff").strip()
    return text or None


def _inside(workspace: Path, path: Path) -> str:
    """``path`` resolved, when it is inside the workspace. A cloned repository's
    ``MiniCode.md`` can be a link to ``~/.ssh/id_rsa``: what it points to would go to the model
    with every request, past the read tool's confinement, so a link out is refused (``MemoryFileError``)."""
    real = os.path.realpath(path)
    root = os.path.realpath(workspace)
    if real != root and not real.startswith(root.rstrip("/") + "/"):
        raise MemoryFileError(f"{MEMORY_FILE} is a link to a file outside the workspace; it is not sent to the model. "
                              "Replace the link with a file of its own, or remove it.")
    return real  # (a device or FIFO is reachable only through a link out: refused above)


@lru_cache(maxsize=4)
def memory_message(text: str) -> Message:
    """The user message carrying project memory right after the system prompt.

    Memoised so that every request of a turn reuses one object (cheap to estimate).
    """
    return Message.user(
        "<project-memory>\n"
        f"Project memory from {MEMORY_FILE}, maintained on the user's request. The system "
        "rules and the user's current request take precedence over it on any conflict.\n\n"
        f"{text}\n"
        "</project-memory>"
    )


def is_memory_index(workspace: Path, path: Path | str) -> bool:
    """Whether ``path`` (relative to ``workspace`` or absolute) is the root MiniCode.md."""
    return _relative(workspace, path) == (MEMORY_FILE,)


def is_memory_detail(workspace: Path, path: Path | str) -> bool:
    """Whether ``path`` is a memory detail file: a ``.md`` file under ``.minicode/memory/``."""
    rel = _relative(workspace, path)
    folder = MEMORY_DIR.parts
    return rel is not None and len(rel) > len(folder) and rel[: len(folder)] == folder and rel[-1].endswith(".md")


def memory_write_validator(workspace: Path) -> WriteValidator:
    """A ``WriteValidator`` refusing memory writes that break the limits.

    MiniCode.md: UTF-8, no NUL, 64 KiB, 4,096 estimated tokens. ``.minicode/memory/*.md``:
    UTF-8, no NUL, 64 KiB. Every other path passes. Returns the error text or None.
    """

    def validate(path: Path, data: bytes) -> str | None:
        if is_memory_index(workspace, path):
            name, token_limit = MEMORY_FILE, True
        elif is_memory_detail(workspace, path):
            name, token_limit = _display(workspace, path), False
        else:
            return None
        try:
            _checked(data, name, token_limit=token_limit)
        except MemoryFileError as e:
            return f"refused: {e} The file was not changed."
        return None

    return validate


def _checked(data: bytes, name: str, *, token_limit: bool) -> str:
    """``data`` decoded, or ``MemoryFileError`` naming the first broken limit."""
    if len(data) > MAX_MEMORY_BYTES:
        raise MemoryFileError(
            f"{name} is larger than the {MAX_MEMORY_BYTES:,}-byte limit for project memory. "
            f"Shorten it (move details to {MEMORY_DIR.as_posix()}/*.md)."
        )
    nul = data.find(b"\0")
    if nul >= 0:
        raise MemoryFileError(f"{name} contains a NUL byte at offset {nul}; it must be plain text.")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise MemoryFileError(
            f"{name} is not valid UTF-8 (bad byte at offset {e.start}); save it as UTF-8."
        ) from e
    tokens = estimate_text(text)
    if token_limit and tokens > MAX_MEMORY_TOKENS:
        raise MemoryFileError(
            f"{name} is about {tokens:,} estimated tokens; the limit is {MAX_MEMORY_TOKENS:,}. "
            f"Shorten it (move details to {MEMORY_DIR.as_posix()}/*.md)."
        )
    return text


def _relative(workspace: Path, path: Path | str) -> tuple[str, ...] | None:
    """The components of ``path`` below the workspace, None when it is not below it.

    Lexical (``./MiniCode.md``, ``sub/../MiniCode.md`` and an absolute path through a symlinked
    workspace compare equal) and never raises: it is asked about paths another process may be
    changing, and the tools hand the validator paths they already resolved by descriptor
    (``tools.fsroot``), symlinks included."""
    text = os.fspath(path)
    if os.path.isabs(text):
        bases = _bases(workspace)
        for candidate in (os.path.normpath(text), _real_parent(text)):
            for base in bases:
                rel = os.path.relpath(candidate, base)
                if rel != ".." and not rel.startswith("../"):
                    return _parts(rel)
        return None
    rel = os.path.normpath(text)
    return None if rel == ".." or rel.startswith("../") else _parts(rel)


def _real_parent(text: str) -> str:
    """``text`` with its directory's symlinks resolved (an absolute path reaching the workspace
    through another link), its last name kept; as given when that cannot be resolved."""
    try:
        return os.path.join(os.path.realpath(os.path.dirname(text)), os.path.basename(text))
    except OSError:
        return text


def _parts(rel: str) -> tuple[str, ...]:
    return tuple(p for p in rel.split("/") if p not in ("", "."))


def _bases(workspace: Path) -> tuple[str, ...]:
    try:
        real = os.path.realpath(workspace)
    except OSError:  # a component of the workspace path changing under us: use it as given
        real = os.path.abspath(workspace)
    return (real, os.path.abspath(workspace))


def _display(workspace: Path, path: Path) -> str:
    rel = _relative(workspace, path)
    return "/".join(rel) if rel else str(path)
