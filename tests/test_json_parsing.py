"""Every JSON minicode reads from outside (model output, server bodies, session and history
files, files in the workspace) goes through ``jsonsafe.loads``, whose nesting is bounded: a
plain ``json.loads`` of a document nested 100,000 deep raises RecursionError far from where it
came in (findings: a crashed resume, a crashed replay). The few direct parses left read what
minicode itself wrote over its own pipes, or catch RecursionError themselves."""

from __future__ import annotations

import ast
from pathlib import Path

import minicode

SRC = Path(minicode.__file__).parent
ALLOWED = {
    "jsonsafe.py": "the bounded parser itself",
    "tools/grep.py": "lines its own worker process wrote",
    "tools/grep_worker.py": "the job its parent wrote",
    "cli/frontends/json/event_json.py": "tool arguments for an event: catches RecursionError, keeps NaN as text",
}


def _direct_parses(path: Path) -> list[int]:
    lines = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in ("loads", "load")
                and isinstance(node.func.value, ast.Name) and node.func.value.id == "json"):
            lines.append(node.lineno)
    return lines


def test_untrusted_json_is_parsed_with_bounded_nesting() -> None:
    found = {str(p.relative_to(SRC)): _direct_parses(p) for p in sorted(SRC.rglob("*.py"))}
    offenders = {name: lines for name, lines in found.items() if lines and name not in ALLOWED}
    assert offenders == {}, f"use jsonsafe.loads (bounded nesting) instead of json.loads: {offenders}"
    assert all(found.get(name) for name in ALLOWED if name != "jsonsafe.py"), "the allowance is stale"
