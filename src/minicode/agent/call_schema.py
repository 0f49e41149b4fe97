"""The schema of a forced call (the small-model assists): what a small model's answer must be.

``agent.assists.must_call`` decides which tools the next answer must call; ``call_schema`` is
that as a JSON schema — ``{"name": <a tool>, "arguments": <its arguments>}`` — which the server
decodes under (``ChatRequest.answer_schema``, sent as ``response_format``), and ``edit_choices``
the ``old_text`` a forced edit may take: the file's own lines and definitions, so it cannot
miss. Pure apart from reading the files the choices come from.
"""

from __future__ import annotations

import keyword
import re
from pathlib import Path
from typing import Mapping, Sequence

from minicode.agent.assists import BRIEF_MAX_LINES, CHANGERS

__all__ = ["EDIT_CHOICES_MAX", "call_schema", "edit_choices"]


def call_schema(specs: Sequence[tuple[str, Mapping[str, object]]], paths: Sequence[str] | None = None,
                choices: Mapping[str, Sequence[str]] | None = None, keep: Sequence[str] = ()) -> dict[str, object]:
    """The JSON schema of one call to one of the tools ``specs`` (name, parameters schema):
    ``{"name": <a tool's name>, "arguments": <its arguments>}`` — the shape a small model writes
    by itself, which ``agent.text_calls`` turns into the call. A server decoding under it can
    only produce a call to a declared tool with arguments of the right shape. ``choices``
    (``edit_choices``): an edit's ``path`` and ``old_text`` are one of those files and one of its
    choices, so the edit always finds its text. The arguments are the required ones only, and
    those of ``keep`` (a rename's ``replace_all``): the 1.5B model spelled out every default
    (``"timeout": 120``, ``"offset": 1, "limit": 2``), tokens it generates at ~12 a second."""
    return {"oneOf": [
        {"type": "object", "properties": {"name": {"const": name},
                                          "arguments": _arguments(name, _required_only(parameters, keep), paths, choices)},
         "required": ["name", "arguments"], "additionalProperties": False}
        for name, parameters in specs
    ]}  # fmt: skip


def _required_only(parameters: Mapping[str, object], keep: Sequence[str]) -> Mapping[str, object]:
    """``parameters`` with only its required properties and those of ``keep``, and no others."""
    properties, required = parameters.get("properties"), parameters.get("required")
    if not isinstance(properties, Mapping) or not isinstance(required, list):
        return parameters
    kept = {name: schema for name, schema in properties.items() if name in required or name in keep}
    return {**parameters, "properties": kept, "additionalProperties": False}


def _arguments(tool: str, parameters: Mapping[str, object], paths: Sequence[str] | None,
               choices: Mapping[str, Sequence[str]] | None) -> dict[str, object]:
    """``parameters`` with a write's or edit's ``path`` held to ``paths`` (None: as it is), and
    an edit's ``path`` and ``old_text`` to ``choices`` when given."""
    properties = parameters.get("properties")
    if tool not in CHANGERS or not isinstance(properties, Mapping) or "path" not in properties:
        return dict(parameters)
    if tool == "edit" and choices and "old_text" in properties:
        return {"anyOf": [
            {**parameters, "properties": {**properties, "path": {"const": path},
                                          "old_text": {"type": "string", "enum": list(texts)}}}
            for path, texts in choices.items() if paths is None or path in paths
        ] or [dict(parameters)]}  # fmt: skip
    if paths is None:
        return dict(parameters)
    return {**parameters, "properties": {**properties, "path": {"type": "string", "enum": list(paths)}}}


EDIT_CHOICES_MAX = 600
"""The most ``old_text`` choices a forced edit's schema lists (the server compiles them into
its grammar for every such request); files past this are left out of the edit."""
_CHOICE_MAX_CHARS = 240
"""A longer line is no choice (a data line, not code to fix)."""
_BLOCK_MAX_CHARS = 4000
"""A longer function or class is no choice as a whole."""
_IDENTIFIER_WORD = re.compile(r"(?<![\w.])[A-Za-z_][A-Za-z0-9_]{2,}(?!\w)")


