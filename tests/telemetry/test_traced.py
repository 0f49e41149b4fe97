"""The shared model-call span: model_call_span / finish_model_call, and TracedChat on top."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest
from opentelemetry.trace import StatusCode

from minicode.errors import APIError
from minicode.provider.types import ChatRequest, ChatResponse, Message, StreamEvent, Usage
from minicode.telemetry import semconv
from minicode.telemetry.base import SPAN_COMPACTION, SPAN_MODEL_CALL, SPAN_TOOL, SPAN_TURN
from minicode.telemetry.traced import TracedChat, elapsed_ms, finish_model_call, model_call_span
from tests.telemetry.capture import TraceCapture

from .conftest import API_KEY

MESSAGES = (Message.system("sys"), Message.user("secret question"))


class _Provider:
    model = "chat-model"

    def __init__(self, outcome: ChatResponse | BaseException) -> None:
        self.outcome = outcome
        self.requests: list[ChatRequest] = []

    async def chat(self, request: ChatRequest) -> ChatResponse:
        self.requests.append(request)
        if isinstance(self.outcome, BaseException):
            raise self.outcome
        return self.outcome

    def stream(self, request: ChatRequest) -> AsyncIterator[StreamEvent]:
        raise AssertionError("not streamed here")

    async def aclose(self) -> None:
        pass


def test_span_names_at_the_seam_are_the_ones_semconv_maps() -> None:
    assert (SPAN_TURN, SPAN_MODEL_CALL, SPAN_TOOL, SPAN_COMPACTION) == (
        "minicode.turn", "minicode.model_call", "minicode.tool", "minicode.compaction")
    assert semconv.SPAN_MODEL_CALL is SPAN_MODEL_CALL
    assert semconv.start_attributes(SPAN_MODEL_CALL)["langfuse.observation.type"] == "generation"


def test_a_finished_model_call_carries_request_and_response_attributes(traced: TraceCapture) -> None:
    turn = traced.tracer.start_span(SPAN_TURN)
    span = model_call_span(traced.tracer, turn, model="m-1", messages=MESSAGES, estimated_tokens=42, purpose="main")
    response = ChatResponse(Message(role="assistant", content="the answer"), "stop", Usage(100, 7, 107))
    finish_model_call(span, response, 12.5)
    turn.end()
    call = traced.one(SPAN_MODEL_CALL)
    assert traced.parent_of(call).name == SPAN_TURN  # type: ignore[union-attr]
    attrs = dict(call.attributes or {})
    assert {k: attrs[k] for k in ("model", "request.messages", "request.estimated_tokens", "purpose")} == {
        "model": "m-1", "request.messages": 2, "request.estimated_tokens": 42, "purpose": "main"}
    assert attrs["usage.prompt_tokens"] == 100 and attrs["usage.completion_tokens"] == 7
    assert attrs["usage.total_tokens"] == 107 and attrs["latency_ms"] == 12.5 and attrs["finish_reason"] == "stop"
    assert call.status.status_code is not StatusCode.ERROR and call.end_time is not None
    assert "the answer" not in traced.all_attribute_text() and "secret question" not in traced.all_attribute_text()


def test_a_failed_model_call_records_the_scrubbed_error_and_no_usage(traced: TraceCapture) -> None:
    span = model_call_span(traced.tracer, None, model="m-1", messages=MESSAGES, purpose="final_summary")
    finish_model_call(span, None, 3.0, APIError(f"bad key {API_KEY}", status=401))
    call = traced.one(SPAN_MODEL_CALL)
    attrs = dict(call.attributes or {})
    assert call.status.status_code is StatusCode.ERROR
    assert call.status.description == "APIError: HTTP 401: bad key [redacted]"
    assert attrs["latency_ms"] == 3.0 and "request.estimated_tokens" not in attrs
    assert not any(k.startswith("usage.") or k == "finish_reason" for k in attrs)
    assert call.end_time is not None


def test_a_response_without_usage_sets_only_what_it_has(traced: TraceCapture) -> None:
    span = model_call_span(traced.tracer, None, model="m", messages=(), purpose="main")
    finish_model_call(span, ChatResponse(Message(role="assistant", content="x"), None, None), 1.0)
    attrs = dict(traced.one(SPAN_MODEL_CALL).attributes or {})
    assert attrs["request.messages"] == 0 and attrs["latency_ms"] == 1.0
    assert not any(k.startswith("usage.") or k == "finish_reason" for k in attrs)


def test_elapsed_ms_is_non_negative_and_rounded() -> None:
    value = elapsed_ms(0.0)
    assert value > 0 and value == round(value, 1)


async def test_traced_chat_uses_the_shared_span(traced: TraceCapture) -> None:
    provider = _Provider(ChatResponse(Message(role="assistant", content="sum"), "stop", Usage(10, 2, 12)))
    chat = TracedChat(provider, traced.tracer, parent=None, purpose="compaction")
    response = await chat.chat(ChatRequest(messages=MESSAGES))
    assert response.message.content == "sum" and chat.model == "chat-model"
    attrs = dict(traced.one(SPAN_MODEL_CALL).attributes or {})
    assert attrs["purpose"] == "compaction" and attrs["usage.total_tokens"] == 12 and attrs["request.messages"] == 2


async def test_traced_chat_ends_the_span_when_cancelled(traced: TraceCapture) -> None:
    chat = TracedChat(_Provider(asyncio.CancelledError()), traced.tracer, parent=None, purpose="compaction")
    with pytest.raises(asyncio.CancelledError):
        await chat.chat(ChatRequest(messages=MESSAGES))
    call = traced.one(SPAN_MODEL_CALL)
    assert call.status.status_code is StatusCode.ERROR and call.status.description == "CancelledError"
