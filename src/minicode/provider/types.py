"""Wire types shared by the provider, the agent loop, compaction and the session store.

Pure data: frozen dataclasses, no I/O, no imports beyond the standard library;
``ChatRequest`` leaves its ``on_retry`` hook out of its value.
"""

from __future__ import annotations

from typing import Any, Callable, Literal, Mapping

from dataclasses import dataclass, field

__all__ = [
    "ChatRequest",
    "ChatResponse",
    "Message",
    "ReasoningDelta",
    "RetryNotice",
    "Role",
    "StreamEnd",
    "StreamEvent",
    "TextDelta",
    "ToolCall",
    "ToolCallDelta",
    "ToolSpec",
    "Usage",
    "UsageUpdate",
]

Role = Literal["system", "user", "assistant", "tool"]


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One tool call requested by the model. ``arguments`` is the raw JSON text as sent.

    ``from_text``: the model wrote this call as text and minicode recovered it
    (``agent.text_calls``); shown and stored as such, sent back as an ordinary call."""

    id: str
    name: str
    arguments: str
    from_text: bool = False


@dataclass(frozen=True, slots=True)
class Message:
    """One chat message.

    ``content`` is ``None`` for an assistant message that only calls tools; an empty tool
    result stays ``""``. ``reasoning`` holds an assistant's thinking text, kept for the
    transcript and session file; it is not sent back to the server.
    """

    role: Role
    content: str | None = None
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None
    reasoning: str | None = None

    @staticmethod
    def user(text: str) -> "Message":
        return Message(role="user", content=text)

    @staticmethod
    def system(text: str) -> "Message":
        return Message(role="system", content=text)

    @staticmethod
    def tool(call_id: str, text: str) -> "Message":
        return Message(role="tool", content=text, tool_call_id=call_id)


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """A tool declaration as the model sees it: name, description, JSON-Schema parameters."""

    name: str
    description: str
    parameters: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class Usage:
    """Token usage as reported by the server. Every part is optional; never estimated locally."""

    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    total_tokens: int | None = None


@dataclass(frozen=True, slots=True)
class RetryNotice:
    """A request failed with a retryable error and will be sent again after ``wait_seconds``.
    ``attempt`` is the attempt about to be made (2 = the first retry) of ``max_attempts``."""

    attempt: int
    max_attempts: int
    wait_seconds: float
    reason: str
    """Short and secret-free, e.g. "HTTP 429 rate limited" or "cannot connect"."""


@dataclass(frozen=True, slots=True)
class ChatRequest:
    """One request: the full model context and the tools offered (empty: no tools).

    ``on_retry`` is told of each retry before its wait (so a frontend can say why nothing
    arrives); it must not raise or block. Not part of the request's value (equality, hash
    and repr leave it out)."""

    messages: tuple[Message, ...]
    tools: tuple[ToolSpec, ...] = ()
    max_tokens: int = 8192
    on_retry: Callable[[RetryNotice], None] | None = field(default=None, compare=False, repr=False)
    # The answer must be one JSON value of this schema (constrained decoding: OpenAI's
    # ``response_format`` json_schema, which llama.cpp, Ollama, vLLM and LM Studio also take);
    # None: a free answer. Sent only while the endpoint's wire profile accepts it.
    answer_schema: Mapping[str, Any] | None = field(default=None, compare=False)
    # The sampling temperature; None: the server's default (most requests send none).
    temperature: float | None = None


@dataclass(frozen=True, slots=True)
class ChatResponse:
    """A complete answer: the assistant message, why it stopped, and usage if reported."""

    message: Message
    finish_reason: str | None = None
    usage: Usage | None = None


# --- stream events: a closed union, consumers `match` on them -------------------------


@dataclass(frozen=True, slots=True)
class TextDelta:
    text: str


@dataclass(frozen=True, slots=True)
class ReasoningDelta:
    text: str


@dataclass(frozen=True, slots=True)
class ToolCallDelta:
    """Progress of a tool call being streamed; ``name`` is set once it is known."""

    index: int
    name: str | None = None
    arguments_fragment: str = ""


@dataclass(frozen=True, slots=True)
class UsageUpdate:
    usage: Usage


@dataclass(frozen=True, slots=True)
class StreamEnd:
    """The last event of a successful stream: the validated, complete response.

    ``streamed`` is False when the server answered the streaming request with one JSON body
    (it ignored ``stream: true``); the answer is just as complete."""

    response: ChatResponse
    streamed: bool = True


StreamEvent = TextDelta | ReasoningDelta | ToolCallDelta | UsageUpdate | StreamEnd