def _definitions(text: str, lines: Sequence[str]) -> list[str]:
    """A Python text's functions and classes, each whole (decorators included) as one choice:
    what an edit deletes (``new_text`` empty) or replaces with a new version — line by line it
    could only break the file. None when it does not parse."""
    import ast

    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return []
    blocks: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.end_lineno:
            start = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            block = "\n".join(lines[start - 1 : node.end_lineno])
            if node.end_lineno > start and len(block) <= _BLOCK_MAX_CHARS and text.count(block) == 1:
                blocks.append(block)
    return blocks


def _docs_and_comments(text: str) -> set[int]:
    """The numbers of a Python text's lines that are docstrings or comments only (none when it
    does not parse: then every line is code to the edit)."""
    import ast

    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return set()
    lines = {n for n, line in enumerate(text.split("\n"), 1) if line.lstrip().startswith("#")}
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and body:
            first = body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
                lines.update(range(first.lineno, (first.end_lineno or first.lineno) + 1))
    return lines


def edit_choices(workspace: Path, paths: Sequence[str], names: bool = False,
                 code_only: bool = False, task: str = "") -> dict[str, list[str]]:
    """For each of ``paths`` that is a short UTF-8 text file (at most ``BRIEF_MAX_LINES``
    lines): the ``old_text`` an edit of it may take — each line that occurs once, as it is
    (indentation included), each Python function and class whole, and with ``names`` each
    identifier in it (a rename's, with
    ``replace_all``; a forced fix given them changed ``price`` into ``discount`` everywhere).
    A 1.5B model copying old_text from memory misses it (quotes changed, whitespace shown as
    markers copied): choosing among the file's own lines it cannot. ``code_only`` (a fix for
    failing tests) leaves out a Python file's docstrings and comments: they change no behaviour,
    and a small model "fixed" red tests by rewriting the docstring (seen three times live).
    Blocking; files are opened through ``tools.fsroot`` (confined); an unreadable one is left out."""
    from minicode.errors import MinicodeError
    from minicode.tools.fsroot import open_file

    choices: dict[str, list[str]] = {}
    total = 0
    for path in paths:
        try:
            with open_file(workspace, path) as opened:
                data = opened.file.read(BRIEF_MAX_LINES * _CHOICE_MAX_CHARS + 1)
            text = data.decode("utf-8")
        except (OSError, MinicodeError, UnicodeDecodeError):
            continue
        lines = [line.rstrip("\r") for line in text.split("\n")]
        if not text.strip() or "\x00" in text or len(lines) > BRIEF_MAX_LINES + 1:
            continue
        counts: dict[str, int] = {}
        for line in lines:
            counts[line] = counts.get(line, 0) + 1
        prose = _docs_and_comments(text) if code_only and path.endswith(".py") else set()
        found = [line for n, line in enumerate(lines, 1) if counts[line] == 1 and line.strip()
                 and len(line) <= _CHOICE_MAX_CHARS and n not in prose]
        found += [block for block in _definitions(text, lines) if block not in found]
        if names:
            words = dict.fromkeys(_IDENTIFIER_WORD.findall(text))
            found += [word for word in words if word not in counts and not keyword.iskeyword(word)]
        if total + len(found) > EDIT_CHOICES_MAX:
            break
        choices[path] = found
        total += len(found)
    return _narrowed(choices, task)


_FROM_TO = re.compile(r"\bfrom\s+[`'\"]?([^\s`'\"]+?)[`'\"]?\s+to\s+[`'\"]?[^\s`'\"]+", re.IGNORECASE)


def _narrowed(choices: dict[str, list[str]], task: str) -> dict[str, list[str]]:
    """For a task that changes something "from X to Y": the lines that hold X, when some do —
    asked to change the Python version "from 3.10 to 3.12", the 1.5B model picked the line
    above it among all of the file's. Else ``choices`` as they are."""
    found = _FROM_TO.search(task)
    if found is None:
        return choices
    old = found.group(1)
    narrowed = {path: [line for line in lines if old in line and "\n" not in line] for path, lines in choices.items()}
    narrowed = {path: lines for path, lines in narrowed.items() if lines}
    return narrowed or choices
