"""What a write or an edit is refused for while the small-model assists are on
(``ToolContext.read_before_write``): a result that no longer parses, and Python definitions it
drops. A 1.5B model writes prose into ``hello.py``, the bare value into ``package.json``,
replaces the function it was asked to add a sibling to, or unbalances a bracket — and then
reports the task done. Refused, the file stays as it was and the model is told what to send.

A file that did not parse before is being fixed: its steps are let through (the result then
says what is still wrong, ``still_broken``). A definition that reappears under another name
with the same body was renamed, not dropped. Pure: bytes in, a reason out.
"""

from __future__ import annotations

import ast
import json
import re
import tomllib
from pathlib import Path
from typing import Callable

from minicode.jsonsafe import loads

__all__ = ["STILL_BROKEN", "dropped_content", "refusal", "run_hint", "still_broken", "unreachable"]


def refusal(rel: str, old: bytes | None, new: bytes, *, deleting: bool = False, adds_only: bool = False) -> str | None:
    """Why ``new`` may not replace ``old`` (None: a new file) at ``rel``, or None. ``deleting``:
    an edit whose new text is empty — removing a definition is what it is for. ``adds_only``:
    the task only adds, so what a data or text file has must stay (``dropped_content``)."""
    if adds_only and old is not None and (gone := dropped_content(rel, old.decode("utf-8", "replace"),
                                                                    new.decode("utf-8", "replace"))):
        shown = ", ".join(gone[:6]) + (f" and {len(gone) - 6} more" if len(gone) > 6 else "")
        return (f"this would remove {shown} from {rel}, and the task only adds: keep everything the file has and "
                "add the new part beside it")
    check = _PARSERS.get(rel.rsplit(".", 1)[-1].lower()) if "." in rel else None
    if check is None:
        return None
    error = check(new)
    if error is not None and (old is None or check(old) is None):
        return _broken(rel, new, error) + _fragment_edit(rel, old, new)
    if old is None or deleting or error is not None:
        return None
    if rel.endswith(".py"):
        lost = lost_definitions(old, new)
        if lost:
            names = ", ".join(f"{name}()" for name in lost[:8])
            them = "it" if len(lost) == 1 else "them"
            return (f"this would remove {names} from {rel}: keep {them} and add the new code beside {them} (to "
                    "delete on purpose, use edit with an empty new_text)")
        return _new_dead_code(rel, old, new)
    dropped = lost_keys(rel, old, new)
    if dropped:
        names = ", ".join(dropped[:8])
        return (f"this would remove {names} from {rel}: send the whole file with everything it has, or change only "
                "the setting with edit (to delete on purpose, use edit with an empty new_text)" + _fragment_edit(rel, old, new))
    return None


def lost_keys(rel: str, old: bytes, new: bytes) -> list[str]:
    """The keys of a JSON or TOML file — at the top and one level down (``project.name``) — that
    ``old`` has and ``new`` has not: a small model writes the one table or setting it changes as
    the whole file, and the rest is gone (a TOML ``[project]`` table, seen live). Empty when
    either side does not parse or is not a table."""
    load = _LOADERS.get(rel.rsplit(".", 1)[-1].lower())
    try:
        before, after = (load(old), load(new)) if load is not None else (None, None)
    except (ValueError, UnicodeDecodeError):
        return []
    if not isinstance(before, dict) or not isinstance(after, dict):
        return []
    return [key for key in _key_paths(before) if key not in _key_paths(after)]


def dropped_content(rel: str, old: str, new: str) -> list[str]:
    """What ``new`` leaves out of ``old`` — for a task that only adds: the items of a JSON or TOML
    list (top level and one down: ``project.dependencies``) that are gone, else, for a text file
    other than Python (``.gitignore``, ``README.md``, ``requirements.txt``), the lines that are
    gone. Asked to add ``requests`` to the dependencies, the 1.5B model replaced ``click>=8``;
    asked to make git ignore two more things, it wrote ``.gitignore`` without ``*.log``. Python
    has its own check (``lost_definitions``); [] when either side does not parse."""
    kind = rel.rsplit(".", 1)[-1].lower() if "." in rel.lstrip(".") else ""
    if kind == "py":
        return []
    load = _LOADERS.get(kind)
    if load is None:
        kept = {line.strip() for line in new.splitlines()}
        return [line.strip() for line in old.splitlines() if line.strip() and line.strip() not in kept]
    try:
        before, after = load(old.encode()), load(new.encode())
    except (ValueError, UnicodeDecodeError):
        return []
    if not isinstance(before, dict) or not isinstance(after, dict):
        return []
    lists_after = _lists(after)
    return [f"{key}: {json.dumps(item)}" for key, items in _lists(before).items()
            for item in items if key in lists_after and item not in lists_after[key]]


