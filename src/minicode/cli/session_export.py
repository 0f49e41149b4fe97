"""``minicode --export ID``: a session's conversation as Markdown on stdout.

The conversation as it stands (messages a rewind removed are left out): the user's messages
as quotes, the answers as the Markdown they are, each tool call with its arguments and its
result cut to a readable size (``RESULT_HEAD_LINES`` + ``RESULT_TAIL_LINES`` lines, at most
``RESULT_CHARS`` characters). Reasoning is left out. Messages are read one at a time
(``MessageLog.peek``), so a big session costs no more memory than its largest message.
Standard library only.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Iterator, Mapping, TextIO

from minicode import jsonsafe
from minicode.agent.deps import ToolOutcome
from minicode.agent.stopped import STOPPED_SHOWN, is_stopped_note
from minicode.provider.types import Message, ToolCall
from minicode.session.catalog import resolve_session_id
from minicode.session.reader import LoadedSession
from minicode.session.store import reading_session

__all__ = ["RESULT_CHARS", "closed_fences", "demoted_headings", "export_markdown", "run_export"]

RESULT_HEAD_LINES = 25
RESULT_TAIL_LINES = 5
RESULT_CHARS = 4000
_ARGUMENT_CHARS = 2000
_BACKTICKS = re.compile(r"`{3,}")
_FENCE_OPEN = re.compile(r" {0,3}(`{3,}(?=[^`]*$)|~{3,})")
_ATX = re.compile(r"( {0,3})(#{1,6})(?=[ \t]|$)")
_SETEXT = re.compile(r" {0,3}(=+|-+)[ \t]*$")
_NOT_PARAGRAPH = re.compile(r" {0,3}([#>|]|[-*+][ \t]|\d{1,9}[.)][ \t]|$)")
TURN_LEVEL = 2
"""The document's turn sections are ``## User`` / ``## Assistant``."""


def run_export(workspace: Path, given_id: str, out: TextIO, err: TextIO) -> int:
    session_id = resolve_session_id(workspace, given_id)
    with reading_session(workspace, session_id) as loaded:
        for warning in loaded.warnings:
            err.write(f"minicode: warning: {warning}\n")
        for piece in export_markdown(loaded, str(workspace)):
            out.write(piece)
    out.flush()
    return 0


def export_markdown(loaded: LoadedSession, workspace: str) -> Iterator[str]:
    """The Markdown, in pieces (one per message)."""
    log = loaded.messages
    yield f"# minicode session {loaded.session_id}\n\n"
    yield f"- workspace: `{workspace}`\n"
    if loaded.created:
        yield f"- created: {loaded.created}\n"
    if loaded.settings.model or loaded.settings.thinking:
        chosen = ", ".join(f"{k} {v}" for k, v in (("model", loaded.settings.model),
                                                  ("thinking", loaded.settings.thinking)) if v)
        yield f"- chosen in the session: {chosen}\n"
    yield f"- messages: {len(log):,}\n"
    calls: dict[str, ToolCall] = {}
    for index in range(len(log)):
        message = log.peek(index)
        yield _message(message, calls, log.outcomes)


def _message(message: Message, calls: dict[str, ToolCall], outcomes: Mapping[str, ToolOutcome]) -> str:
    if message.role == "user":
        return "\n## User\n\n" + _quote(demoted_headings(message.content or "")) + "\n"
    if is_stopped_note(message):  # minicode's own note, not the model's words
        return f"\n*{STOPPED_SHOWN}*\n"
    if message.role == "assistant":
        parts = []
        if message.content and message.content.strip():
            parts.append("\n## Assistant\n\n" + closed_fences(demoted_headings(message.content.strip())) + "\n")
        for call in message.tool_calls:
            calls[call.id] = call
            parts.append(_call(call))
        return "".join(parts)
    if message.role == "tool":
        call_id = message.tool_call_id or ""
        outcome = outcomes.get(call_id)
        status = ""
        if outcome is not None:
            status = " (failed)" if outcome.is_error else ""
            if outcome.exit_code is not None:
                status = f" (exit {outcome.exit_code})"
        name = _inline(calls[call_id].name) if call_id in calls else "tool"
        nested = ""
        if outcome is not None and outcome.nested:  # an agent call: what its sub-agent did
            nested = "\nIts sub-agent's calls:\n\n" + _fenced(_cut("\n".join(outcome.nested)), "text")
        return nested + f"\n{name} result{status}:\n\n" + _fenced(_cut(message.content or ""), "text")
    return ""


