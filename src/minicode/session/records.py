"""The JSON shape of session records: messages, checkpoints and turn ends to and from dicts.

Pure conversion at the JSON edge of the session file; ``store.py`` does the I/O. A record
is one JSON object per line with a ``type`` field: ``header``, ``message``, ``checkpoint``,
``turn_end``, ``rewind`` (the conversation continues from its first ``keep`` messages) or
``settings`` (the model, thinking level or mode chosen for the rest of the session) or ``todo``
(the task list, whole, as it is from there on). System
messages are never stored. A tool-result record may carry ``is_error`` and ``exit_code``, and
``status``, ``duration``, ``summary``, ``diff`` and ``nested`` (how the call ended, for replay; never part
of the wire message). A tool call the model wrote as text (``agent.text_calls``) carries
``from_text: true``.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from minicode import jsonsafe
from minicode.agent.deps import ToolOutcome
from minicode.agent.events import CheckResult
from minicode.agent.stats import TaskStats
from minicode.compaction.checkpoint import Checkpoint
from minicode.config import THINKING_LEVELS
from minicode.errors import SessionError
from dataclasses import dataclass
from minicode.provider.types import Message, ToolCall
from minicode.tools.todo_list import TodoList, from_json

__all__ = [
    "FORMAT_VERSION",
    "MODES",
    "MODEL_NAME_MAX",
    "SessionSettings",
    "checkpoint_from_record",
    "checkpoint_record",
    "header_record",
    "message_from_line",
    "message_from_record",
    "message_record",
    "outcome_from_record",
    "rewind_from_record",
    "rewind_record",
    "settings_from_record",
    "settings_record",
    "todo_from_record",
    "todo_record",
    "turn_end_record",
    "validate_model_name",
]

FORMAT_VERSION = 1
MODES = ("plan", "act")
_ROLES = ("user", "assistant", "tool")
MODEL_NAME_MAX = 200


@dataclass(frozen=True, slots=True)
class SessionSettings:
    """What ``/model``, ``/think`` and ``/plan`` chose for the rest of a session (None: not chosen)."""

    model: str | None = None
    thinking: str | None = None
    mode: str | None = None
    """``plan`` or ``act`` (``MODES``); None: never switched (acting)."""

    def merged(self, later: "SessionSettings") -> "SessionSettings":
        return SessionSettings(later.model or self.model, later.thinking or self.thinking, later.mode or self.mode)


def header_record(session_id: str, workspace: str, created: str) -> dict[str, Any]:
    return {"type": "header", "v": FORMAT_VERSION, "id": session_id, "workspace": workspace, "created": created}


def message_record(message: Message, outcome: ToolOutcome | None = None) -> dict[str, Any]:
    """The stored form of a message; only the fields that are set are written. A tool
    result's ``outcome`` becomes ``is_error``/``exit_code`` (stored only, never sent)."""
    if message.role == "system":
        raise SessionError("system messages are never stored in a session")
    rec: dict[str, Any] = {"type": "message", "role": message.role, "content": message.content}
    if message.tool_calls:
        rec["tool_calls"] = [_call_record(c) for c in message.tool_calls]
    if message.tool_call_id is not None:
        rec["tool_call_id"] = message.tool_call_id
    if message.reasoning:
        rec["reasoning"] = message.reasoning
    if outcome is not None and message.role == "tool":
        rec.update(_outcome_fields(outcome))
    return rec


def _call_record(call: ToolCall) -> dict[str, Any]:
    """A tool call as stored; ``from_text`` only for a call recovered from the answer's text."""
    rec: dict[str, Any] = {"id": call.id, "name": call.name, "arguments": call.arguments}
    if call.from_text:
        rec["from_text"] = True
    return rec


def _outcome_fields(outcome: ToolOutcome) -> dict[str, Any]:
    fields: dict[str, Any] = {"is_error": outcome.is_error}
    if outcome.exit_code is not None:
        fields["exit_code"] = outcome.exit_code
    if outcome.status is not None:
        fields["status"] = outcome.status
    if outcome.duration_seconds is not None:
        fields["duration"] = round(outcome.duration_seconds, 3)
    if outcome.summary:
        fields["summary"] = outcome.summary
    if outcome.diff:
        fields["diff"] = outcome.diff
    if outcome.nested:
        fields["nested"] = list(outcome.nested)
    return fields


_STATUSES = ("done", "failed", "denied", "interrupted")


