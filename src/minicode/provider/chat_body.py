"""The JSON body and the headers of one Chat Completions request, as plain data.

The one place that decides what a request carries (model, messages, tools, the wire profile's
fields, streaming), used by the adapter (``provider/openai.py``) for every request and by the
early first request of a one-shot or pipe run (``cli/early_start.py``), which must build the very
same bytes before httpx or the agent loop is imported. Imports only ``provider.messages``,
``provider.types`` and ``provider.wire`` (standard library underneath): cheap at start-up.
"""

from __future__ import annotations

from typing import Any, Sequence

from minicode.provider.messages import merge_user_runs, to_openai, tool_spec_to_openai
from minicode.provider.types import Message, ToolSpec
from minicode.provider.wire import WireProfile, profile_fields

__all__ = ["chat_body", "chat_headers"]


def chat_body(
    model: str,
    messages: Sequence[Message],
    tools: Sequence[ToolSpec],
    profile: WireProfile,
    thinking: str | None,
    max_tokens: int,
    *,
    stream: bool,
) -> dict[str, Any]:
    """The request body: consecutive user messages merged, tools declared when offered, the
    profile's token-limit and thinking fields, and usage in the stream when streaming."""
    body: dict[str, Any] = {"model": model, "messages": [to_openai(m) for m in merge_user_runs(messages)]}
    if tools:
        body["tools"] = [tool_spec_to_openai(t) for t in tools]
    body.update(profile_fields(profile, thinking, max_tokens))
    if stream:
        body["stream"] = True
        body["stream_options"] = {"include_usage": True}
    return body


def chat_headers(api_key: str, *, stream: bool) -> dict[str, str]:
    """minicode's own headers of a request (httpx adds Host, its defaults and the length).
    The API key goes here and nowhere else."""
    headers = {"Accept": "text/event-stream" if stream else "application/json"}
    if api_key:  # a local server may need no key at all
        headers["Authorization"] = f"Bearer {api_key}"
    return headers
