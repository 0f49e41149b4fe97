"""What every tool is made of: the Tool protocol, the context it runs in, and its result.

Tools know the workspace, never the agent, the provider or a terminal.
"""

from __future__ import annotations

from pathlib import Path
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Awaitable, Callable, Mapping, Protocol

if TYPE_CHECKING:
    from minicode.tools.todo_list import TodoList

__all__ = [
    "BeforeReplace",
    "Delegate",
    "EditorFiles",
    "FileStamp",
    "Replaced",
    "Tool",
    "ToolContext",
    "ToolPreview",
    "ToolResult",
    "WriteValidator",
]


@dataclass(frozen=True, slots=True)
class ToolResult:
    """What a tool returns. ``is_error`` results go back to the model as recoverable errors.

    ``exit_code`` is set by ``bash``; ``summary`` is a one-line outcome for the UI
    (e.g. "120 lines", "exit 0", "2 replacements").
    """

    text: str
    is_error: bool = False
    exit_code: int | None = None
    summary: str = ""
    nested: tuple[str, ...] = ()
    """Lines shown under the call (a sub-agent's own calls, ``agent.subagent``): kept in the
    session beside the result for replay, never sent to the model."""


@dataclass(frozen=True, slots=True)
class ToolPreview:
    """How a call is shown to a person: the target (path or working directory) and an
    argument/command summary. Used by approval prompts and progress lines.

    ``body`` is an optional multi-line preview for approvals (the start of a written file,
    a mini diff of an edit, a multi-line command); "" when the detail says it all."""

    target: str
    detail: str = ""
    body: str = ""


@dataclass(frozen=True, slots=True)
class FileStamp:
    """What a file looked like when this session last read or wrote it."""

    size: int
    mtime_ns: int
    sha256: str


# Called with (absolute path, new bytes) before a write/edit lands; returns an error message
# to refuse it, or None. Project memory uses it to validate MiniCode.md and detail files.
WriteValidator = Callable[[Path, bytes], str | None]


@dataclass(frozen=True, slots=True)
class Replaced:
    """What a write or edit is about to replace, read from the directory it opened right
    before the new file is renamed over the name (so it is exactly what is replaced).

    ``data`` is None when nothing was there (``existed`` False) or when the file was larger
    than ``SNAPSHOT_MAX_FILE_BYTES`` (``size`` says how large). ``new_data`` is what replaces it."""

    rel: str
    """Workspace-relative path (POSIX separators) of the file."""
    existed: bool
    data: bytes | None
    mode: int | None
    size: int
    new_data: bytes


class EditorFiles(Protocol):
    """Files as an editor holds them (``minicode --acp``: the client's fs methods), unsaved
    changes included. The tools settle every path first (confined, a regular text file): an
    editor is only asked about a file the tool would open itself."""

    writes: bool
    """The editor takes writes: ``edit`` then changes the text the editor holds (what the model
    read), and after each write or edit lands on disk the editor is given the new text."""

    async def text(self, path: Path) -> str:
        """The text of the file at absolute ``path``; OSError when the editor cannot say."""
        ...

    async def wrote(self, path: Path, text: str) -> None:
        """The file at ``path`` now holds ``text`` on disk; OSError when the editor failed."""
        ...
# Hands a sub-task (the text of an ``agent`` call) to a child loop and returns its report as
# the call's result; given by the agent loop for an ``agent`` call (``agent.subagent``).
Delegate = Callable[[str], Awaitable[ToolResult]]


# Called (blocking, in the tool's worker thread) with what a write/edit replaces, before it
# is replaced; raising ToolError refuses the change (nothing is changed). Undo snapshots.
BeforeReplace = Callable[[Replaced], None]


def _no_validation(path: Path, data: bytes) -> str | None:
    return None


