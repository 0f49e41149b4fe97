"""The stream is validated: a chunk of the wrong shape is a protocol error naming the field,
never a silent empty answer; surrogate halves split across chunks are joined; anything still
unpaired becomes U+FFFD; a chunk nested absurdly deep is refused without recursion."""

from __future__ import annotations

import json

import pytest

from minicode.errors import APIError
from minicode.provider.accumulator import StreamAccumulator
from minicode.provider.stream_decoder import StreamDecoder
from minicode.provider.surrogates import SurrogateJoiner, replace_lone_surrogates
from minicode.provider.types import ReasoningDelta, StreamEnd, StreamEvent, TextDelta


def _decode(*datas: str) -> tuple[list[StreamEvent], StreamDecoder]:
    body = b"".join(f"data: {d}\n\n".encode() for d in datas) + b"data: [DONE]\n\n"
    decoder, out = StreamDecoder(), []  # type: ignore[var-annotated]
    decoder.feed(body, out)
    return out, decoder


@pytest.mark.parametrize(
    ("chunk", "message"),
    [
        ('{"choices": "x"}', "the chunk's 'choices' must be an array of choices, got the string 'x'"),
        ('{"choices": {"0": {}}}', "'choices' must be an array of choices, got an object"),
        ('{"choices": ["x"]}', "choices[0] must be an object, got the string 'x'"),
        ('{"choices": [{"delta": "hello"}]}', "choices[0].delta must be an object, got the string 'hello'"),
        ('{"choices": [{"delta": {"content": 42}}]}', "choices[0].delta.'content' must be a string or an array of parts, got the number 42"),
        ('{"choices": [{"delta": {"content": "a"}, "finish_reason": 7}]}', "choices[0].'finish_reason' must be a string"),
        ('{"choices": [{"index": true, "delta": {}}]}', "choices[0].'index' must be a whole number, got a boolean"),
        ('{"choices": [{"index": 0.5, "delta": {}}]}', "choices[0].'index' must be a whole number, got the number 0.5"),
        ('{"choices": [{"delta": {"tool_calls": [{"index": 1.5}]}}]}', "tool_calls[0].'index' must be a whole number, got the number 1.5"),
        ('{"choices": [{"delta": {"tool_calls": {"a": 1}}}]}', "choices[0].delta.'tool_calls' must be an array"),
        ('{"choices": [{"delta": {"tool_calls": [{"function": "f"}]}}]}', "tool_calls[0].'function' must be an object"),
        ('{"choices": [{"delta": {"tool_calls": [{"function": {"name": 1}}]}}]}', "function.'name' must be a string"),
        ('{"choices": [{"delta": {"reasoning_content": ["x"]}}]}', "'reasoning_content' must be a string"),
        ('["not", "an", "object"]', "a chunk must be a JSON object, got list"),
    ],
)
def test_a_chunk_of_the_wrong_shape_is_a_protocol_error(chunk: str, message: str) -> None:
    with pytest.raises(APIError, match="malformed stream") as info:
        _decode(chunk)
    assert message in str(info.value)


def test_nulls_and_unknown_fields_are_tolerated() -> None:
    out, decoder = _decode(
        '{"choices": [{"delta": {"role": "assistant", "content": null, "tool_calls": null}, "finish_reason": null, "logprobs": {"x": 1}}]}',
        '{"choices": [{"delta": {"content": "hi"}}], "usage": null, "system_fingerprint": 3}',
        '{"choices": null, "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}',
    )
    assert decoder.done and isinstance(out[-1], StreamEnd) and out[-1].response.message.content == "hi"


def test_a_stream_without_any_choice_is_no_answer() -> None:
    with pytest.raises(APIError, match="no chunk carried a choice"):
        _decode('{"usage": {"total_tokens": 3}}', '{"choices": []}')


def test_an_empty_answer_with_a_choice_is_still_an_answer() -> None:
    out, _ = _decode('{"choices": [{"delta": {"content": ""}, "finish_reason": "stop"}]}')
    assert isinstance(out[-1], StreamEnd) and out[-1].response.message.content == ""


def test_surrogate_halves_in_two_chunks_are_joined() -> None:
    out, _ = _decode(
        '{"choices": [{"delta": {"content": "ok \\ud83d"}}]}',
        '{"choices": [{"delta": {"content": "\\ude00!"}}]}',
    )
    texts = [e.text for e in out if isinstance(e, TextDelta)]
    assert "".join(texts) == "ok \U0001f600!"
    assert all(t.encode("utf-8") for t in texts)  # no event ever carries half a pair
    assert isinstance(out[-1], StreamEnd) and out[-1].response.message.content == "ok \U0001f600!"


def test_unpaired_halves_become_replacement_characters_everywhere() -> None:
    out, _ = _decode(
        '{"choices": [{"delta": {"content": "a\\ude00b", "reasoning_content": "r\\ud83d"}}]}',
        '{"choices": [{"delta": {"content": "c\\ud83d", "tool_calls": [{"index": 0, "id": "c1", "function": {"name": "read", "arguments": "{\\"path\\": \\"x\\ud83d"}}]}}]}',
        '{"choices": [{"delta": {"content": "d", "tool_calls": [{"index": 0, "function": {"arguments": "\\"}"}}]}, "finish_reason": "tool_calls"}]}',
    )
    end = out[-1]
    assert isinstance(end, StreamEnd)
    message = end.response.message
    assert message.content == "a\ufffdbc\ufffdd"
    assert message.reasoning == "r\ufffd"
    assert message.tool_calls[0].arguments == '{"path": "x\ufffd"}'
    assert "".join(e.text for e in out if isinstance(e, ReasoningDelta)) == "r\ufffd"
    json.dumps(message.content).encode("utf-8")


def test_a_high_half_at_the_very_end_is_replaced() -> None:
    acc = StreamAccumulator()
    events = acc.add({"choices": [{"delta": {"content": "end \ud83d"}}]})
    assert events == [TextDelta("end ")]
    assert acc.drain() == [TextDelta("\ufffd")]
    assert acc.response().message.content == "end \ufffd"


def test_joiner_and_replace_units() -> None:
    joiner = SurrogateJoiner()
    assert joiner.push("\ud83d") == "" and joiner.push("\ude00") == "\U0001f600"
    assert replace_lone_surrogates("x\udc80y\ud83d\ude00") == "x\ufffdy\U0001f600"
    assert replace_lone_surrogates("plain") == "plain"


def test_a_chunk_nested_absurdly_deep_is_refused() -> None:
    deep = '{"choices": [{"delta": {"content": "x", "extra": ' + "[" * 100_000 + "]" * 100_000 + "}}]}"
    with pytest.raises(APIError, match="nests deeper than 64 levels"):
        _decode(deep)
