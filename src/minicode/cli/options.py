"""``Options``: everything the command line said, as a frozen value (SPEC 1); ``cli/args.py``
builds it, the frontends and their tests take it."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from minicode.config import THINKING_LEVELS as THINK_LEVELS

__all__ = ["DEFAULT_MAX_TURNS", "OUTPUT_FORMATS", "THINK_LEVELS", "Options"]

DEFAULT_MAX_TURNS = 500
OUTPUT_FORMATS = ("text", "json", "stream-json")


@dataclass(frozen=True, slots=True)
class Options:
    """Everything the command line said, validated for shape (not yet for the filesystem)."""

    task: tuple[str, ...] = ()
    """The TASK words as given; `task_text` joins them."""
    session: str | None = None
    continue_session: bool = False
    """`-c/--continue`: resume the most recently updated session of the workspace."""
    yes: bool = False
    """`-y/--yes`: approve every side-effect tool call automatically (deny rules still deny)."""
    allow: tuple[str, ...] = ()
    """`--allow RULE` (repeatable): permission rules added for this run."""
    deny: tuple[str, ...] = ()
    """`--deny RULE` (repeatable): deny rules added for this run."""
    max_turns: int = DEFAULT_MAX_TURNS
    timeout: float | None = None
    """Wall-clock seconds per task, approvals included; None = no limit."""
    model: str | None = None
    think: str | None = None
    config: Path | None = None
    directory: Path | None = None
    """`-C DIR` as given; the CLI checks that it is an existing directory."""
    init: bool = False
    user: bool = False
    """`--init --user`: write the per-user config instead of the workspace's."""
    base_url: str | None = None
    """Only with --init."""
    api_key_env: str | None = None
    """Only with --init."""
    checks: tuple[str, ...] = ()
    """`--check CMD` (repeatable): acceptance checks run when the model says it is done."""
    doctor: bool = False
    """`--doctor`: probe the configured endpoint and print a report instead of running a task."""
    json: bool = False
    """Only with --doctor: the report as one JSON object on stdout."""
    list_sessions: bool = False
    """`--sessions`: list this workspace's sessions and exit."""
    export: str | None = None
    """`--export ID`: write session ID (or a unique prefix) as Markdown to stdout and exit."""
    output: str = "text"
    """`--output`: "text" (the answer on stdout), "json" or "stream-json" (JSON Lines events)."""
    mcp_config: Path | None = None
    """`--mcp-config PATH`: more `[mcp.servers.NAME]` tables for this run (same name: these win)."""
    mcp: bool = False
    """`--mcp`: connect to the configured MCP servers, print their state and tools, and exit."""
    mcp_login: str | None = None
    """`--mcp-login NAME`: sign in to that remote MCP server anew (OAuth), list its tools, exit."""
    acp: bool = False
    """`--acp`: run as an Agent Client Protocol agent on stdin/stdout for an editor (docs/acp.md)."""
    plan: bool = False
    """`--plan`: plan mode from the start (read-only tools; the model proposes a task list). A
    one-shot run prints the plan and exits without acting; with `--yes` it accepts it and acts."""

    @property
    def task_text(self) -> str:
        """The TASK words joined; argv bytes that aren't UTF-8 (surrogate-escaped by
        Python) become U+FFFD, so the text can be stored and sent."""
        from minicode.tools.scrub import scrub

        return scrub(" ".join(self.task).strip())
