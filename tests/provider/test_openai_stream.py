"""Streaming against the mock router: SPEC 3.2 rules and the quirks of real servers."""

from __future__ import annotations

import gzip
import json
from typing import Iterator

import httpx2
import pytest

from minicode.errors import APIError, ProtocolError
from minicode.provider import content_coding
from minicode.provider.types import (
    ChatRequest,
    Message,
    ReasoningDelta,
    StreamEnd,
    TextDelta,
    ToolCall,
    ToolCallDelta,
    ToolSpec,
    Usage,
    UsageUpdate,
)

from .helpers import API_KEY, REQUEST, URL, chunk, collect, make_provider, sent_json, sse, sse_response
from .mock_router import Router


def end(events: list) -> StreamEnd:
    assert isinstance(events[-1], StreamEnd)
    return events[-1]


async def test_text_stream_request_shape_and_events(router: Router) -> None:
    body = sse(
        chunk({"role": "assistant", "content": ""}),
        chunk({"content": "Hel"}),
        chunk({"content": "lo"}),
        chunk({}, finish="stop"),
        {"id": "c", "choices": [], "usage": {"prompt_tokens": 5, "completion_tokens": 2, "total_tokens": 7}},
    )
    route = router.post(URL).mock(return_value=sse_response(body))
    request = ChatRequest(messages=REQUEST.messages, tools=(ToolSpec("ls", "List", {"type": "object"}),))
    events = await collect(make_provider(), request)
    assert events[:2] == [TextDelta("Hel"), TextDelta("lo")]
    assert events[2] == UsageUpdate(Usage(5, 2, 7))
    response = end(events).response
    assert response.message == Message(role="assistant", content="Hello")
    assert (response.finish_reason, response.usage) == ("stop", Usage(5, 2, 7))
    sent = route.calls[0].request
    assert sent.headers["authorization"] == f"Bearer {API_KEY}"
    assert sent.headers["accept"] == "text/event-stream"
    payload = json.loads(sent.content)
    assert payload["stream"] is True and payload["stream_options"] == {"include_usage": True}
    assert payload["max_tokens"] == 8192 and payload["model"] == "test-model"
    assert payload["tools"][0]["function"]["name"] == "ls"
    assert "thinking" not in payload and "reasoning_effort" not in payload


async def test_reasoning_streams_separately_and_never_twice(router: Router) -> None:
    body = sse(
        chunk({"reasoning_content": "think "}),
        chunk({"reasoning": "more", "reasoning_details": [{"type": "reasoning.text", "text": "more"}]}),
        chunk({"content": [{"type": "thinking", "thinking": [{"type": "text", "text": "!"}]}, {"type": "text", "text": "ok"}]}),
        chunk({}, finish="stop"),
    )
    router.post(URL).mock(return_value=sse_response(body))
    events = await collect(make_provider())
    assert events[:4] == [ReasoningDelta("think "), ReasoningDelta("more"), ReasoningDelta("!"), TextDelta("ok")]
    message = end(events).response.message
    assert (message.content, message.reasoning) == ("ok", "think more!")


async def test_tool_arguments_across_many_chunks_interleaved(router: Router) -> None:
    body = sse(
        chunk({"tool_calls": [{"index": 0, "id": "a", "type": "function", "function": {"name": "read", "arguments": ""}}]}),
        chunk({"tool_calls": [{"index": 1, "id": "b", "type": "function", "function": {"name": "ls", "arguments": '{"pa'}}]}),
        chunk({"tool_calls": [{"index": 0, "function": {"arguments": '{"path"'}}]}),
        chunk({"tool_calls": [{"index": 1, "function": {"arguments": 'th": "."'}}]}),
        chunk({"tool_calls": [{"index": 0, "function": {"arguments": ': "x.py"}'}}]}),
        chunk({"tool_calls": [{"index": 1, "function": {"arguments": "}"}}]}),
        chunk({}, finish="tool_calls"),
    )
    router.post(URL).mock(return_value=sse_response(body))
    events = await collect(make_provider())
    deltas = [e for e in events if isinstance(e, ToolCallDelta)]
    assert deltas[0] == ToolCallDelta(0, "read", "")
    assert deltas[2] == ToolCallDelta(0, "read", '{"path"')
    response = end(events).response
    assert response.message.content is None
    assert response.message.tool_calls == (ToolCall("a", "read", '{"path": "x.py"}'), ToolCall("b", "ls", '{"path": "."}'))


