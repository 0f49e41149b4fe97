"""The shape of one streamed Chat Completions chunk, checked before it is merged. Pure.

A server (or something in between) that sends ``{"choices": "x"}`` or a ``delta`` that is a
string is broken; merging such a chunk leniently would end the task ``done`` with an empty
answer, which is a wrong answer told as a right one. So every field minicode reads must have
the type the protocol gives it — or be absent or ``null``, which servers use for "nothing
here" — else the stream is a protocol error naming the field (``APIError``, exit 1). Fields
minicode does not read are not looked at. Imports only ``minicode.errors``.
"""

from __future__ import annotations

from typing import Any

from minicode.errors import APIError

__all__ = ["check_chunk"]

_MAX_SHOWN = 60


def _kind(value: object) -> str:
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return f"the number {value!r}"  # "must be a whole number, got the number 0.5"
    if isinstance(value, str):
        shown = value if len(value) <= _MAX_SHOWN else value[:_MAX_SHOWN] + "…"
        return f"the string {shown!r}"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "an object"
    return "null"


def _bad(where: str, expected: str, value: object) -> APIError:
    return APIError(f"malformed stream: {where} must be {expected}, got {_kind(value)}")


def _expect(obj: dict[str, Any], key: str, types: type | tuple[type, ...], expected: str, where: str) -> None:
    value = obj.get(key)
    if value is not None and (not isinstance(value, types) or isinstance(value, bool) and bool not in _tuple(types)):
        raise _bad(f"{where}{key!r}", expected, value)


def _tuple(types: type | tuple[type, ...]) -> tuple[type, ...]:
    return types if isinstance(types, tuple) else (types,)


def check_chunk(chunk: dict[str, Any]) -> None:
    """Raise ``APIError`` when a field minicode reads has the wrong type (see the module doc)."""
    _expect(chunk, "choices", list, "an array of choices", "the chunk's ")
    for position, choice in enumerate(chunk.get("choices") or ()):
        where = f"choices[{position}]"
        if not isinstance(choice, dict):
            raise _bad(where, "an object", choice)
        _expect(choice, "index", int, "a whole number", f"{where}.")
        _expect(choice, "finish_reason", str, "a string", f"{where}.")
        delta = choice.get("delta")
        if delta is None:
            continue
        if not isinstance(delta, dict):
            raise _bad(f"{where}.delta", "an object", delta)
        _check_delta(delta, f"{where}.delta.")


def _check_delta(delta: dict[str, Any], where: str) -> None:
    _expect(delta, "content", (str, list), "a string or an array of parts", where)
    for key in ("reasoning_content", "reasoning"):
        _expect(delta, key, str, "a string", where)
    _expect(delta, "tool_calls", list, "an array", where)
    for position, call in enumerate(delta.get("tool_calls") or ()):
        call_where = f"{where}tool_calls[{position}]"
        if not isinstance(call, dict):
            raise _bad(call_where, "an object", call)
        _expect(call, "index", int, "a whole number", f"{call_where}.")
        _expect(call, "id", str, "a string", f"{call_where}.")
        _expect(call, "function", dict, "an object", f"{call_where}.")
        function = call.get("function") or {}
        _expect(function, "name", str, "a string", f"{call_where}.function.")
        # arguments: a string, or (a few servers) the object itself: both are accepted
        _expect(function, "arguments", (str, dict, list), "a string", f"{call_where}.function.")
