"""A prompt's content blocks as the task's text (pure)."""

from __future__ import annotations

from typing import Sequence

from acp.schema import (
    AudioContentBlock,
    EmbeddedResourceContentBlock,
    ImageContentBlock,
    ResourceContentBlock,
    TextContentBlock,
    TextResourceContents,
)

__all__ = ["Prompt", "prompt_text"]

Prompt = Sequence[TextContentBlock | ImageContentBlock | AudioContentBlock | ResourceContentBlock
                  | EmbeddedResourceContentBlock]


def prompt_text(prompt: Prompt) -> str:
    """The task's text: the text blocks, a linked file as @path, an embedded text resource
    (a selection, an open file) as a block naming its URI. Images and audio were not offered."""
    parts: list[str] = []
    for block in prompt:
        if isinstance(block, TextContentBlock):
            parts.append(block.text)
        elif isinstance(block, ResourceContentBlock):
            parts.append(f"@{block.uri.removeprefix('file://')}")
        elif isinstance(block, EmbeddedResourceContentBlock) and isinstance(block.resource, TextResourceContents):
            parts.append(f'<context uri="{block.resource.uri}">\n{block.resource.text}\n</context>')
    return "\n".join(parts)
