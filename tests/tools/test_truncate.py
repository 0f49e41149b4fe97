"""Caps and head/tail truncation."""

from __future__ import annotations

from minicode.tools.truncate import HeadTailBuffer, TOOL_OUTPUT_MAX_BYTES, cap_output, shorten_line


def test_cap_output_keeps_small_text_and_marks_large_text() -> None:
    assert cap_output("hello") == "hello"
    big = "a" * 50_000 + "MIDDLE" + "z" * 50_000
    capped = cap_output(big)
    assert len(capped.encode()) <= TOOL_OUTPUT_MAX_BYTES
    assert capped.startswith("a" * 100) and capped.endswith("z" * 100)
    assert "MIDDLE" not in capped
    assert "output truncated" in capped and "bytes omitted of 100006" in capped


def test_cap_output_never_breaks_multibyte_characters() -> None:
    capped = cap_output("é" * 100_000, max_bytes=1000)
    capped.encode("utf-8")  # still valid text
    assert len(capped.encode()) <= 1000 + 10


def test_head_tail_buffer_small_stream_is_kept_whole() -> None:
    buf = HeadTailBuffer(head_size=10, tail_size=10)
    buf.feed(b"hello ")
    buf.feed(b"world")
    assert buf.render() == "hello world"
    assert buf.elided == 0


def test_head_tail_buffer_keeps_head_and_tail_with_count() -> None:
    buf = HeadTailBuffer(head_size=4, tail_size=6)
    for i in range(1000):
        buf.feed(f"{i:04d}".encode())
    assert buf.total == 4000
    assert buf.kept == 10
    assert buf.elided == 3990
    text = buf.render()
    assert text.startswith("0000") and text.endswith("980999")  # tail keeps the last 6 bytes
    assert "3990 bytes of output omitted" in text


def test_head_tail_buffer_chunk_larger_than_tail() -> None:
    buf = HeadTailBuffer(head_size=2, tail_size=3)
    buf.feed(b"abcdefghij")
    assert buf.kept == 5 and buf.elided == 5
    assert buf.render().endswith("hij") and buf.render().startswith("ab")


def test_shorten_line() -> None:
    assert shorten_line("short", 10) == "short"
    assert shorten_line("x" * 25, 10) == "x" * 10 + "… [+15 chars]"
