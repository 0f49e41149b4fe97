"""minicode.tools: the registry and the seven tools of SPEC 9 (read, ls, glob, grep, write, edit, bash).

The names below are loaded on first use (PEP 562), so importing one light module of the
package (``minicode.tools.fsroot`` in the grep worker process) does not import every tool.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from minicode.tools.base import FileStamp, Tool, ToolContext, ToolPreview, ToolResult, WriteValidator
    from minicode.tools.child_env import child_environment
    from minicode.tools.paths import resolve_in_workspace
    from minicode.tools.registry import PreparedCall, ToolRegistry, default_registry, default_tools

__all__ = [
    "FileStamp",
    "PreparedCall",
    "Tool",
    "ToolContext",
    "ToolPreview",
    "ToolRegistry",
    "ToolResult",
    "WriteValidator",
    "child_environment",
    "default_registry",
    "default_tools",
    "resolve_in_workspace",
]

_HOME = {
    "FileStamp": "base",
    "Tool": "base",
    "ToolContext": "base",
    "ToolPreview": "base",
    "ToolResult": "base",
    "WriteValidator": "base",
    "child_environment": "child_env",
    "resolve_in_workspace": "paths",
    "PreparedCall": "registry",
    "ToolRegistry": "registry",
    "default_registry": "registry",
    "default_tools": "registry",
}


def __getattr__(name: str) -> Any:
    module = _HOME.get(name)
    if module is None:
        raise AttributeError(f"module 'minicode.tools' has no attribute {name!r}")
    return getattr(importlib.import_module(f"minicode.tools.{module}"), name)
