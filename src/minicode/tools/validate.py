"""Argument validation against the JSON-Schema subset the tools use. Pure.

Supported: ``type`` object at the top with ``properties``, ``required`` and
``additionalProperties: false``; property types string, integer, number, boolean (a JSON
``true`` is not an integer, ``1.5`` is not an integer, ``2.0`` is accepted as the integer 2);
``minimum``, ``maximum``, ``exclusiveMinimum``, ``minLength``; an ``array`` whose ``items`` have one
of those types or are objects (each item checked like a property; an object's fields are its tool's to check). Numbers must be finite
(NaN and infinities are refused), strings valid Unicode (no lone surrogates). An optional property sent as
``null`` counts as absent, since models often spell "not given" that way.
"""

from __future__ import annotations

import math
from typing import Any, Mapping

__all__ = ["validate_arguments"]

_LISTED_UNKNOWN = 10
_NAME_CHARS = 60
_TYPE_NAMES = {"string": "a string", "integer": "an integer", "number": "a number", "boolean": "true or false",
               "array": "an array", "object": "an object"}


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return "an object"


def _coerce(kind: str, value: Any) -> tuple[bool, Any]:
    """(ok, value) for one typed value; integers written as 2.0 become 2."""
    if kind == "string":
        return isinstance(value, str), value
    if kind == "boolean":
        return isinstance(value, bool), value
    if kind == "array":
        return isinstance(value, list), value
    if kind == "object":
        return isinstance(value, dict), value
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False, value
    if kind == "integer":
        if isinstance(value, float):
            return value.is_integer(), int(value) if value.is_integer() else value
        return True, value
    return kind == "number", value


def _bounds(name: str, schema: Mapping[str, Any], value: Any) -> str | None:
    if isinstance(value, str):
        min_len = schema.get("minLength")
        if min_len is not None and len(value) < min_len:
            return f"{name} must not be empty" if min_len == 1 else f"{name} needs at least {min_len} characters"
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    if "minimum" in schema and value < schema["minimum"]:
        return f"{name} must be >= {schema['minimum']} (got {value})"
    if "exclusiveMinimum" in schema and value <= schema["exclusiveMinimum"]:
        return f"{name} must be > {schema['exclusiveMinimum']} (got {value})"
    if "maximum" in schema and value > schema["maximum"]:
        return f"{name} must be <= {schema['maximum']} (got {value})"
    return None


def _unicode_problem(name: str, value: Any) -> str | None:
    """A string that is not valid Unicode (a lone UTF-16 surrogate, as JSON "\\ud800" gives)
    can be neither a file's text, a path nor a command: say where it is."""
    if not isinstance(value, str):
        return None
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as e:
        return (
            f"{name!r} contains an invalid character (a lone surrogate \\u{ord(value[e.start]):04x} at "
            f"position {e.start}); send valid Unicode text (an emoji is one character, not two \\u escapes)"
        )
    return None


def _items(name: str, spec: Mapping[str, Any], items: list[Any]) -> tuple[list[Any], str | None]:
    """An array's items checked against ``items``' type and bounds: (cleaned, the first problem)."""
    kind = spec.get("type")
    cleaned: list[Any] = []
    for index, item in enumerate(items):
        where = f"{name}[{index}]"
        ok, item = _coerce(kind, item) if kind is not None else (True, item)
        if not ok:
            return items, f"{where!r} must be {_TYPE_NAMES.get(str(kind), kind)}, got {_json_type(item)}"
        if problem := _bounds(where, spec, item) or _unicode_problem(where, item):
            return items, problem
        cleaned.append(item)
    return cleaned, None


def _short_repr(name: str) -> str:
    text = repr(name)
    return text if len(text) <= _NAME_CHARS else text[: _NAME_CHARS - 1] + "…'"


def validate_arguments(schema: Mapping[str, Any], args: Mapping[str, Any]) -> tuple[list[str], dict[str, Any]]:
    """Check ``args`` against ``schema``; return (problems, cleaned arguments).

    Every problem names the field and what is expected, so the model can fix its call.
    """
    props: Mapping[str, Mapping[str, Any]] = schema.get("properties", {})
    required = set(schema.get("required", ()))
    problems: list[str] = []
    cleaned: dict[str, Any] = {}
    for name in sorted(required):
        if args.get(name) is None:
            kind = props.get(name, {}).get("type", "value")
            problems.append(f"missing required field {name!r} ({_TYPE_NAMES.get(kind, kind)})")
    extra = sorted(k for k in args if k not in props)
    if extra and schema.get("additionalProperties", True) is False:
        shown = ", ".join(_short_repr(k) for k in extra[:_LISTED_UNKNOWN])
        more = f" and {len(extra) - _LISTED_UNKNOWN} more" if len(extra) > _LISTED_UNKNOWN else ""
        problems.append(f"unknown field(s) {shown}{more}; allowed: {', '.join(props)}")
    for name, value in args.items():
        if name not in props or (value is None and name not in required):
            continue
        spec = props[name]
        kind = spec.get("type")
        if kind is None:
            cleaned[name] = value
            continue
        ok, value = _coerce(kind, value)
        if ok and isinstance(value, float) and not math.isfinite(value):
            problems.append(f"{name!r} must be a finite number, got {value}")
            continue
        if not ok:
            if value is not None:
                problems.append(f"{name!r} must be {_TYPE_NAMES.get(kind, kind)}, got {_json_type(value)}")
            continue
        bound = _bounds(name, spec, value) or _unicode_problem(name, value)
        if isinstance(value, list):
            value, bound = _items(name, spec.get("items", {}), value)
        if bound:
            problems.append(bound)
        cleaned[name] = value
    return problems, cleaned
