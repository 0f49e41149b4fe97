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
