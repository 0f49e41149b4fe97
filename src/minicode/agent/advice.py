"""Advice made into the change it describes (small-model assists, ``agent/assists.py``).

Asked to fix ``calc.py``, a 1.5B model answers "Here's the corrected calc.py:" and a Python
block with the fixed function — and, told that nothing changed, repeats that answer word for
word (measured on the live bench). When the assists are on, the task asks for a change, none
was made, and the answer's Python blocks define functions or classes of a Python file the
model was shown, those definitions are the change: each replaces its namesake in the file
(a new one is added at the end). The result is a ``write`` of the whole new file, run like
any call — approved with its diff shown, recorded as recovered from text — so the model sees
the result and goes on (runs the tests). Anything else (no such block, code that does not
parse, a file that does not, a block that defines nothing of it and the task adds nothing)
is left as the answer it was. Pure.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from typing import Sequence

__all__ = ["AdviceEdit", "advice_edit", "command_block", "definitions", "python_blocks"]

_FENCE = re.compile(r"```[ \t]*([\w+.-]*)[ \t]*\n(.*?)```", re.DOTALL)  # every block, in order
_PYTHON_TAGS = frozenset({"", "python", "py", "python3"})
_ADDS = re.compile(r"\b(?:add|create|implement|write|define|insert|append)\b", re.IGNORECASE)
MAX_BLOCK_CHARS = 20_000


@dataclass(frozen=True, slots=True)
class AdviceEdit:
    """The file's new content, and the definitions the answer replaced or added."""

    path: str
    content: str
    replaced: tuple[str, ...]
    added: tuple[str, ...]


_SHELL_TAGS = frozenset({"bash", "sh", "shell", "console"})
_MAX_COMMAND_PROSE = 300


def command_block(answer: str) -> str | None:
    """The command of an answer that is one shell block (``bash``/``sh``) and little else —
    what a small model writes when told to run something: it means to run it. A prompt sign
    (``$ ``) is dropped; an empty block, several blocks or a long explanation around it is not a
    command to run."""
    blocks = list(_FENCE.finditer(answer))
    if len(blocks) != 1 or blocks[0].group(1).lower() not in _SHELL_TAGS:
        return None
    prose = answer[: blocks[0].start()] + answer[blocks[0].end() :]
    lines = [line.strip() for line in blocks[0].group(2).splitlines() if line.strip()]
    lines = [line[2:] if line.startswith("$ ") else line for line in lines]
    if len(prose.strip()) > _MAX_COMMAND_PROSE or not lines or lines in (["bash"], ["sh"]):
        return None
    return "\n".join(lines)


def python_blocks(answer: str) -> list[str]:
    """The fenced blocks of ``answer`` that parse as Python (``python``/``py``-tagged or untagged)."""
    blocks = []
    for match in _FENCE.finditer(answer):
        code = match.group(2)
        if match.group(1).lower() not in _PYTHON_TAGS or not code.strip() or len(code) > MAX_BLOCK_CHARS:
            continue
        try:
            ast.parse(code)
        except (SyntaxError, ValueError):
            continue
        blocks.append(code)
    return blocks


def advice_edit(task: str, answer: str, path: str, current: str) -> AdviceEdit | None:
    """The change ``answer`` describes for the Python file ``path`` (now ``current``), or None."""
    if not path.endswith(".py"):
        return None
    try:
        module = ast.parse(current)
    except (SyntaxError, ValueError):
        return None
    existing = {node.name: node for node in module.body if isinstance(node, _DEFINITIONS)}
    lines = current.splitlines(keepends=True)
    replacements: dict[str, str] = {}
    additions: list[tuple[str, str]] = []
    for code in python_blocks(answer):
        for node in ast.parse(code).body:
            if not isinstance(node, _DEFINITIONS):
                continue
            source = _source(code, node)
            if node.name in existing:
                replacements[node.name] = source
            elif _ADDS.search(task) and node.name not in dict(additions):
                additions.append((node.name, source))
    replacements = {name: src for name, src in replacements.items() if _differs(lines, existing[name], src)}
    if not replacements and not additions:
        return None
    for name in sorted(replacements, key=lambda n: existing[n].lineno, reverse=True):
        node = existing[name]
        start = _first_line(node) - 1
        end = node.end_lineno or node.lineno
        lines[start:end] = [replacements[name]]
    text = "".join(lines)
    for _, source in additions:
        text = text.rstrip("\n") + "\n\n\n" + source if text.strip() else source
    return AdviceEdit(path, text, tuple(replacements), tuple(name for name, _ in additions))


_DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def definitions(code: str) -> list[tuple[str, str]] | None:
    """The top-level functions and classes of Python ``code``: (name, source with decorators),
    in order; None when it does not parse."""
    try:
        module = ast.parse(code)
    except (SyntaxError, ValueError):
        return None
    return [(node.name, _source(code, node)) for node in module.body if isinstance(node, _DEFINITIONS)]


def _first_line(node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> int:
    """Where a definition starts, its decorators included."""
    return min([node.lineno, *(d.lineno for d in node.decorator_list)])


def _source(code: str, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> str:
    lines = code.splitlines(keepends=True)[_first_line(node) - 1 : node.end_lineno or node.lineno]
    text = "".join(lines)
    return text if text.endswith("\n") else text + "\n"


def _differs(lines: Sequence[str], node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef, source: str) -> bool:
    old = "".join(lines[_first_line(node) - 1 : node.end_lineno or node.lineno])
    return _code_only(old) != _code_only(source)


def _code_only(text: str) -> str:
    """The text without comments and blank lines (a "# fixed" remark alone changes nothing)."""
    kept = [re.sub(r"\s+#.*$", "", line).rstrip() for line in text.splitlines()]
    return "\n".join(line for line in kept if line.strip() and not line.strip().startswith("#"))
