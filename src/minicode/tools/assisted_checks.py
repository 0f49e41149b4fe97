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
import tomllib
from typing import Callable

__all__ = ["refusal", "still_broken"]


def refusal(rel: str, old: bytes | None, new: bytes, *, deleting: bool = False) -> str | None:
    """Why ``new`` may not replace ``old`` (None: a new file) at ``rel``, or None. ``deleting``:
    an edit whose new text is empty — removing a definition is what it is for."""
    check = _PARSERS.get(rel.rsplit(".", 1)[-1].lower()) if "." in rel else None
    if check is None:
        return None
    error = check(new)
    if error is not None and (old is None or check(old) is None):
        return _broken(rel, new, error)
    if rel.endswith(".py") and old is not None and not deleting and error is None:
        lost = lost_definitions(old, new)
        if lost:
            names = ", ".join(f"{name}()" for name in lost[:8])
            them = "it" if len(lost) == 1 else "them"
            return (f"this would remove {names} from {rel}: keep {them} and add the new code beside {them} (to "
                    "delete on purpose, use edit with an empty new_text)")
    return None


def still_broken(rel: str, data: bytes) -> str:
    """A line for the result of a write or edit that left ``rel`` unparsable (it was before
    too), or ""."""
    check = _PARSERS.get(rel.rsplit(".", 1)[-1].lower()) if "." in rel else None
    error = None if check is None else check(data)
    if error is None:
        return ""
    return f"\nbut {rel} is still not valid {_KIND[rel.rsplit('.', 1)[-1].lower()]}: {error}. Fix that before anything else."


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
        json.loads(data)
    except ValueError as e:  # JSONDecodeError, UnicodeDecodeError
        return str(e)
    return None


def _toml(data: bytes) -> str | None:
    try:
        tomllib.loads(data.decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as e:
        return str(e)
    return None


_PARSERS: dict[str, Callable[[bytes], str | None]] = {"py": _python, "json": _json, "toml": _toml}
_KIND = {"py": "Python", "json": "JSON", "toml": "TOML"}
