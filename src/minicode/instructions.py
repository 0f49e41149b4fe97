"""Project instructions from the ecosystem's files: ``AGENTS.md``, else ``CLAUDE.md``.

Many projects carry instructions for coding agents (Codex, opencode, pi, Gemini and Claude
Code read ``AGENTS.md``; Claude Code also ``CLAUDE.md``). The one at the workspace root is
given to the model with every request, beside project memory, within the same limits as
memory (UTF-8, no NUL, 64 KiB, 4,096 estimated tokens). Unlike ``MiniCode.md`` these files
belong to the project, not to minicode: they are read-only here (the memory rules write only
``MiniCode.md``), and a file that breaks a limit, points outside the workspace or cannot be
read is *not used* with a warning — never truncated, and never a reason to stop the task,
since the user may not be the one who wrote it. ``ProjectInstructions.refresh`` notices
changes (a stat per call) so an edited file is reloaded before the next request.

Imports only the standard library, ``minicode.memory`` (limits), ``minicode.tokens`` and the
wire types.
"""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path

from dataclasses import dataclass
from minicode.memory import MAX_MEMORY_BYTES, MAX_MEMORY_TOKENS, memory_message
from minicode.provider.types import Message
from minicode.tokens import estimate_text

__all__ = ["INSTRUCTION_FILES", "Instructions", "ProjectInstructions", "project_message"]

INSTRUCTION_FILES = ("AGENTS.md", "CLAUDE.md")
"""Looked for at the workspace root, in this order; the first present, non-blank one is used."""


@dataclass(frozen=True, slots=True)
class Instructions:
    name: str  # "AGENTS.md" or "CLAUDE.md"
    text: str


_Signature = tuple[tuple[int, int, int, str] | None, ...]


class ProjectInstructions:
    """The instructions file of one workspace, reloaded when it changes."""

    def __init__(self, workspace: Path) -> None:
        self.workspace = workspace
        self.current: Instructions | None = None
        self.warning: str | None = None
        """Why a present file is not used (shown once per change), or None."""
        self._signature: _Signature | None = None

    @property
    def loaded(self) -> bool:
        """Whether the files were looked at yet."""
        return self._signature is not None

    def refresh(self) -> bool:
        """Reload when a candidate file appeared, changed or vanished; True when it did.
        Blocking, but only a stat per candidate unless something changed."""
        signature = tuple(_stat(self.workspace / name) for name in INSTRUCTION_FILES)
        if signature == self._signature:
            return False
        self._signature = signature
        try:
            self.current, self.warning = _load(self.workspace)
        except OSError as e:  # e.g. no permission to look at it: never a reason to stop a task
            self.current, self.warning = None, f"the project instructions cannot be read ({e.strerror or e})"
        return True


def _stat(path: Path) -> tuple[int, int, int, str] | None:
    """What identifies the file's version; never raises (paths may change under us)."""
    try:
        st = os.stat(path)
        return (st.st_mtime_ns, st.st_size, st.st_ino, os.path.realpath(path))
    except (OSError, ValueError):
        return None if not os.path.islink(path) else (0, 0, 0, "dangling")


def _load(workspace: Path) -> tuple[Instructions | None, str | None]:
    """The first present, non-blank candidate; a present one that cannot be used is not
    skipped for the next (AGENTS.md, when there, is the project's choice): a warning."""
    for name in INSTRUCTION_FILES:
        path = workspace / name
        if not (path.exists() or path.is_symlink()):
            continue
        text, problem = _read(workspace, path)
        if problem is not None:
            return None, f"{name} is not given to the model: {problem}"
        if text:
            return Instructions(name, text), None
    return None, None


def _read(workspace: Path, path: Path) -> tuple[str | None, str | None]:
    """(text or None when blank, None) or (None, why it cannot be used)."""
    try:
        real = os.path.realpath(path)
        root = os.path.realpath(workspace)
    except (OSError, ValueError) as e:  # a component swapped while it was resolved
        return None, f"it cannot be resolved ({getattr(e, 'strerror', None) or e})"
    if real != root and not real.startswith(root.rstrip("/") + "/"):
        return None, "it is a link to a file outside the workspace"
    if not os.path.isfile(real):
        return None, "it is not a regular file"
    try:
        with open(real, "rb") as f:
            data = f.read(MAX_MEMORY_BYTES + 1)
    except OSError as e:
        return None, f"it cannot be read ({e.strerror or e})"
    if len(data) > MAX_MEMORY_BYTES:
        return None, f"it is larger than {MAX_MEMORY_BYTES:,} bytes (the project memory limit)"
    if b"\0" in data:
        return None, "it contains a NUL byte"
    try:
        text = data.decode("utf-8").removeprefix("\ufeff").strip()
    except UnicodeDecodeError as e:
        return None, f"it is not valid UTF-8 (bad byte at offset {e.start})"
    tokens = estimate_text(text)
    if tokens > MAX_MEMORY_TOKENS:
        return None, f"it is about {tokens:,} estimated tokens; the limit is {MAX_MEMORY_TOKENS:,}"
    return text or None, None


def project_message(instructions: Instructions | None, memory: str | None) -> Message | None:
    """The one user message after the system prompt: project instructions, then project
    memory (exactly ``memory_message`` when there are no instructions), or None."""
    if instructions is None:
        return memory_message(memory) if memory else None
    return _with_instructions(instructions.name, instructions.text, memory)


@lru_cache(maxsize=4)
def _with_instructions(name: str, text: str, memory: str | None) -> Message:
    block = (
        "<project-instructions>\n"
        f"Project instructions from {name} at the workspace root, written by the project for coding "
        "agents: follow them. The system rules and the user's current request take precedence on "
        f"any conflict. {name} is not project memory: do not edit it unless the user asks.\n\n"
        f"{text}\n"
        "</project-instructions>"
    )
    if memory:
        block += "\n\n" + (memory_message(memory).content or "")
    return Message.user(block)
