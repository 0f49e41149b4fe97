"""minicode.provider: the model endpoint seam.

Re-exports the pure wire types, the ``Provider`` protocol and the factory. It must not
load httpx: the adapter (``minicode.provider.openai``) is imported only when a provider
is created.
"""

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