async def test_mistral_calls_without_index_or_type(router: Router) -> None:
    body = sse(
        chunk({"tool_calls": [
            {"id": "m1", "function": {"name": "read", "arguments": '{"path": "a"}'}},
            {"id": "m2", "function": {"name": "read", "arguments": '{"path": "b"}'}},
        ]}),
        chunk({"tool_calls": [{"id": "m3", "function": {"name": "ls", "arguments": "{}"}}]}),
        chunk({}, finish="tool_calls"),
    )
    router.post(URL).mock(return_value=sse_response(body))
    calls = end(await collect(make_provider())).response.message.tool_calls
    assert [(c.id, c.arguments) for c in calls] == [("m1", '{"path": "a"}'), ("m2", '{"path": "b"}'), ("m3", "{}")]


async def test_vllm_first_piece_without_arguments_and_repeated_empty_id_name(router: Router) -> None:
    body = sse(
        chunk({"tool_calls": [{"index": 0, "id": "v1", "type": "function", "function": {"name": "bash"}}]}),
        chunk({"tool_calls": [{"index": 0, "id": "", "type": "function", "function": {"name": "", "arguments": '{"cmd":'}}]}),
        chunk({"tool_calls": [{"index": 0, "id": "", "function": {"name": "", "arguments": ' "ls"}'}}]}),
        chunk({}, finish="tool_calls"),
    )
    router.post(URL).mock(return_value=sse_response(body))
    calls = end(await collect(make_provider())).response.message.tool_calls
    assert calls == (ToolCall("v1", "bash", '{"cmd": "ls"}'),)


async def test_whole_call_in_one_chunk_with_groq_usage(router: Router) -> None:
    body = sse(
        chunk({"tool_calls": [{"index": 0, "id": "g1", "type": "function", "function": {"name": "ls", "arguments": ""}}]},
              finish="tool_calls"),
        {"id": "c", "choices": [{"index": 0, "delta": {}, "finish_reason": None}],
         "x_groq": {"usage": {"prompt_tokens": 9, "completion_tokens": 1, "total_tokens": 10}}},
    )
    router.post(URL).mock(return_value=sse_response(body))
    response = end(await collect(make_provider())).response
    assert response.message.tool_calls == (ToolCall("g1", "ls", "{}"),)  # empty arguments normalised
    assert response.finish_reason == "tool_calls"  # the later null did not erase it
    assert response.usage == Usage(9, 1, 10)


@pytest.mark.parametrize(
    ("second", "match"),
    [
        ({"index": 0, "id": "other", "function": {"arguments": "{}"}}, "changed its id"),
        ({"index": 0, "function": {"name": "write", "arguments": "{}"}}, "changed its name"),
    ],
)
async def test_conflicting_id_or_name_is_an_error(router: Router, second: dict, match: str) -> None:
    body = sse(chunk({"tool_calls": [{"index": 0, "id": "a", "function": {"name": "read"}}]}), chunk({"tool_calls": [second]}))
    router.post(URL).mock(return_value=sse_response(body))
    with pytest.raises(APIError, match=match):
        await collect(make_provider())


@pytest.mark.parametrize(
    ("call", "match"),
    [
        ({"index": 0, "type": "function", "function": {"arguments": "{}"}}, "no id"),
        ({"index": 0, "id": "a", "type": "custom", "function": {"name": "x"}}, "unsupported type"),
    ],
)
async def test_tool_calls_validated_after_stream(router: Router, call: dict, match: str) -> None:
    router.post(URL).mock(return_value=sse_response(sse(chunk({"tool_calls": [call]}))))
    with pytest.raises(APIError, match=match):
        await collect(make_provider())


async def test_bad_json_arguments_are_left_to_the_agent_loop(router: Router) -> None:
    body = sse(chunk({"tool_calls": [{"index": 0, "id": "a", "function": {"name": "read", "arguments": '{"path": '}}]}))
    router.post(URL).mock(return_value=sse_response(body))
    assert end(await collect(make_provider())).response.message.tool_calls[0].arguments == '{"path": '


