"""Messages at the JSON edge: local history validation and conversion to/from OpenAI JSON.

Pure functions over values. Owns SPEC 3.3's history rules (``validate_messages``), the
request shape of messages and tool declarations, the reasoning/content-part rules of SPEC
3.2 shared by streamed and non-streamed answers, usage parsing and the structural check of
tool calls. ``dict[str, Any]`` exists here because this is the JSON boundary.
Imports only the standard library, ``minicode.errors`` and ``minicode.provider.types``.
"""

from __future__ import annotations

import json
from typing import Any, Mapping, Sequence

from minicode.errors import APIError, ProtocolError
from minicode.provider.call_ids import unique_call_ids
from minicode.provider.types import ChatResponse, Message, ToolCall, ToolSpec, Usage

__all__ = [
    "arguments_text",
    "choice_zero",
    "content_parts",
    "merge_user_runs",
    "object_field",
    "normalise_arguments",
    "parse_chat_response",
    "parse_usage",
    "reasoning_of",
    "to_openai",
    "tool_spec_to_openai",
    "validate_messages",
    "validate_tool_calls",
]

_ROLES = frozenset({"system", "user", "assistant", "tool"})
_THINKING_PART_TYPES = frozenset({"thinking", "reasoning", "reasoning_text"})


# --- history validation ----------------------------------------------------------------


def validate_messages(messages: Sequence[Message]) -> None:
    """Raise ``ProtocolError`` naming the message index (and call id) if the history is invalid.

    Every assistant tool call must be answered by exactly one tool message before any other
    role speaks; the results of one batch may come in any order. Ids must be non-empty and
    unique within their batch (some local servers number calls per response, so the same id
    may legitimately reappear in a later batch). Linear in the number of messages.
    """
    open_calls: dict[str, int] = {}  # call id -> index of the assistant message that made it
    for index, message in enumerate(messages):
        role = message.role
        if role not in _ROLES:
            raise ProtocolError(f"invalid history: message {index} has unknown role {role!r}")
        if role == "tool":
            _check_tool_result(index, message, open_calls)
            continue
        if open_calls:
            pending = next(iter(open_calls))
            raise ProtocolError(
                f"invalid history: message {index} ({role}) comes before the result of "
                f"tool call {pending!r} from message {open_calls[pending]}"
            )
        if role == "assistant":
            _open_batch(index, message, open_calls)
        elif message.tool_calls or message.tool_call_id is not None:
            raise ProtocolError(f"invalid history: message {index} ({role}) carries tool-call fields")
    if open_calls:
        pending = next(iter(open_calls))
        raise ProtocolError(
            f"invalid history: tool call {pending!r} from message {open_calls[pending]} has no tool result"
        )


def _open_batch(index: int, message: Message, open_calls: dict[str, int]) -> None:
    if message.tool_call_id is not None:
        raise ProtocolError(f"invalid history: message {index} (assistant) has a tool_call_id")
    for call in message.tool_calls:
        if not call.id:
            raise ProtocolError(f"invalid history: message {index} has a tool call without an id")
        if not call.name:
            raise ProtocolError(f"invalid history: message {index}: tool call {call.id!r} has no name")
        if call.id in open_calls:
            raise ProtocolError(f"invalid history: message {index}: tool call id {call.id!r} is repeated")
        open_calls[call.id] = index


def _check_tool_result(index: int, message: Message, open_calls: dict[str, int]) -> None:
    call_id = message.tool_call_id
    if not call_id:
        raise ProtocolError(f"invalid history: message {index} (tool) has no tool_call_id")
    if call_id not in open_calls:
        raise ProtocolError(
            f"invalid history: message {index} (tool) answers tool call {call_id!r}, which is not open"
        )
    if message.content is None:
        raise ProtocolError(f"invalid history: message {index} (tool) for call {call_id!r} has no content")
    del open_calls[call_id]


# --- request JSON -------------------------------------------------------------------------