@dataclass(slots=True, eq=False, repr=False)
class ToolContext:
    """Everything a tool may touch, passed in rather than read from globals.

    ``env`` is the environment for child processes, already without the API key variable.
    ``secrets`` are the values (API keys) that must never reach the model: the registry
    replaces them in every tool result, whatever file or command printed them.
    ``stamps`` is the read-tracking state for the stale-write checks of ``edit``; it lives as
    long as the session process (it is not restored on resume).
    ``on_output`` receives a running tool's output as it arrives (bash), already redacted and
    throttled (see ``tools.live``): each call carries the text since the previous one, only
    its last ~2 KiB when more came. None: nobody watches.
    ``on_stopped`` receives what a tool produced so far when it is cancelled while running
    (bash: the head and tail of its output), just before the cancellation propagates; the
    registry redacts and caps it like a result. None: nobody keeps it.
    ``on_temp(dir_rel, name)`` is told of every temp file a write is about to create (before
    it exists), so one left by a killed run can be removed at the next start (see
    ``tools.tempfiles``). None: not recorded.
    ``before_replace`` is told what every write/edit is about to replace (see ``Replaced``),
    so the session can keep it for /undo. None: nothing is kept.
    ``ask(question, options)`` puts an ``ask_user`` question to the person at the frontend and
    gives the result the model is told (the agent loop sets it per call). None: nobody to ask.
    ``on_todo`` is handed the task list a ``todo`` call sent (the session records and shows
    it). None: the list is checked and answered, kept by nobody.

    Mutable (tests and hooks set fields); a copy with other fields is ``dataclasses.replace``
    (it shares ``stamps``: read tracking is the session's). Compared by identity, and no field
    dump in a repr: it would show the secrets.
    """

    workspace: Path
    env: Mapping[str, str]
    secrets: tuple[str, ...] = ()
    stamps: dict[Path, FileStamp] = field(default_factory=dict)
    validate_write: WriteValidator = _no_validation
    on_output: Callable[[str], None] | None = None
    on_stopped: Callable[[str], None] | None = None
    on_temp: Callable[[str, str], None] | None = None
    before_replace: BeforeReplace | None = None
    on_todo: Callable[["TodoList"], Awaitable[None]] | None = None
    editor: EditorFiles | None = None
    """Files through an editor (``minicode --acp``); None: the disk alone."""
    ask: Callable[[str, tuple[str, ...]], Awaitable[ToolResult]] | None = None
    delegate: Delegate | None = None
    """Runs the ``agent`` tool's sub-task (the loop sets it for that call); None: no sub-agent
    can be started here (inside a sub-agent, or where the loop gives none)."""
    read_before_write: bool = False
    """``write`` refuses to replace an existing file not read in this session (the small-model
    assists turn it on: a small model "edits" a file it never saw by rewriting it whole)."""
    adds_only: bool = False
    """The task only adds (the small-model assists, ``agent.task_names.only_adds``): a write or
    edit that drops what a data or text file has is refused (``tools.assisted_checks``)."""


class Tool(Protocol):
    """A tool the model can call.

    Contract: ``run`` receives arguments already validated against ``parameters`` (required
    fields present, types right, no unknown fields). It returns a ``ToolResult``; expected
    failures (bad path, non-zero exit, missing text) are ``is_error`` results or a raised
    ``ToolError``, which the registry turns into one. ``run`` is cancellable: cancelling it
    stops all work and kills any child process before the cancellation propagates.

    Optional methods the registry uses when present: ``async precheck(args, ctx)`` raises
    ``ToolError`` when a call is bound to fail (before approval), and
    ``async describe(args, ctx) -> ToolPreview`` previews a call against the workspace as it
    is (write/edit: a diff of the file); without it, or when it fails, ``preview(args)``.
    """

    name: str
    description: str
    parameters: Mapping[str, Any]
    side_effects: bool

    def preview(self, args: Mapping[str, Any]) -> ToolPreview: ...

    async def run(self, args: Mapping[str, Any], ctx: ToolContext) -> ToolResult: ...