def outcome_from_record(rec: Mapping[str, Any]) -> ToolOutcome | None:
    """The stored outcome of a tool-result record (None when it has none: older files).

    ``is_error``/``exit_code`` must be well-formed; the fields for replay (``status``,
    ``duration``, ``summary``, ``diff``, ``nested``) only ever change how a call is shown, so one that is
    malformed is left out rather than refusing the file."""
    is_error = rec.get("is_error")
    if is_error is None:
        return None
    exit_code = rec.get("exit_code")
    if not isinstance(is_error, bool):
        raise ValueError(f"tool result field 'is_error' must be true or false, got {_shown(is_error)}")
    if not (exit_code is None or type(exit_code) is int):
        raise ValueError(f"tool result field 'exit_code' must be a whole number or null, got {_shown(exit_code)}")
    status = rec.get("status")
    duration = rec.get("duration")
    summary, diff = rec.get("summary"), rec.get("diff")
    seconds = float(duration) if isinstance(duration, (int, float)) and not isinstance(duration, bool) else None
    return ToolOutcome(
        is_error,
        exit_code,
        status=status if status in _STATUSES else None,
        duration_seconds=seconds if seconds is not None and 0 <= seconds < 1e9 else None,
        summary=summary if isinstance(summary, str) else "",
        diff=diff if isinstance(diff, str) else "",
        nested=_nested(rec.get("nested")),
    )


_NESTED_MAX = 100  # lines of a sub-agent's calls read back (minicode writes at most 31)


def _nested(value: Any) -> tuple[str, ...]:
    """A sub-agent's call lines, as far as they are lines of text (for replay only)."""
    if not isinstance(value, list):
        return ()
    return tuple(line for line in value[:_NESTED_MAX] if isinstance(line, str))


def message_from_line(line: bytes, *, repair_surrogates: bool = True) -> tuple[Message, ToolOutcome | None]:
    """The message and tool outcome of one message record's line (UTF-8 JSON, no newline).
    The one check of a stored message: the reader applies it to every message line before a
    resume may write, and ``MessageLog`` again when it parses the message later. Raises
    ValueError (invalid UTF-8 or JSON, too deep, a malformed field) naming what is wrong.
    ``repair_surrogates=False`` (only checking: a lone surrogate becomes U+FFFD in text, which
    never changes the verdict) spares the search for one (~1 ms a MB)."""
    rec = jsonsafe.loads(line, repair_surrogates=repair_surrogates)
    if not isinstance(rec, dict) or rec.get("type") != "message":
        raise ValueError("not a message record")
    return message_from_record(rec), outcome_from_record(rec)


def message_from_record(rec: Mapping[str, Any]) -> Message:
    """Rebuild a message; raises ValueError naming the field on any shape the writer never
    produces (the reader adds the line number)."""
    role = rec.get("role")
    if role not in _ROLES:
        raise ValueError(f"message field 'role' must be one of {', '.join(_ROLES)}, got {_shown(role)}")
    content = _optional_text(rec, "content")
    raw_calls = rec.get("tool_calls", ())
    if not isinstance(raw_calls, (list, tuple)):
        raise ValueError(f"message field 'tool_calls' must be a list of tool calls, got {_shown(raw_calls)}")
    calls = tuple(_call_from(i, c) for i, c in enumerate(raw_calls))
    return Message(role=role, content=content, tool_calls=calls, tool_call_id=_optional_text(rec, "tool_call_id"),
                   reasoning=_optional_text(rec, "reasoning"))


def _optional_text(rec: Mapping[str, Any], key: str) -> str | None:
    value = rec.get(key)
    if value is not None and not isinstance(value, str):
        raise ValueError(f"message field {key!r} must be text or null, got {_shown(value)}")
    return value


def _call_from(index: int, raw: Any) -> ToolCall:
    if not isinstance(raw, dict):
        raise ValueError(f"message field 'tool_calls[{index}]' must be an object, got {_shown(raw)}")
    for key in ("id", "name", "arguments"):
        if not isinstance(raw.get(key), str):
            raise ValueError(f"message field 'tool_calls[{index}].{key}' must be text, got {_shown(raw.get(key))}")
    from_text = raw.get("from_text", False)
    if not isinstance(from_text, bool):
        raise ValueError(
            f"message field 'tool_calls[{index}].from_text' must be true or false, got {_shown(from_text)}"
        )
    return ToolCall(id=raw["id"], name=raw["name"], arguments=raw["arguments"], from_text=from_text)


