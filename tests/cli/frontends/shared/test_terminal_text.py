"""cli.frontends.shared.terminal_text.ShownStream: neutralised on a terminal, verbatim elsewhere, never failing on
encoding; best effort (stderr) drops a stream that broke instead of failing the writer."""

from __future__ import annotations

import io
import os

import pytest

from minicode.cli.frontends.shared.terminal_text import ShownStream


def test_a_terminal_sees_escape_sequences_as_visible_characters() -> None:
    out = io.StringIO()
    ShownStream(out, terminal=True).write("\x1b]0;PWNED\x07title")
    assert out.getvalue() == "␛]0;PWNED␇title"


def test_a_pipe_gets_the_text_verbatim_and_unencodable_characters_replaced() -> None:
    raw = io.BytesIO()
    ascii_out = io.TextIOWrapper(raw, encoding="ascii")
    shown = ShownStream(ascii_out, terminal=False)
    shown.write("\x1b[2J café")
    shown.flush()
    assert raw.getvalue() == b"\x1b[2J caf?"


class _Broken(io.StringIO):
    def write(self, text: str) -> int:
        raise OSError(5, "Input/output error")


def test_a_broken_stream_fails_the_writer_by_default() -> None:
    with pytest.raises(OSError):
        ShownStream(_Broken(), terminal=True).write("answer")


def test_best_effort_drops_a_broken_stream_and_silences_its_descriptor() -> None:
    r, w = os.pipe()
    os.close(r)  # the reader is gone: writes fail with EPIPE
    stream = open(w, "w", buffering=1, closefd=True)  # noqa: SIM115 - closed below
    try:
        shown = ShownStream(stream, terminal=False, best_effort=True)
        assert shown.write("minicode: interrupted\n") == len("minicode: interrupted\n")
        assert shown.lost
        shown.write("later lines are dropped\n")
        shown.flush()
        assert os.readlink(f"/proc/self/fd/{w}") == os.devnull  # the final flush cannot fail
    finally:
        stream.close()


def test_best_effort_without_a_stream_writes_nothing() -> None:
    shown = ShownStream(None, terminal=False, best_effort=True)
    assert shown.write("started with 2>&-\n") == len("started with 2>&-\n")
    shown.flush()
    assert shown.lost