async def test_usage_rules_last_wins_null_never_erases_total_filled(router: Router) -> None:
    body = sse(
        chunk({"content": "x"}, usage={"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}),
        chunk({}, finish="length", usage={"prompt_tokens": 4, "completion_tokens": 3, "total_tokens": 0}),
        chunk({}, finish=None, usage=None),
    )
    router.post(URL).mock(return_value=sse_response(body))
    events = await collect(make_provider())
    assert [e for e in events if isinstance(e, UsageUpdate)] == [UsageUpdate(Usage(1, 1, 2)), UsageUpdate(Usage(4, 3, 7))]
    response = end(events).response
    assert (response.usage, response.finish_reason) == (Usage(4, 3, 7), "length")


async def test_no_usage_no_finish_but_done_is_complete(router: Router) -> None:
    router.post(URL).mock(return_value=sse_response(sse(chunk({"content": "hi"}))))
    response = end(await collect(make_provider())).response
    assert (response.message.content, response.usage, response.finish_reason) == ("hi", None, None)


async def test_only_choice_index_zero_is_used(router: Router) -> None:
    body = sse(chunk({"content": "zero"}), chunk({"content": "one"}, index=1))
    router.post(URL).mock(return_value=sse_response(body))
    assert end(await collect(make_provider())).response.message.content == "zero"


async def test_missing_done_is_an_error_not_an_answer(router: Router) -> None:
    body = sse(chunk({"content": "partial"}), chunk({}, finish="stop"), done=False)
    router.post(URL).mock(return_value=sse_response(body))
    events: list = []
    with pytest.raises(APIError, match=r"ended before \[DONE\]"):
        async for event in make_provider().stream(REQUEST):
            events.append(event)
    assert events == [TextDelta("partial")]


async def test_done_without_trailing_blank_line_still_completes(router: Router) -> None:
    body = sse(chunk({"content": "a"}), done=False) + b"data: [DONE]"
    router.post(URL).mock(return_value=sse_response(body))
    assert end(await collect(make_provider())).response.message.content == "a"


async def test_malformed_json_chunk(router: Router) -> None:
    router.post(URL).mock(return_value=sse_response(sse(chunk({"content": "a"}), '{"choices": [')))
    with pytest.raises(APIError, match="not JSON") as info:
        await collect(make_provider())
    assert isinstance(info.value.__cause__, ValueError)


async def test_event_over_4_mib_is_refused(router: Router) -> None:
    def huge() -> Iterator[bytes]:
        yield b'data: {"choices": [{"index": 0, "delta": {"content": "'
        for _ in range(5):
            yield b"x" * (1024 * 1024)
        yield b'"}}]}\n\n'

    router.post(URL).mock(return_value=sse_response(huge()))
    with pytest.raises(APIError, match="larger than 4 MiB") as info:
        await collect(make_provider())
    assert isinstance(info.value.__cause__, ProtocolError)


async def test_sse_chunks_split_at_awkward_places(router: Router) -> None:
    raw = b"\xef\xbb\xbf: hello\r\n\r\n" + sse(chunk({"content": "h\u00e9"}), chunk({}, finish="stop")).replace(b"\n", b"\r\n")

    def trickle() -> Iterator[bytes]:
        for i in range(len(raw)):
            yield raw[i : i + 1]

    router.post(URL).mock(return_value=sse_response(trickle()))
    assert end(await collect(make_provider())).response.message.content == "h\u00e9"


@pytest.mark.parametrize(
    ("raw", "match"),
    [
        (b'event: error\ndata: {"error": {"message": "overloaded", "type": "server_error"}}\n\n', "overloaded"),
        (b'data: {"error": {"message": "kaboom", "code": 500}}\n\n', "kaboom"),
        (b'data: {"object": "error", "message": "vllm broke", "type": "InternalServerError", "code": 500}\n\n', "vllm broke"),
        (b'error: {"code": 500, "message": "llama slot failed", "type": "server_error"}\n\n', "llama slot failed"),
        (b"event: error\ndata: plain text failure\n\n", "plain text failure"),
    ],
)
async def test_in_stream_errors(router: Router, raw: bytes, match: str) -> None:
    router.post(URL).mock(return_value=sse_response(sse(chunk({"content": "a"}), raw)))
    with pytest.raises(APIError, match=match):
        await collect(make_provider())


async def test_in_stream_context_overflow_is_recognised(router: Router) -> None:
    raw = b'data: {"error": {"message": "the request exceeds the available context size, try increasing it", "type": "exceed_context_size_error", "code": 400}}\n\n'
    router.post(URL).mock(return_value=sse_response(sse(raw)))
    with pytest.raises(APIError) as info:
        await collect(make_provider())
    assert info.value.context_overflow


async def test_json_answer_to_a_stream_request(router: Router) -> None:
    ok = {"choices": [{"index": 0, "message": {"content": "whole"}, "finish_reason": "stop"}]}
    router.post(URL).mock(side_effect=[httpx2.Response(200, json=ok), httpx2.Response(200, json={"error": {"message": "nope"}})])
    events = await collect(make_provider())
    assert events[0] == TextDelta("whole") and end(events).response.message.content == "whole"
    with pytest.raises(APIError, match="nope"):
        await collect(make_provider())


async def test_invalid_history_is_never_sent(router: Router) -> None:
    route = router.post(URL).mock(return_value=sse_response(sse(chunk({"content": "a"}))))
    bad = ChatRequest(messages=(Message.user("u"), Message.tool("ghost", "x")))
    with pytest.raises(ProtocolError, match="message 1"):
        await collect(make_provider(), bad)
    with pytest.raises(ProtocolError, match="message 1"):
        await make_provider().chat(bad)
    assert route.call_count == 0


async def test_chat_non_streaming(router: Router) -> None:
    ok = {
        "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {"content": None, "reasoning": "r",
                     "tool_calls": [{"id": "t", "type": "function", "function": {"name": "ls", "arguments": "{}"}}]}}],
        "usage": {"prompt_tokens": 2, "completion_tokens": 3},
    }
    route = router.post(URL).mock(return_value=httpx2.Response(200, json=ok))
    response = await make_provider().chat(REQUEST)
    assert response.message.tool_calls == (ToolCall("t", "ls", "{}"),)
    assert (response.message.reasoning, response.usage) == ("r", Usage(2, 3, 5))
    payload = sent_json(route)
    assert "stream" not in payload and "stream_options" not in payload and payload["max_tokens"] == 8192


