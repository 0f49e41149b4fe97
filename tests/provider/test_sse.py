"""The SSE decoder against the WHATWG framing rules, fed in every possible split."""

from __future__ import annotations

import pytest

from minicode.errors import ProtocolError
from minicode.provider.sse import MAX_EVENT_BYTES, SSEDecoder, SSEEvent


def decode(raw: bytes, *, step: int | None = None) -> list[SSEEvent]:
    decoder = SSEDecoder()
    events: list[SSEEvent] = []
    if step is None:
        events += decoder.feed(raw)
    else:
        for i in range(0, len(raw), step):
            events += decoder.feed(raw[i : i + step])
    return events + decoder.close()


def datas(events: list[SSEEvent]) -> list[str]:
    return [e.data for e in events]


@pytest.mark.parametrize("step", [None, 1, 2, 3, 7])
@pytest.mark.parametrize("eol", [b"\n", b"\r\n", b"\r"])
def test_line_ends_and_any_chunking(eol: bytes, step: int | None) -> None:
    raw = b"data: one" + eol + eol + b"data: two" + eol + eol
    assert datas(decode(raw, step=step)) == ["one", "two"]


def test_cr_at_chunk_end_and_lf_at_next_start_is_one_line_end() -> None:
    decoder = SSEDecoder()
    first = decoder.feed(b"data: a\r")
    second = decoder.feed(b"\ndata: b\r\n\r\n")
    # If the CR+LF were two line ends, "a" would be dispatched alone as its own event.
    assert first == []
    assert datas(second) == ["a\nb"]


def test_lone_cr_then_blank_cr_dispatches() -> None:
    decoder = SSEDecoder()
    assert decoder.feed(b"data: x\r") == []
    assert datas(decoder.feed(b"\r")) == ["x"]


@pytest.mark.parametrize("step", [None, 1, 2])
def test_leading_bom_is_skipped(step: int | None) -> None:
    raw = b"\xef\xbb\xbfdata: hi\n\n"
    assert datas(decode(raw, step=step)) == ["hi"]


def test_bom_only_at_start() -> None:
    # A BOM later in the stream is content, not framing: the field name no longer reads "data".
    events = decode(b"data: a\n\n\xef\xbb\xbfdata: b\n\n")
    assert datas(events) == ["a"]


def test_comments_and_heartbeats_are_ignored() -> None:
    raw = b": keep-alive\n\n:ping\ndata: x\n: mid-event comment\n\n\n\n"
    assert datas(decode(raw)) == ["x"]


def test_multi_line_data_joined_with_newline() -> None:
    assert datas(decode(b"data: a\ndata:b\ndata:  c\n\n")) == ["a\nb\n c"]


def test_event_id_retry_fields_tolerated() -> None:
    events = decode(b"event: error\nid: 7\nretry: 1500\nretry: x\ndata: boom\nfoo: bar\n\n")
    assert events == [SSEEvent(data="boom", event="error", id="7", retry=1500)]


def test_field_without_colon_and_empty_data() -> None:
    events = decode(b"data\n\n")
    assert events == [SSEEvent(data="")]


def test_event_without_data_is_not_dispatched() -> None:
    assert decode(b"event: ping\n\nid: 3\n\n") == []


def test_llama_cpp_error_field_is_surfaced() -> None:
    events = decode(b'error: {"code": 500, "message": "boom"}\n\n')
    assert events[0].error == '{"code": 500, "message": "boom"}'


def test_close_flushes_unterminated_event() -> None:
    decoder = SSEDecoder()
    assert decoder.feed(b"data: [DONE]") == []
    assert datas(decoder.close()) == ["[DONE]"]


def test_utf8_split_inside_a_character() -> None:
    raw = "data: héllo ✓\n\n".encode()
    assert datas(decode(raw, step=1)) == ["héllo ✓"]


def test_event_over_limit_raises_without_unbounded_buffer() -> None:
    decoder = SSEDecoder(max_event_bytes=1024)
    decoder.feed(b"data: " + b"x" * 500 + b"\n")
    with pytest.raises(ProtocolError, match="larger than"):
        for _ in range(10):
            decoder.feed(b"data: " + b"y" * 200 + b"\n")


def test_single_huge_line_over_default_limit_raises() -> None:
    decoder = SSEDecoder()
    piece = b"x" * (1024 * 1024)
    decoder.feed(b"data: ")
    with pytest.raises(ProtocolError, match="4 MiB"):
        for _ in range(5):
            decoder.feed(piece)
    assert len(decoder._buf) == 0  # nothing kept after the failure


def test_event_just_under_limit_passes() -> None:
    body = b"x" * (MAX_EVENT_BYTES - 100)
    events = decode(b"data: " + body + b"\n\n", step=65536)
    assert len(events[0].data) == len(body)
