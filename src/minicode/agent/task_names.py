"""The functions and tests a task names, and whether the changes made them (small-model assists).

A change task can be green and still not done: asked to add ``count()``, the 1.5B model rewrote
the file as it was and the old tests passed; asked to delete ``old_parse``, it replaced its body
with ``pass``; asked for "a test for it in inventory/test_store.py", it rewrote that file with
only its old test. What the task names — a function with its parentheses after "add", the name
after "delete", a test file — is checked against what the files this task changed define and
use now (``agent.assists`` says what is missing, and ``must_call`` asks for it). Also which
tasks only add (nothing a change may drop). Pure.
"""

from __future__ import annotations

import ast
import builtins
import json
import keyword
import re
from typing import Iterable, Mapping

__all__ = ["defined_names", "list_kept", "not_added", "not_removed", "only_adds", "test_missing", "used_names"]

_ADDS_ONLY = re.compile(r"\b(?:add|append|insert|include|ignore|register|extend|also)\b", re.IGNORECASE)
_TAKES_AWAY = re.compile(r"\b(?:remove|delete|drop|replace|rewrite|rename|move|clear|clean|reset|strip|instead|"
                         r"change|convert|swap|update|upgrade|downgrade|bump|fix|set|sort|only|exclude|unignore)\b",
                         re.IGNORECASE)
_ADDS_DEFINITION = re.compile(r"\b(?:add|implement|create|write|define)\b", re.IGNORECASE)
# a name written as called, its parenthesis right after it: "is_prime(n)", "count()" — not the
# word before a remark ("False otherwise (0 and 1 are not prime)")
_CALLED_IN_TASK = re.compile(r"(?<![\w.])([A-Za-z_]\w*)\([^()]{0,60}\)")
_REMOVED_NAME = re.compile(r"\b(?:delete|remove|drop)\s+(?:the\s+)?(?:unused\s+|dead\s+|old\s+)*"
                           r"(?:(?:function|method|class)\s+)?`?([A-Za-z_]\w*)", re.IGNORECASE)
_LIST_LITERAL = re.compile(r"\[[^\[\]\n]*\]")
_TEST_FILE = re.compile(r"(?<![\w/.-])((?:[\w.-]+/)*(?:test_[\w-]+|[\w-]+_test)\.py)\b")


def only_adds(task: str) -> bool:
    """Whether ``task`` asks to add something and to take nothing away ("Add requests to the
    dependencies", "Make git ignore .env"): then a change that drops content is a mistake."""
    return _ADDS_ONLY.search(task) is not None and _TAKES_AWAY.search(task) is None


def list_kept(old: str, new: str) -> tuple[str, list[object]] | None:
    """For an edit of one line that holds one list (``dependencies = ["click>=8"]`` →
    ``['requests>=2.25']``) and drops some of its items: the new text with the old items kept
    before the new ones (``["click>=8", "requests>=2.25"]``), and the items that were dropped.
    None for anything else: more lines or lists, no literal list, items other than plain values,
    nothing dropped."""
    was, now = _LIST_LITERAL.findall(old), _LIST_LITERAL.findall(new)
    if len(was) != 1 or len(now) != 1 or "\n" in old.strip() or "\n" in new.strip():
        return None
    try:
        before, after = ast.literal_eval(was[0]), ast.literal_eval(now[0])
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return None
    if not (isinstance(before, list) and isinstance(after, list)):
        return None
    if not all(isinstance(item, (str, int, float, bool)) for item in [*before, *after]):
        return None
    gone = [item for item in before if item not in after]
    if not gone:
        return None
    merged = json.dumps([*before, *(item for item in after if item not in before)])
    return new.replace(now[0], merged, 1), gone


def not_added(task: str, written: Iterable[str], defined: set[str]) -> str | None:
    """The function a task asks to add ("Add a count() method", "a function is_prime(n)") that no
    Python file this task changed defines (``defined``), once some Python file was ``written``."""
    if not _ADDS_DEFINITION.search(task) or not any(path.endswith(".py") for path in written):
        return None
    return next((name for name in dict.fromkeys(_CALLED_IN_TASK.findall(task))
                 if name not in defined and not keyword.iskeyword(name) and not hasattr(builtins, name)), None)


def not_removed(task: str, defined: set[str]) -> str | None:
    """The function a task asks to delete ("Delete the unused function old_parse") that a Python
    file this task changed still defines."""
    return next((name for name in _REMOVED_NAME.findall(task) if name in defined), None)


def test_missing(task: str, written: Iterable[str], defined: set[str], used: Mapping[str, set[str]]) -> str | None:
    """The test file the task names that no change of this task wrote, or that does not use the
    function the task adds (the names in ``used``, per file)."""
    written = set(written)
    added = [name for name in _CALLED_IN_TASK.findall(task) if name in defined]
    return next((path for path in _TEST_FILE.findall(task) if path not in written
                 or (added and path in used and not any(name in used[path] for name in added))), None)


def used_names(text: str) -> set[str]:
    """The names a Python text reads and the attributes it uses ({} if it does not parse)."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return set()
    return {node.id if isinstance(node, ast.Name) else node.attr
            for node in ast.walk(tree) if isinstance(node, (ast.Name, ast.Attribute))}


def defined_names(text: str) -> set[str]:
    """The names of the functions and classes a Python text defines, at any depth ({} if it does not parse)."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return set()
    return {node.name for node in ast.walk(tree) if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}