async def test_chat_error_inside_200_body_and_non_json(router: Router) -> None:
    router.post(URL).mock(side_effect=[httpx2.Response(200, json={"error": {"message": "quota gone"}}), httpx2.Response(200, text="<html>")])
    with pytest.raises(APIError, match="quota gone"):
        await make_provider().chat(REQUEST)
    with pytest.raises(APIError, match="not JSON"):
        await make_provider().chat(REQUEST)


async def test_a_compressed_body_is_undone_by_minicode_s_bounded_decoding(
        router: Router, monkeypatch: pytest.MonkeyPatch) -> None:
    """The router hands a body over unread, as a transport does: its gzip is undone by
    ``content_coding`` (in bounded pieces), never by httpx2's own decoders."""
    used: list[str] = []
    decoding = content_coding.decoding
    monkeypatch.setattr(content_coding, "decoding", lambda coding: used.append(coding) or decoding(coding))
    body = gzip.compress(sse(chunk({"content": "zipped"}), chunk(finish="stop")))
    router.post(URL).mock(return_value=httpx2.Response(
        200, headers={"content-type": "text/event-stream", "content-encoding": "gzip"}, content=body))
    assert end(await collect(make_provider())).response.message.content == "zipped"
    assert used == ["gzip"]


async def test_a_broken_compressed_body_is_a_decoding_error(router: Router) -> None:
    """The error path of the same: the body is not what its coding says."""
    router.post(URL).mock(return_value=httpx2.Response(
        200, headers={"content-type": "text/event-stream", "content-encoding": "gzip"},
        stream=httpx2.ByteStream(b"not gzip at all")))  # as it came: content= would inflate it here
    with pytest.raises(APIError) as info:
        await collect(make_provider())
    assert "incorrect header check" in str(info.value)  # zlib's words, as httpx2 reports them
    assert info.value.__cause__.name == "DecodingError"  # type: ignore[union-attr]