def _shown(value: object) -> str:
    """A field's value in a message: its JSON type, and the value itself when short."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"the boolean {str(value).lower()}"
    if isinstance(value, (int, float)):
        return f"the number {value}"
    if isinstance(value, str):
        return f"the text {value[:40]!r}" + ("…" if len(value) > 40 else "")
    return "a list" if isinstance(value, (list, tuple)) else "an object"


def checkpoint_record(checkpoint: Checkpoint) -> dict[str, Any]:
    rec: dict[str, Any] = {"type": "checkpoint", "summary": checkpoint.summary, "first_kept": checkpoint.first_kept}
    if checkpoint.todo:
        rec["todo"] = checkpoint.todo
    return rec


def checkpoint_from_record(rec: Mapping[str, Any]) -> Checkpoint:
    summary, first = rec.get("summary"), rec.get("first_kept")
    if not isinstance(summary, str):
        raise ValueError(f"checkpoint field 'summary' must be text, got {_shown(summary)}")
    if not isinstance(first, int) or isinstance(first, bool) or first < 0:
        raise ValueError(f"checkpoint field 'first_kept' must be a whole number >= 0, got {_shown(first)}")
    todo = rec.get("todo", "")
    if not isinstance(todo, str):
        raise ValueError(f"checkpoint field 'todo' must be text, got {_shown(todo)}")
    return Checkpoint(summary=summary, first_kept=first, todo=todo)


def turn_end_record(status: str, stats: TaskStats, checks: Sequence[CheckResult] = ()) -> dict[str, Any]:
    """How a task ended; ``checks`` (the last run of the acceptance checks) only when any ran."""
    record: dict[str, Any] = {
        "type": "turn_end",
        "status": status,
        "stats": {
            "wall_seconds": round(stats.wall_seconds, 3),
            "model_calls": stats.model_calls,
            "tool_calls": stats.tool_calls,
            "prompt_tokens": stats.prompt_tokens,
            "completion_tokens": stats.completion_tokens,
            "total_tokens": stats.total_tokens,
            "calls_with_usage": stats.calls_with_usage,
        },
    }
    status_text = "done (checks passed)" if status == "done" and checks else status
    record["shown"] = f"{status_text} · {stats.format()}"  # the early frame shows it as the live view did
    if stats.subagents:
        record["stats"]["subagents"] = stats.subagents  # their calls and tokens are in the counts
    if stats.questions:
        record["stats"]["questions"] = stats.questions
    if checks:
        record["stats"]["check_runs"] = stats.check_runs
        record["checks"] = [
            {"command": c.command, "passed": c.passed, "exit_code": c.exit_code,
             "timed_out": c.timed_out, "seconds": round(c.duration_seconds, 3)}
            for c in checks
        ]
    return record


def rewind_record(keep: int) -> dict[str, Any]:
    return {"type": "rewind", "keep": keep}


def rewind_from_record(rec: Mapping[str, Any]) -> int:
    """The number of messages the conversation keeps; ValueError when malformed (the caller
    checks it against the history: it must point at a user message)."""
    keep = rec.get("keep")
    if type(keep) is not int or keep < 0:
        raise ValueError("malformed rewind record")
    return keep


def validate_model_name(name: str) -> str | None:
    """Why ``name`` cannot be a model name, or None."""
    if not name or not name.strip():
        return "the model name is empty"
    if len(name) > MODEL_NAME_MAX:
        return f"the model name is longer than {MODEL_NAME_MAX} characters"
    if any(ch.isspace() or ord(ch) < 0x20 or 0x7F <= ord(ch) < 0xA0 for ch in name):
        return "the model name contains spaces or control characters"
    return None


def settings_record(settings: SessionSettings) -> dict[str, Any]:
    rec: dict[str, Any] = {"type": "settings"}
    if settings.model is not None:
        rec["model"] = settings.model
    if settings.thinking is not None:
        rec["thinking"] = settings.thinking
    if settings.mode is not None:
        rec["mode"] = settings.mode
    return rec


def settings_from_record(rec: Mapping[str, Any]) -> SessionSettings:
    model, thinking, mode = rec.get("model"), rec.get("thinking"), rec.get("mode")
    if model is not None and (not isinstance(model, str) or validate_model_name(model) is not None):
        raise ValueError("malformed model name in a settings record")
    if thinking is not None and thinking not in THINKING_LEVELS:
        raise ValueError("unknown thinking level in a settings record")
    if mode is not None and mode not in MODES:
        raise ValueError("unknown mode in a settings record")
    return SessionSettings(model, thinking, mode)


def todo_record(todo: TodoList) -> dict[str, Any]:
    return {"type": "todo", "items": todo.to_json()}


def todo_from_record(rec: Mapping[str, Any]) -> TodoList:
    items = rec.get("items")
    if not isinstance(items, list):
        raise ValueError("todo field 'items' must be a list")
    return from_json(items)