def merge_user_runs(messages: Sequence[Message]) -> list[Message]:
    """Consecutive user messages joined into one, their texts separated by a blank line.

    Some servers refuse two user messages in a row (strict role alternation), and a request can
    hold them: the project memory, a checkpoint's summary and the task come one after another,
    and a session written before the loop closed stopped tasks may end in a user message.
    Assistant and tool messages are never merged; nothing else changes. Linear."""
    merged: list[Message] = []
    for message in messages:
        previous = merged[-1] if merged else None
        if message.role == "user" and previous is not None and previous.role == "user":
            merged[-1] = Message.user(f"{previous.content or ''}\n\n{message.content or ''}")
        else:
            merged.append(message)
    return merged


def to_openai(message: Message) -> dict[str, Any]:
    """One message as Chat Completions JSON. Reasoning is never sent back to the server."""
    if message.role == "tool":
        return {"role": "tool", "tool_call_id": message.tool_call_id, "content": message.content or ""}
    if message.role == "assistant":
        out: dict[str, Any] = {"role": "assistant"}
        if message.tool_calls:
            out["content"] = message.content if message.content else None
            out["tool_calls"] = [
                {
                    "id": call.id,
                    "type": "function",
                    "function": {"name": call.name, "arguments": normalise_arguments(call.arguments)},
                }
                for call in message.tool_calls
            ]
        else:
            out["content"] = message.content or ""
        return out
    return {"role": message.role, "content": message.content or ""}


def tool_spec_to_openai(spec: ToolSpec) -> dict[str, Any]:
    """A tool declaration in the ``tools`` array of a request."""
    return {
        "type": "function",
        "function": {"name": spec.name, "description": spec.description, "parameters": dict(spec.parameters)},
    }


def normalise_arguments(arguments: str) -> str:
    """Empty or blank arguments mean "no arguments": ``{}``. Anything else is kept verbatim."""
    return arguments if arguments.strip() else "{}"


# --- response JSON ------------------------------------------------------------------------


def content_parts(content: object) -> tuple[str, str]:
    """Split ``content`` (a string or a list of parts) into (text, thinking)."""
    if isinstance(content, str):
        return content, ""
    if not isinstance(content, list):
        return "", ""
    text: list[str] = []
    thinking: list[str] = []
    for part in content:
        if isinstance(part, str):
            text.append(part)
        elif isinstance(part, dict):
            kind = part.get("type")
            if kind in _THINKING_PART_TYPES:
                thinking.append(_part_text(part.get(kind)) or _part_text(part.get("text")))
            elif kind in (None, "text", "output_text"):
                text.append(_part_text(part.get("text")))
    return "".join(text), "".join(thinking)


