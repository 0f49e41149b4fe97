"""The bytes of a streamed answer to events: what arrived before an error is kept, [DONE] ends it."""

from __future__ import annotations

import pytest

from minicode.errors import APIError, ProtocolError
from minicode.provider.stream_decoder import StreamDecoder
from minicode.provider.types import StreamEnd, StreamEvent, TextDelta

from .helpers import chunk, sse


def test_a_whole_stream_in_one_read() -> None:
    decoder, out = StreamDecoder(), []  # type: ignore[var-annotated]
    decoder.feed(sse(chunk({"content": "a"}), chunk({"content": "b"}, finish="stop")), out)
    assert decoder.done and out[:2] == [TextDelta("a"), TextDelta("b")]
    assert isinstance(out[-1], StreamEnd) and out[-1].response.message.content == "ab"
    decoder.feed(b"data: {not even json}\n\n", out)  # after [DONE] nothing more is read
    assert len(out) == 3


def test_content_before_an_in_stream_error_is_kept() -> None:
    decoder, out = StreamDecoder(), []  # type: ignore[var-annotated]
    with pytest.raises(APIError, match="kaboom"):
        decoder.feed(sse(chunk({"content": "half"}), b'data: {"error": {"message": "kaboom"}}\n\n', done=False), out)
    assert out == [TextDelta("half")] and not decoder.done


def test_end_of_body_without_done_is_an_error() -> None:
    decoder, out = StreamDecoder(), []  # type: ignore[var-annotated]
    decoder.feed(sse(chunk({"content": "x"}), done=False), out)
    with pytest.raises(APIError, match=r"ended before \[DONE\]"):
        decoder.finish(out)
    assert out == [TextDelta("x")]


def test_done_without_a_blank_line_completes_at_end_of_body() -> None:
    decoder, out = StreamDecoder(), []  # type: ignore[var-annotated]
    decoder.feed(sse(chunk({"content": "x"}), done=False) + b"data: [DONE]", out)
    decoder.finish(out)
    assert decoder.done and isinstance(out[-1], StreamEnd)


def test_oversized_event_and_bad_json_keep_their_cause() -> None:
    out: list[StreamEvent] = []
    small = StreamDecoder()
    small._sse._max = 10  # the 4 MiB cap, scaled down
    with pytest.raises(APIError, match="larger than") as info:
        small.feed(b"data: " + b"x" * 64, out)
    assert isinstance(info.value.__cause__, ProtocolError)
    with pytest.raises(APIError, match="not JSON") as bad:
        StreamDecoder().feed(b"data: {oops\n\n", out)
    assert isinstance(bad.value.__cause__, ValueError)


def test_ping_events_and_empty_data_are_skipped() -> None:
    decoder, out = StreamDecoder(), []  # type: ignore[var-annotated]
    decoder.feed(b"event: ping\ndata: ping\n\ndata:\n\n" + sse(chunk({"content": "y"})), out)
    assert out[0] == TextDelta("y") and decoder.done


@pytest.mark.parametrize("body, said", [
    (b"<!DOCTYPE html>\n<html><head><title>Open WebUI</title></head>\n<body>hi</body></html>\n",
     "a web page (Open WebUI)"),
    (b"Welcome! Please log in to the network.\n", "text that is not an event stream (Welcome! Please log in"),
])
def test_a_body_with_no_event_at_all_says_what_it_was_and_where_to_look(body: bytes, said: str) -> None:
    # trial: a web page where the API was expected (a base_url without /api or /v1) said only
    # "the stream ended before [DONE]; the answer is incomplete"
    decoder, out = StreamDecoder(), []  # type: ignore[var-annotated]
    decoder.feed(body[:20], out)
    decoder.feed(body[20:], out)
    with pytest.raises(APIError) as raised:
        decoder.finish(out)
    assert said in str(raised.value) and "is [model].base_url the API's URL?" in str(raised.value)
    assert out == []


def test_a_stream_with_only_pings_or_an_empty_body_is_still_cut_short() -> None:
    for body in (b"", b": keep-alive\n\n", b"event: ping\ndata: \n\n"):
        decoder, out = StreamDecoder(), []  # type: ignore[var-annotated]
        decoder.feed(body, out)
        with pytest.raises(APIError, match=r"ended before \[DONE\]"):
            decoder.finish(out)