def _lists(table: dict[str, object]) -> dict[str, list[object]]:
    found: dict[str, list[object]] = {}
    for key, value in table.items():
        if isinstance(value, list):
            found[key] = value
        elif isinstance(value, dict):
            found.update((f"{key}.{inner}", item) for inner, item in value.items() if isinstance(item, list))
    return found


def _key_paths(table: dict[str, object]) -> dict[str, None]:
    paths: dict[str, None] = {}
    for key, value in table.items():
        paths[key] = None
        if isinstance(value, dict):
            paths.update((f"{key}.{inner}", None) for inner in value)
    return paths


STILL_BROKEN = " is still not valid "
"""The words of ``still_broken``'s line, which the loop recognises a change left broken by."""


def still_broken(rel: str, data: bytes) -> str:
    """A line for the result of a write or edit that left ``rel`` unparsable (it was before
    too), or ""."""
    check = _PARSERS.get(rel.rsplit(".", 1)[-1].lower()) if "." in rel else None
    error = None if check is None else check(data)
    if error is None:
        return ""
    return f"\nbut {rel}{STILL_BROKEN}{_KIND[rel.rsplit('.', 1)[-1].lower()]}: {error}. Fix that before anything else."


def unreachable(rel: str, data: bytes) -> str:
    """A line for the result of a write or edit that left Python code after a ``return`` (or
    ``raise``, ``break``, ``continue``) in the same block, which never runs. ""."""
    found = _dead_code(rel, data)
    if found is None:
        return ""
    end, after = found
    return f"\nnote: in {rel}, line {after} comes after the {end} and never runs."


def _dead_code(rel: str, data: bytes) -> tuple[str, int] | None:
    """("return on line 2", 4): a statement of a Python file that follows a block's return,
    raise, break or continue — of the same kind when there is one (the old ``return`` under an
    inserted one), else the first that is not a string (a docstring pushed down); None when
    there is none (or it does not parse)."""
    if not rel.endswith(".py"):
        return None
    try:
        tree = ast.parse(data)
    except (SyntaxError, ValueError):
        return None
    ends = (ast.Return, ast.Raise, ast.Break, ast.Continue)
    for node in ast.walk(tree):
        for field in ("body", "orelse", "finalbody"):
            block = getattr(node, field, None)
            if not isinstance(block, list):
                continue
            for n, first in enumerate(block[:-1]):
                if isinstance(first, ends):
                    dead = block[n + 1 :]
                    alike = [stmt for stmt in dead if type(stmt) is type(first)]
                    code = [stmt for stmt in dead if not (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant))]
                    after = (alike or code or dead)[0]
                    return f"{type(first).__name__.lower()} on line {first.lineno}", after.lineno
    return None


def _new_dead_code(rel: str, old: bytes, new: bytes) -> str | None:
    """A refusal for a change that puts code after a return where there was none: a small model
    "fixes" a function by inserting a new ``return`` under its ``def``, keeping the old line
    (seen on every try of one fix) — told which line to change, it can change it."""
    found = _dead_code(rel, new)
    if found is None or _dead_code(rel, old) is not None:
        return None
    end, after = found
    try:
        line = new.decode("utf-8").split("\n")[after - 1]
    except (UnicodeDecodeError, IndexError):
        return None
    call = {"old_text": line, "new_text": "<the fixed line>"}
    return (f"this would leave line {after} of {rel} after the {end}, never running: change that line itself "
            f"instead of adding code before it — an edit with {json.dumps(call)}")


_NO_MODULE = re.compile(r"ModuleNotFoundError: No module named '([A-Za-z_][A-Za-z0-9_]*)")


def run_hint(output: str, workspace: Path) -> str:
    """For a failed command whose output says a module the workspace holds cannot be found: how
    to run it so it is found — a small model runs ``python pkg/test_x.py``, which puts ``pkg/``
    on the path, not the workspace, and then "fixes" the imports. Blocking (one stat); ""."""
    found = _NO_MODULE.search(output)
    if found is None:
        return ""
    name = found.group(1)
    if not ((workspace / name).is_dir() or (workspace / f"{name}.py").is_file()):
        return ""
    return (f"\n[{name} is in the workspace: a script run by its path does not see it. Run from the workspace "
            f"with python -m, e.g. python -m pytest -q {name} for its tests, or python -m {name}.<module>.]")