def object_field(obj: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    """``obj[key]`` when it is a JSON object, else an empty mapping (absent, null or malformed)."""
    value = obj.get(key)
    return value if isinstance(value, dict) else {}


def arguments_text(value: object) -> str:
    """A tool call's ``arguments`` as text: a string as sent, an object or list as its JSON
    (a few servers send the object rather than its JSON text), anything else as ``""``."""
    if isinstance(value, (dict, list)):
        return json.dumps(value)
    return value if isinstance(value, str) else ""


def _part_text(value: object) -> str:
    # Mistral nests thinking as a list of {"type": "text", "text": ...} parts.
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "".join(_part_text(v.get("text")) if isinstance(v, dict) else _part_text(v) for v in value)
    return ""


def reasoning_of(obj: Mapping[str, Any]) -> str:
    """Reasoning text of one message or delta: ``reasoning_content``, else ``reasoning``,
    else ``reasoning_details[].text`` — the first that is present, so it is never counted twice."""
    for key in ("reasoning_content", "reasoning"):
        value = obj.get(key)
        if isinstance(value, str) and value:
            return value
    details = obj.get("reasoning_details")
    if isinstance(details, list):
        return "".join(d["text"] for d in details if isinstance(d, dict) and isinstance(d.get("text"), str))
    return ""


def parse_usage(obj: object) -> Usage | None:
    """A usage object, or ``None`` when absent/null. ``total`` is taken as given unless it is
    missing or 0 while parts are reported; then it is their sum."""
    if not isinstance(obj, dict):
        return None
    prompt = _int_or_none(obj.get("prompt_tokens"))
    completion = _int_or_none(obj.get("completion_tokens"))
    total = _int_or_none(obj.get("total_tokens"))
    if prompt is None and completion is None and total is None:
        return None
    if not total and (prompt or completion):
        total = (prompt or 0) + (completion or 0)
    return Usage(prompt_tokens=prompt, completion_tokens=completion, total_tokens=total)


def _int_or_none(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def parse_chat_response(data: object) -> ChatResponse:
    """A non-streaming response body as a validated ``ChatResponse`` (``APIError`` if malformed)."""
    if not isinstance(data, dict):
        raise APIError("malformed response: the body is not a JSON object")
    choices = data.get("choices")
    choice = choice_zero(choices)
    if choice is None:
        raise APIError("malformed response: no choice with index 0")
    message = choice.get("message")
    if not isinstance(message, dict):
        raise APIError("malformed response: choice 0 has no message")
    text, thinking = content_parts(message.get("content"))
    reasoning = reasoning_of(message) or thinking
    calls = validate_tool_calls(_raw_calls(message.get("tool_calls")))
    finish = choice.get("finish_reason")
    return ChatResponse(
        message=Message(
            role="assistant",
            content=None if calls and not text else text,
            tool_calls=calls,
            reasoning=reasoning or None,
        ),
        finish_reason=finish if isinstance(finish, str) else None,
        usage=parse_usage(data.get("usage")),
    )


def choice_zero(choices: object) -> dict[str, Any] | None:
    """The choice with index 0 (a missing index counts as 0); SPEC 3.2 uses no other."""
    if not isinstance(choices, list):
        return None
    for choice in choices:
        if isinstance(choice, dict) and choice.get("index", 0) == 0:
            return choice
    return None


def _raw_calls(raw: object) -> list[tuple[str, str, str | None, str]]:
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise APIError("malformed response: tool_calls is not a list")
    out: list[tuple[str, str, str | None, str]] = []
    for item in raw:
        if not isinstance(item, dict):
            raise APIError("malformed response: a tool call is not an object")
        function = object_field(item, "function")
        call_id, name, kind = item.get("id"), function.get("name"), item.get("type")
        out.append(
            (
                call_id if isinstance(call_id, str) else "",
                name if isinstance(name, str) else "",
                kind if isinstance(kind, str) and kind else None,
                arguments_text(function.get("arguments")),
            )
        )
    return out


MISSING_NAME = "missing_name"
"""The name a tool call without one is given (it then fails as an unknown tool)."""


def validate_tool_calls(calls: Sequence[tuple[str, str, str | None, str]]) -> tuple[ToolCall, ...]:
    """Structural check of (id, name, type, arguments) tuples from the server.

    Whether the arguments are valid JSON is left to the agent loop, which turns a bad call
    into an error result the model can recover from; empty arguments become ``{}``. An id
    the response repeats is renamed (``same``, ``same-2``: see ``call_ids``) here, before
    anything can run, so each call has its own result.
    """
    out: list[ToolCall] = []
    for position, (call_id, name, kind, arguments) in enumerate(calls):
        if not call_id:
            raise APIError(f"malformed response: tool call {position} has no id")
        if not name:
            # small local models do emit this; one such call must not end the task and drop
            # the response's other calls: it runs as an unknown tool (an error result the model
            # can act on), under a name every server accepts when it is sent back
            name = MISSING_NAME
        if kind is not None and kind != "function":
            raise APIError(f"malformed response: tool call {call_id!r} has unsupported type {kind!r}")
        out.append(ToolCall(id=call_id, name=name, arguments=normalise_arguments(arguments)))
    ids = unique_call_ids([call.id for call in out])
    return tuple(call if call.id == new else ToolCall(new, call.name, call.arguments) for call, new in zip(out, ids))
