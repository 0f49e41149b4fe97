"""A tool call's raw arguments -> a JSON object, or the message that tells the model why not.

Everything here is hostile input from the model: the text may be huge, nested 100,000 levels
deep, carry ``NaN``, lone surrogates or a non-object; the tool name may be anything. Every case
ends in a short, true message (never an exception). Pure.
"""

from __future__ import annotations

import json
from typing import Any, Iterable

from minicode.jsonsafe import DEFAULT_MAX_DEPTH, TooDeep, loads

__all__ = ["MAX_ARGUMENT_DEPTH", "parse_arguments", "unknown_tool_message"]

MAX_ARGUMENT_DEPTH = DEFAULT_MAX_DEPTH
"""How deep arrays/objects may nest in a call's arguments."""
_NAME_SHOWN = 60


class _NonFinite(ValueError):
    """NaN/Infinity in arguments: Python's json accepts them, JSON does not."""


def _no_constant(name: str) -> Any:
    raise _NonFinite(f"{name} is not a JSON number")


def shown_name(name: object) -> str:
    """A tool name fit for a message: repr'd (control characters visible), and short."""
    text = repr(name) if isinstance(name, str) else f"<{type(name).__name__}>"
    return text if len(text) <= _NAME_SHOWN else text[: _NAME_SHOWN - 1] + "…'"


def unknown_tool_message(name: object, available: Iterable[str]) -> str:
    if not isinstance(name, str) or not name.strip():
        return f"the tool call has no tool name; available tools: {', '.join(sorted(available))}"
    return f"unknown tool {shown_name(name)}; available tools: {', '.join(sorted(available))}"


def parse_arguments(tool: str, raw: object) -> dict[str, Any] | str:
    """The arguments as a dict, or an error message for the model."""
    if not isinstance(raw, str):
        return f"the arguments of {tool} must be a JSON object in a string, got {type(raw).__name__}"
    raw = raw.strip()
    if not raw:
        return {}
    try:
        args = loads(raw, MAX_ARGUMENT_DEPTH, parse_constant=_no_constant)
    except TooDeep:
        return (
            f"the arguments of {tool} nest arrays/objects deeper than {MAX_ARGUMENT_DEPTH} levels; "
            "send a flat JSON object with the documented fields"
        )
    except _NonFinite as e:
        return f"the arguments of {tool} are not valid JSON: {e}; send finite numbers"
    except json.JSONDecodeError as e:
        return (
            f"the arguments of {tool} are not valid JSON ({e.msg} at line {e.lineno} "
            f"column {e.colno}, char {e.pos}); send one JSON object"
        )
    except (ValueError, RecursionError, MemoryError) as e:
        return f"the arguments of {tool} cannot be parsed ({type(e).__name__}); send one JSON object"
    if not isinstance(args, dict):
        return f"the arguments of {tool} must be a JSON object, got {_json_kind(args)}"
    return args


def _json_kind(value: Any) -> str:
    if isinstance(value, list):
        return "an array"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, bool):
        return "a boolean"
    if value is None:
        return "null"
    return "a number"
