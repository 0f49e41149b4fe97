"""A tool call's result (the SDK's ``CallToolResult``) as the text the model reads: text
blocks as they are, everything else described in one line (``[image/png, 34 KB]``), the
structured result as JSON when there is no text. Pure; untrusted input (any server)."""

from __future__ import annotations

import json
from typing import Any

__all__ = ["describe_size", "result_text"]


def result_text(content: list[Any], structured: Any = None) -> str:
    """The blocks joined by newlines; "(no output)" when there is nothing at all."""
    parts = [_block(block) for block in content]
    if not any(part.strip() for part in parts) and structured is not None:
        parts.append(json.dumps(structured, ensure_ascii=False, default=str))
    text = "\n".join(part for part in parts if part)
    return text or "(no output)"


def _block(block: Any) -> str:
    kind = getattr(block, "type", None)
    if kind == "text":
        return str(getattr(block, "text", ""))
    if kind in ("image", "audio"):
        return f"[{_mime(block, kind)}, {describe_size(_decoded_size(getattr(block, 'data', '')))}]"
    if kind == "resource_link":
        return f"[resource link {getattr(block, 'uri', '?')}]"
    if kind == "resource":
        resource = getattr(block, "resource", None)
        uri = getattr(resource, "uri", "?")
        text = getattr(resource, "text", None)
        if isinstance(text, str):
            return f"[resource {uri}]\n{text}"
        blob = getattr(resource, "blob", "")
        return f"[resource {uri}: {_mime(resource, 'binary')}, {describe_size(_decoded_size(blob))}]"
    return f"[{kind or 'unknown'} content]"


def _mime(block: Any, fallback: str) -> str:
    mime = getattr(block, "mime_type", None)
    return mime if isinstance(mime, str) and mime else fallback


def _decoded_size(data: Any) -> int:
    """Bytes a base64 text stands for (without decoding it: it may be megabytes)."""
    if not isinstance(data, str):
        return 0
    stripped = data.rstrip("=")
    return len(stripped) * 3 // 4


def describe_size(size: int) -> str:
    if size < 1024:
        return f"{size} B"
    if size < 1024 * 1024:
        return f"{round(size / 1024)} KB"
    return f"{size / (1024 * 1024):.1f} MB"
