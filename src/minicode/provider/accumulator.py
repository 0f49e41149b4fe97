"""The streamed-answer accumulator (SPEC 3.2), pure: parsed chunks in, stream events out.

Owns the tolerant merging of Chat Completions stream chunks: text and reasoning deltas,
tool-call fragments keyed by index (with the Mistral/vLLM/Groq/Ollama/xAI quirks), usage
wherever it appears, ``finish_reason`` that later nulls never erase, in-stream error
objects, and the final structural validation. It knows nothing of SSE framing or HTTP.
Imports only the standard library, ``minicode.errors`` and the provider's pure modules.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from minicode.errors import APIError
from minicode.provider.api_errors import api_error, error_info_from_object
from minicode.provider.chunk_shape import check_chunk
from minicode.provider.messages import (
    arguments_text,
    choice_zero,
    content_parts,
    object_field,
    parse_usage,
    reasoning_of,
    validate_tool_calls,
)
from minicode.provider.surrogates import SurrogateJoiner, replace_lone_surrogates
from minicode.provider.types import (
    ChatResponse,
    Message,
    ReasoningDelta,
    StreamEnd,
    StreamEvent,
    TextDelta,
    ToolCallDelta,
    Usage,
    UsageUpdate,
)

__all__ = ["StreamAccumulator", "answer_events"]


@dataclass(slots=True)
class _CallSlot:
    """One tool call as its deltas arrive."""

    id: str = ""
    name: str = ""
    type: str | None = None
    arguments: list[str] = field(default_factory=list)
    joiner: SurrogateJoiner = field(default_factory=SurrogateJoiner)


class StreamAccumulator:
    """Feed each parsed chunk to :meth:`add`; call :meth:`response` after ``[DONE]``."""

    def __init__(self) -> None:
        self._text: list[str] = []
        self._reasoning: list[str] = []
        self._slots: dict[int, _CallSlot] = {}
        self._last_slot: int | None = None
        self._finish: str | None = None
        self._usage: Usage | None = None
        self._saw_choice = False
        # A surrogate pair split across two chunks is joined (see ``surrogates``).
        self._text_join = SurrogateJoiner()
        self._reasoning_join = SurrogateJoiner()

    def add(self, chunk: object) -> list[StreamEvent]:
        """Merge one chunk; return the events it produced. Raises ``APIError`` for an in-stream
        error object or a malformed chunk (a field of the wrong type, see ``chunk_shape``)."""
        if not isinstance(chunk, dict):
            raise APIError(f"malformed stream: a chunk must be a JSON object, got {type(chunk).__name__}")
        self._raise_if_error(chunk)
        check_chunk(chunk)
        events: list[StreamEvent] = []
        choice = choice_zero(chunk.get("choices"))
        if choice is not None:
            self._saw_choice = True
            self._add_choice(choice, events)
        for raw in _usage_candidates(chunk, choice):
            usage = parse_usage(raw)
            if usage is not None:  # a later null never erases what we have
                self._usage = usage
                events.append(UsageUpdate(usage))
        return events

    def drain(self) -> list[StreamEvent]:
        """At the end of the stream: the text held back for a surrogate pair that never came
        (as U+FFFD), so what was streamed is what the answer holds."""
        events: list[StreamEvent] = []
        if held := self._reasoning_join.flush():
            self._reasoning.append(held)
            events.append(ReasoningDelta(held))
        if held := self._text_join.flush():
            self._text.append(held)
            events.append(TextDelta(held))
        for index, slot in sorted(self._slots.items()):
            if held := slot.joiner.flush():
                slot.arguments.append(held)
                events.append(ToolCallDelta(index=index, name=slot.name or None, arguments_fragment=held))
        return events

    def response(self) -> ChatResponse:
        """The complete, structurally validated answer. Raises ``APIError`` when no chunk
        carried a choice: the server sent no answer at all (not an empty one)."""
        if not self._saw_choice:
            raise APIError("malformed stream: no chunk carried a choice, so there is no answer")
        self.drain()
        ordered = [self._slots[i] for i in sorted(self._slots)]
        calls = validate_tool_calls([(s.id, s.name, s.type, "".join(s.arguments)) for s in ordered])
        text = "".join(self._text)
        return ChatResponse(
            message=Message(
                role="assistant",
                content=None if calls and not text else text,
                tool_calls=calls,
                reasoning="".join(self._reasoning) or None,
            ),
            finish_reason=self._finish,
            usage=self._usage,
        )

    @staticmethod
    def _raise_if_error(chunk: dict[str, Any]) -> None:
        if chunk.get("object") == "error" or chunk.get("error"):
            info = error_info_from_object(chunk)
            if info is None:
                raise APIError("the server reported an error inside the stream")
            raise api_error(info, status=None)

    def _add_choice(self, choice: dict[str, Any], events: list[StreamEvent]) -> None:
        finish = choice.get("finish_reason")
        if isinstance(finish, str) and finish:
            self._finish = finish
        delta = choice.get("delta")
        if not isinstance(delta, dict):
            return
        text, thinking = content_parts(delta.get("content"))
        reasoning = self._reasoning_join.push(reasoning_of(delta) or thinking)
        text = self._text_join.push(text)
        if reasoning:
            self._reasoning.append(reasoning)
            events.append(ReasoningDelta(reasoning))
        if text:
            self._text.append(text)
            events.append(TextDelta(text))
        calls = delta.get("tool_calls")
        if isinstance(calls, list):
            for position, raw in enumerate(calls):
                if not isinstance(raw, dict):
                    raise APIError("malformed stream: a tool-call delta is not an object")
                events.extend(self._add_call(position, raw))

    def _slot_index(self, position: int, raw: dict[str, Any]) -> int:
        index = raw.get("index")
        if isinstance(index, int) and not isinstance(index, bool):
            return index
        # No index (Mistral): a new id opens the next slot, a known id finds its slot,
        # no id continues the slot last written (or the call's position when there is none).
        call_id = raw.get("id")
        if isinstance(call_id, str) and call_id:
            for slot_index, slot in self._slots.items():
                if slot.id == call_id:
                    return slot_index
            return max(self._slots, default=-1) + 1
        if self._last_slot is not None:
            return self._last_slot
        return position

    def _add_call(self, position: int, raw: dict[str, Any]) -> list[StreamEvent]:
        index = self._slot_index(position, raw)
        slot = self._slots.setdefault(index, _CallSlot())
        self._last_slot = index
        function = object_field(raw, "function")
        slot.id = _merge(slot.id, raw.get("id"), index, "id")
        slot.name = _merge(slot.name, function.get("name"), index, "name")
        kind = raw.get("type")
        if isinstance(kind, str) and kind and slot.type is None:
            slot.type = kind
        fragment = slot.joiner.push(arguments_text(function.get("arguments")))
        if fragment:
            slot.arguments.append(fragment)
        return [ToolCallDelta(index=index, name=slot.name or None, arguments_fragment=fragment)]


def _merge(current: str, incoming: object, index: int, what: str) -> str:
    """The first non-empty value wins; an empty one never erases; a different one is an error."""
    if not isinstance(incoming, str) or not incoming:
        return current
    incoming = replace_lone_surrogates(incoming)
    if incoming == current:
        return current
    if current:
        raise APIError(
            f"malformed stream: tool call {index} changed its {what} from {current!r} to {incoming!r}"
        )
    return incoming


def _usage_candidates(chunk: dict[str, Any], choice: dict[str, Any] | None) -> list[object]:
    # Usage arrives top-level (OpenAI, vLLM), inside the choice (Moonshot) or under x_groq.
    found: list[object] = []
    if choice is not None and "usage" in choice:
        found.append(choice["usage"])
    x_groq = chunk.get("x_groq")
    if isinstance(x_groq, dict) and "usage" in x_groq:
        found.append(x_groq["usage"])
    if "usage" in chunk:
        found.append(chunk["usage"])
    return found


def answer_events(answer: ChatResponse) -> list[StreamEvent]:
    """The events of a complete answer that arrived as one JSON body (a server that ignored
    ``stream: true``): what a stream would have said, ending in ``StreamEnd(streamed=False)``."""
    message = answer.message
    events: list[StreamEvent] = []
    if message.reasoning:
        events.append(ReasoningDelta(message.reasoning))
    if message.content:
        events.append(TextDelta(message.content))
    for index, call in enumerate(message.tool_calls):
        events.append(ToolCallDelta(index=index, name=call.name, arguments_fragment=call.arguments))
    if answer.usage is not None:
        events.append(UsageUpdate(answer.usage))
    events.append(StreamEnd(answer, streamed=False))
    return events
