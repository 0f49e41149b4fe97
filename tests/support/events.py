"""Checks for the JSON event stream (``--output json|stream-json``) against docs/events.schema.json.

``check_stream(stdout)`` is what every test of the stream asserts first: stdout is only JSON
Lines (split at "\\n" only, and holding no other character ``str.splitlines`` breaks at),
each line valid under the published schema (the reference ``jsonschema`` implementation),
every field it carries declared there (the schema stays open for additions
within v1, so this is checked separately), ``seq`` counts 1, 2, 3…, each line carries the
id of the last ``session`` event (null before one), and the last line is a ``result``.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator

__all__ = ["SCHEMA_PATH", "check_stream", "declared_fields", "of_type", "validator"]

SCHEMA_PATH = Path(__file__).resolve().parents[2] / "docs" / "events.schema.json"


@cache
def _schema() -> dict[str, Any]:
    return json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))


@cache
def validator() -> Draft202012Validator:
    schema = _schema()
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema)


def _properties(node: Any) -> set[str]:
    """Property names declared by a schema node, its allOf/oneOf branches and their then/else."""
    if not isinstance(node, dict):
        return set()
    names = set(node.get("properties", {}))
    for key in ("allOf", "oneOf", "anyOf"):
        for branch in node.get(key, []):
            names |= _properties(branch)
    for key in ("then", "else"):
        names |= _properties(node.get(key))
    return names


def declared_fields(event_type: str) -> set[str]:
    schema = _schema()
    return set(schema["properties"]) | _properties(schema["$defs"][event_type])


def check_stream(stdout: str, *, final: bool = True) -> list[dict[str, Any]]:
    """The events of one run's stdout, each checked; ``final``: the run ended (last is a result)."""
    assert stdout.endswith("\n") or stdout == "", f"stdout does not end with a newline: {stdout[-200:]!r}"
    lines = stdout.split("\n")[:-1]  # JSON Lines end at "\n" only
    # ... and nothing else in them may look like a line end to a reader that splits on
    # more (Python's str.splitlines: U+2028, U+2029, NEL and other C1/C0 separators)
    assert stdout.splitlines() == lines, "a line holds a raw line separator other than \\n"
    events: list[dict[str, Any]] = []
    for number, line in enumerate(lines, 1):
        try:
            event = json.loads(line)
        except json.JSONDecodeError as e:
            raise AssertionError(f"stdout line {number} is not JSON: {line[:300]!r}") from e
        errors = sorted(validator().iter_errors(event), key=lambda e: list(e.path))
        assert not errors, f"line {number} breaks the schema: {errors[0].message} at {list(errors[0].path)}\n{line[:500]}"
        undeclared = set(event) - declared_fields(event["type"])
        assert not undeclared, f"line {number}: fields not in the schema: {sorted(undeclared)}"
        events.append(event)
    assert events, "stdout carried no event"
    assert [e["seq"] for e in events] == list(range(1, len(events) + 1)), "seq must count 1, 2, 3, …"
    current = None  # the session id changes only with a `session` event (`/new` in pipe mode)
    for event in events:
        if event["type"] == "session":
            current = event["id"]
        assert event["session"] == current, f"seq {event['seq']}: session {event['session']}, expected {current}"
    if final:
        assert events[-1]["type"] == "result", f"the last line is a {events[-1]['type']}, not a result"
    return events


def of_type(events: list[dict[str, Any]], event_type: str) -> list[dict[str, Any]]:
    return [e for e in events if e["type"] == event_type]