def _call(call: ToolCall) -> str:
    try:
        args = jsonsafe.loads(call.arguments or "{}", repair_surrogates=True)
    except ValueError:
        args = None
    head = f"\n**Tool call** `{_inline(call.name)}`" + (" (recovered from text)" if call.from_text else "")
    if not isinstance(args, dict):
        return head + " (arguments are not valid JSON):\n\n" + _fenced(_cut(call.arguments, _ARGUMENT_CHARS), "text")
    text = {k: v for k, v in args.items() if isinstance(v, str)}
    if call.name == "bash" and "command" in text:
        return head + ":\n\n" + _fenced(_cut(text["command"], _ARGUMENT_CHARS), "sh")
    if "path" in text:
        head += f" `{_inline(text['path'])}`"
    if call.name == "write" and "content" in text:
        return head + ":\n\n" + _fenced(_cut(text["content"], _ARGUMENT_CHARS), "text")
    if call.name == "edit" and "old_text" in text and "new_text" in text:
        diff = [*("- " + line for line in text["old_text"].splitlines()),
                *("+ " + line for line in text["new_text"].splitlines())]
        every = " (every occurrence)" if args.get("replace_all") is True else ""
        return head + f"{every}:\n\n" + _fenced(_cut("\n".join(diff), _ARGUMENT_CHARS), "diff")
    rest = {k: v for k, v in args.items() if k != "path"}
    if not rest:
        return head + "\n"
    if all(isinstance(v, (str, int, float, bool)) and len(str(v)) <= 80 and "\n" not in str(v) for v in rest.values()):
        return head + " — " + ", ".join(f"{k}: `{_inline(str(v))}`" for k, v in rest.items()) + "\n"
    shown = json.dumps(rest, indent=2, ensure_ascii=False)
    return head + ":\n\n" + _fenced(_cut(shown, _ARGUMENT_CHARS), "json")


def _cut(text: str, chars: int = RESULT_CHARS) -> str:
    """At most the first and last lines and ``chars`` characters, saying what was left out."""
    lines = text.splitlines()
    if len(lines) > RESULT_HEAD_LINES + RESULT_TAIL_LINES:
        left = len(lines) - RESULT_HEAD_LINES - RESULT_TAIL_LINES
        lines = [*lines[:RESULT_HEAD_LINES], f"[… {left:,} more lines …]", *lines[-RESULT_TAIL_LINES:]]
    out = "\n".join(lines)
    if len(out) > chars:
        out = out[:chars] + f"\n[… {len(out) - chars:,} more characters …]"
    return out


def _fenced(text: str, language: str) -> str:
    """``text`` in a code fence longer than any backtick run inside it."""
    longest = max((len(m.group(0)) for m in _BACKTICKS.finditer(text)), default=2)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{language}\n{text}\n{fence}\n"


def closed_fences(markdown: str) -> str:
    """``markdown`` with a code fence it leaves open closed at its end: an answer cut off (or
    written) mid-block must not turn the rest of the export into code."""
    opened: str | None = None
    for line in markdown.splitlines():
        if opened is None:
            if match := _FENCE_OPEN.match(line):
                opened = match.group(1)
        elif _closes(line, opened):
            opened = None
    return markdown if opened is None else f"{markdown}\n{opened}"


def demoted_headings(markdown: str) -> str:
    """An answer's own headings pushed below the turn sections (``# Plan`` → ``### Plan``, at
    most ``######``), so the export's outline keeps the conversation's structure; a one-line
    setext heading (``Plan`` over ``===``) becomes the same. Code blocks are left alone."""
    out: list[str] = []
    opened: str | None = None
    for line in markdown.splitlines():
        if opened is not None:
            if _closes(line, opened):
                opened = None
        elif match := _FENCE_OPEN.match(line):
            opened = match.group(1)
        elif match := _ATX.match(line):
            level = min(6, len(match.group(2)) + TURN_LEVEL)
            line = match.group(1) + "#" * level + line[match.end():]
        elif (match := _SETEXT.match(line)) and _one_line_paragraph(out):
            level = min(6, (1 if match.group(1)[0] == "=" else 2) + TURN_LEVEL)
            out[-1] = "#" * level + " " + out[-1].strip()
            continue
        out.append(line)
    return "\n".join(out)


def _one_line_paragraph(before: list[str]) -> bool:
    """The line above is a paragraph's only line (a blank line or nothing above it)."""
    return bool(before) and not _NOT_PARAGRAPH.match(before[-1]) and (len(before) == 1 or not before[-2].strip())


def _closes(line: str, opened: str) -> bool:
    bare = line.strip()
    return bool(bare) and set(bare) == {opened[0]} and len(bare) >= len(opened) and len(line) - len(line.lstrip(" ")) <= 3


def _quote(text: str) -> str:
    return "\n".join("> " + line if line else ">" for line in text.splitlines() or [""])


def _inline(text: str) -> str:
    return text.replace("`", "'").replace("\n", " ")
