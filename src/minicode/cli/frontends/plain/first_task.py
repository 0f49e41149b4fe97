"""What a non-interactive run's input means, before anything heavy is loaded.

The one-shot task with its piped context (``attach_piped``) and whether a pipe-mode line is a
command rather than a task (``is_command``: ``/compact``, ``/permissions …``, the commands of
``cli.frontends.plain.pipe_commands``, ``/plan …`` and near misses of any of them). ``cli.frontends.plain.driver`` runs the tasks and
commands with these. Cheap to import: no asyncio, no dataclasses.
"""

from __future__ import annotations

from minicode.cli.frontends.shared.near_miss import nearest

__all__ = ["FULL_SCREEN_ONLY", "KNOWN", "PIPE_COMMANDS", "attach_piped", "is_command", "is_pipe_command"]

PIPE_COMMANDS = ("/undo", "/new", "/model", "/think", "/check", "/skills")
KNOWN = (*PIPE_COMMANDS, "/compact", "/permissions", "/plan")
"""Every command a pipe-mode line can be (a near miss of any of them is refused)."""
FULL_SCREEN_ONLY = ("/help", "/rewind", "/resume", "/mcp", "/exit", "/quit")
"""Commands of the full screen alone: a pipe line or a one-shot TASK that is one (or a near
miss of one) is refused, never sent to the model as a task."""


def attach_piped(task: str, piped: str | None) -> str:
    """One-shot TASK with piped stdin attached as clearly delimited context."""
    if not piped:
        return task
    body = piped if piped.endswith("\n") else piped + "\n"
    return f"{task}\n\n<stdin>\n{body}</stdin>"


def is_pipe_command(text: str) -> bool:
    """One of ``PIPE_COMMANDS``, a full-screen command, or a near miss of any command (the last
two refused when run)."""
    if not text.startswith("/") or not text.strip():
        return False
    word = text.split(maxsplit=1)[0]
    if word in PIPE_COMMANDS or word in FULL_SCREEN_ONLY:
        return True
    return word not in KNOWN and nearest(word, (*KNOWN, *FULL_SCREEN_ONLY)) is not None


def is_command(text: str) -> bool:
    """Whether a stripped, non-blank pipe-mode line is a command (never sent to the model)."""
    word = text.split(maxsplit=1)[0]
    return text == "/compact" or word in ("/permissions", "/plan") or is_pipe_command(text)
