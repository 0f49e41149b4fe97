"""Imports a small model's Python write left out, added (small-model assists).

Asked for a test of ``Store``, the 1.5B model writes ``inventory/test_store.py`` without
``from inventory.store import Store``; asked for tests of ``reverse_words``, it writes them
without importing it — and the run fails with ``NameError`` it then cannot place. A name the
written code uses but nothing in it binds, which one module of the workspace defines at its
top level (or which is a standard-library module: ``math.sqrt`` with no ``import math``), gets
its import added after the file's own; the write's result says which. Names bound anywhere in
the file count as bound (a conservative reading: no false alarm for a local defined later), and
a file with a star import is left alone. Pure.
"""

from __future__ import annotations

import ast
import builtins
import sys
from typing import Iterable, Mapping

__all__ = ["definers", "undefined_names", "with_imports"]

_MODULE_NAMES = frozenset({"__file__", "__path__", "__cached__", "__builtins__", "__annotations__", "__dict__"})
_BUILTINS = frozenset(dir(builtins)) | _MODULE_NAMES
MAX_IMPORTS = 8


def undefined_names(code: str) -> list[str]:
    """The names ``code`` reads that it never binds and that are not builtins, in order of
    first use; [] when it does not parse or star-imports (anything may come from there)."""
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError):
        return []
    bound: set[str] = set()
    used: dict[str, None] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            if isinstance(node.ctx, ast.Load):
                used.setdefault(node.id, None)
            else:
                bound.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                if alias.name == "*":
                    return []
                bound.add(alias.asname or alias.name.split(".")[0])
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            bound.update(node.names)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            bound.add(node.name)
        elif isinstance(node, (ast.MatchAs, ast.MatchStar)) and node.name:
            bound.add(node.name)
        elif isinstance(node, ast.MatchMapping) and node.rest:
            bound.add(node.rest)
    return [name for name in used if name not in bound and name not in _BUILTINS]


def definers(names: Iterable[str], modules: Mapping[str, str], importer: str) -> dict[str, str]:
    """For each name, the import line that brings it: the one module of ``modules`` (dotted
    name → source) other than ``importer`` that defines it at its top level, or a standard-library
    module of that name. A name two modules define, or none, is left out (no guess)."""
    top: dict[str, list[str]] = {}
    for module, source in modules.items():
        if module == importer:
            continue
        for name in _top_level_names(source):
            top.setdefault(name, []).append(module)
    lines: dict[str, str] = {}
    for name in names:
        found = top.get(name, [])
        if len(found) == 1:
            lines[name] = f"from {found[0]} import {name}"
        elif not found and name in sys.stdlib_module_names and not name.startswith("_"):
            lines[name] = f"import {name}"
        if len(lines) >= MAX_IMPORTS:
            break
    return lines


def _top_level_names(source: str) -> list[str]:
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return []
    names = []
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.append(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names += [target.id for target in targets if isinstance(target, ast.Name)]
    return names


def with_imports(code: str, lines: Iterable[str]) -> str:
    """``code`` with the import ``lines`` added after its docstring and its own top-level
    imports (before the first other statement)."""
    new = [line + "\n" for line in lines]
    if not new:
        return code
    tree = ast.parse(code)
    at = 0  # the line index to insert at
    for index, node in enumerate(tree.body):
        docstring = (index == 0 and isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
                     and isinstance(node.value.value, str))
        if not (docstring or isinstance(node, (ast.Import, ast.ImportFrom))):
            break
        at = node.end_lineno or node.lineno
    text = code.splitlines(keepends=True)
    if at and text[at - 1:at] and not text[at - 1].endswith("\n"):
        text[at - 1] += "\n"
    block = new if at else [*new, "\n\n"] if text else new
    return "".join(text[:at] + block + text[at:])
