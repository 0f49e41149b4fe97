"""How to run the function a question asks about (small-model assists, docs/small-models.md).

Asked "What does compute() in calc/core.py return?", the 1.5B model ran ``python calc/core.py``
— which only defines ``compute`` and prints nothing — and answered a number it made up. What
it needed is a one-liner that calls the function and prints the result, which it does not
think of. For a question about what a function returns or prints, when one module of the
workspace defines that function at its top level and it takes no argument, the task message
says the command (``python -c "from calc.core import compute; print(compute())"``); the
model still decides to run it. Pure.
"""

from __future__ import annotations

import ast
import re
import shlex
from typing import Mapping, Sequence

__all__ = ["asked_functions", "call_hint", "count_hint"]

_ASKS_RESULT = re.compile(r"\b(?:returns?|returned|prints?|printed|outputs?|gives?|evaluates?|result)\b", re.IGNORECASE)
_NAMED = (re.compile(r"(?<![\w.])([A-Za-z_]\w*)\s*\(\s*\)"), re.compile(r"\bfunction\s+`?([A-Za-z_]\w*)"),
          re.compile(r"\b([A-Za-z_]\w*)`?\s+function\b"))


_NOT_NAMES = frozenset({"the", "a", "an", "this", "that", "which", "what", "each", "every"})
"""Words before "function" that name none ("the function compute")."""


def asked_functions(task: str) -> list[str]:
    """The functions a question asks the result of ("What does compute() return?"), or []."""
    if not _ASKS_RESULT.search(task):
        return []
    return list(dict.fromkeys(match.group(1) for pattern in _NAMED for match in pattern.finditer(task)
                              if match.group(1).lower() not in _NOT_NAMES))


def call_hint(task: str, modules: Mapping[str, str], python: str = "python") -> str:
    """The line for the task message naming the command that prints what the function the
    question is about returns, or "": ``modules`` is dotted name → source."""
    for name in asked_functions(task):
        found = [module for module, source in modules.items() if _takes_no_argument(source, name)]
        if len(found) == 1:
            code = f"from {found[0]} import {name}; print({name}())"
            return f"[To see what {name}() returns, run it: {python} -c {shlex.quote(code)}]"
    return ""


def _takes_no_argument(source: str, name: str) -> bool:
    """Whether ``source`` defines ``name`` at its top level as a function callable with no argument."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return False
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == name:
            args = node.args
            required = len(args.posonlyargs) + len(args.args) - len(args.defaults)
            return required == 0 and all(default is not None for default in args.kw_defaults)
    return False


_COUNT = re.compile(r"\bhow\s+many\s+(functions|classes|methods|test\s+functions|tests|lines)\b", re.IGNORECASE)
# no backslash in them: the model copying "\s" into its JSON call sent "\b", which counted 0
_COUNTERS = {
    "functions": "^ *(async +)?def ", "methods": "^ +(async +)?def ", "classes": "^ *class ",
    "tests": "^ *(async +)?def test", "test functions": "^ *(async +)?def test",
}


def count_hint(task: str, files: Sequence[str]) -> str:
    """For "how many functions (classes, tests, lines) are in lib/helpers.py?": the line for the
    task message naming the command that counts them in the one workspace file the question
    names, or "" — the 1.5B model, shown the file, answered with what one of them does."""
    found = _COUNT.search(task)
    named = [path for path in files if re.search(r"(?<![\w/.-])" + re.escape(path) + r"(?![\w-])", task)]
    if found is None or len(named) != 1:
        return ""
    what, path = " ".join(found.group(1).lower().split()), shlex.quote(named[0])
    if what == "lines":
        return f"[To count them: wc -l < {path}]"
    return f"[To count them: grep -cE {shlex.quote(_COUNTERS[what])} {path}]"
