"""minicode.provider: the model endpoint seam.

Re-exports the pure wire types, the ``Provider`` protocol and the factory. It must not
load httpx: the adapter (``minicode.provider.openai``) is imported only when a provider
is created. The names below are loaded on first use (PEP 562): importing one submodule
(``provider.types``, on every start) must not run this package's imports of the others.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from minicode.provider.base import Provider
    from minicode.provider.factory import create_provider
    from minicode.provider.types import (
        ChatRequest,
        ChatResponse,
        Message,
        ReasoningDelta,
        RetryNotice,
        StreamEnd,
        StreamEvent,
        TextDelta,
        ToolCall,
        ToolCallDelta,
        ToolSpec,
        Usage,
        UsageUpdate,
    )

__all__ = [
    "ChatRequest",
    "ChatResponse",
    "Message",
    "Provider",
    "ReasoningDelta",
    "RetryNotice",
    "StreamEnd",
    "StreamEvent",
    "TextDelta",
    "ToolCall",
    "ToolCallDelta",
    "ToolSpec",
    "Usage",
    "UsageUpdate",
    "create_provider",
]

_HOME = {"Provider": "base", "create_provider": "factory"}


def __getattr__(name: str) -> Any:
    if name not in __all__:
        raise AttributeError(f"module 'minicode.provider' has no attribute {name!r}")
    return getattr(importlib.import_module(f"minicode.provider.{_HOME.get(name, 'types')}"), name)
