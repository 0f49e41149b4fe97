"""minicode.tools: the registry and the seven tools of SPEC 9 (read, ls, glob, grep, write, edit, bash)."""

from minicode.tools.base import FileStamp, Tool, ToolContext, ToolPreview, ToolResult, WriteValidator
from minicode.tools.bash import child_environment
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