_NO_TESTS = re.compile(r"^Ran 0 tests in |^collected 0 items\b|^no tests ran in |^=+ no tests ran", re.MULTILINE)


def ran_no_test(output: str) -> str:
    """For a command that succeeded without running a test (``Ran 0 tests``, ``no tests ran``):
    that it checked nothing — a small model "verifies" a fix with ``python -m unittest pkg.test_x``
    on pytest-style tests and reports them passed. ""."""
    if _NO_TESTS.search(output) is None:
        return ""
    return ("\n[No test ran, so this checked nothing. Run the tests so they are found, e.g. python -m pytest -q "
            "with the test file or its folder.]")


def lost_definitions(old: bytes, new: bytes) -> list[str]:
    """Top-level functions and classes of ``old`` that ``new`` has neither by name nor, with
    the same body, under a new name (a rename). Empty when either side does not parse."""
    try:
        before, after = ast.parse(old), ast.parse(new)
    except (SyntaxError, ValueError):
        return []
    kinds = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
    old_defs = {node.name: node for node in before.body if isinstance(node, kinds)}
    new_defs = {node.name: node for node in after.body if isinstance(node, kinds)}
    new_bodies = {_body(node) for name, node in new_defs.items() if name not in old_defs}
    return [name for name, node in old_defs.items() if name not in new_defs and _body(node) not in new_bodies]


def _body(node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> str:
    return "\n".join(ast.dump(statement) for statement in node.body)


def _broken(rel: str, new: bytes, error: str) -> str:
    kind = _KIND[rel.rsplit(".", 1)[-1].lower()]
    reason = f"the new content is not valid {kind} ({error}); send the whole file again as valid {kind}"
    text = new.decode("utf-8", errors="replace").strip()
    if kind == "Python" and text and "\n" not in text and len(text) <= 200:  # one line of words: what it prints?
        reason += f" — a program that prints that text is {json.dumps({'content': f'print({text!r})'})}"
    return reason


_SETTING = re.compile(r'^\s*"?([A-Za-z0-9_.-]{1,64})"?\s*[:=]\s*(.+?)\s*,?\s*$')


def _fragment_edit(rel: str, old: bytes | None, new: bytes) -> str:
    """For a one-line ``"key": value`` (JSON) or ``key = value`` (TOML) sent as a whole file:
    the edit that sets it, from the old file's own line for that key — the 1.5B model sends the
    one setting it changes as the new content of ``package.json``. "" when none fits."""
    if old is None or rel.endswith(".py"):
        return ""
    text = new.decode("utf-8", errors="replace").strip()
    wanted = _SETTING.match(text) if "\n" not in text else None
    if wanted is None:
        return ""
    key, value = wanted.groups()
    for line in old.decode("utf-8", errors="replace").splitlines():
        found = _SETTING.match(line)
        if found is not None and found.group(1) == key:
            old_text = line.strip().rstrip(",").rstrip()
            new_text = old_text[: len(old_text) - len(found.group(2))] + value
            call = {"name": "edit", "arguments": {"path": rel, "old_text": old_text, "new_text": new_text}}
            return f" — to change only that setting, edit it: {json.dumps(call)}"
    return ""


def _python(data: bytes) -> str | None:
    try:
        ast.parse(data)
    except SyntaxError as e:
        return f"line {e.lineno}: {e.msg}"
    except ValueError:  # null bytes
        return "it holds null bytes"
    return None


def _json(data: bytes) -> str | None:
    try:
        loads(data.decode("utf-8"))
    except ValueError as e:  # JSONDecodeError, UnicodeDecodeError, nesting past the bound
        return str(e)
    return None


def _toml(data: bytes) -> str | None:
    try:
        tomllib.loads(data.decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as e:
        return str(e)
    return None


_PARSERS: dict[str, Callable[[bytes], str | None]] = {"py": _python, "json": _json, "toml": _toml}
_LOADERS: dict[str, Callable[[bytes], object]] = {"json": lambda data: loads(data.decode("utf-8")),
                                                  "toml": lambda data: tomllib.loads(data.decode("utf-8"))}
_KIND = {"py": "Python", "json": "JSON", "toml": "TOML"}
