"""cli.stdstreams: closed standard streams are opened on /dev/null, stderr never fails a run.
(The real executable with ``2>&-``, ``2>/dev/full``, ``<&-``: tests/e2e/test_json_robust_e2e.py.)"""

from __future__ import annotations

import io
import os
import sys

import pytest

from minicode.cli.stdstreams import QuietStream, standard_streams


def _target(fd: int) -> str:
    return os.readlink(f"/proc/self/fd/{fd}")


def test_a_full_stderr_drops_the_line_and_leads_to_dev_null_from_then_on():
    full = open("/dev/full", "w", encoding="utf-8")  # every write fails: ENOSPC
    try:
        quiet = QuietStream(full)
        assert quiet.write("minicode: session x\n") == len("minicode: session x\n")  # no OSError
        quiet.flush()
        assert quiet.broken and _target(full.fileno()) == "/dev/null"
        full.write("later, by someone else\n")
        full.flush()  # the descriptor now takes it: the interpreter's final flush cannot fail
        quiet.write("more\n")  # dropped without trying
    finally:
        full.close()


def test_a_working_stream_is_written_as_is():
    out = io.StringIO()
    quiet = QuietStream(out)
    quiet.write("a line\n")
    quiet.flush()
    assert out.getvalue() == "a line\n" and not quiet.broken and not quiet.isatty()


def test_a_closed_stream_object_is_dropped_without_touching_any_descriptor():
    closed = io.StringIO()
    closed.close()
    quiet = QuietStream(closed)
    quiet.write("x\n")  # ValueError inside: dropped; a StringIO has no descriptor to move
    assert quiet.broken and not quiet.isatty()


def test_missing_stdin_and_stderr_become_dev_null_for_the_run(monkeypatch: pytest.MonkeyPatch):
    """Python sets them to None when the process started with the descriptor closed."""
    monkeypatch.setattr(sys, "stdin", None)
    monkeypatch.setattr(sys, "stderr", None)
    with standard_streams():
        assert sys.stdin is not None and sys.stdin.read() == ""  # empty input
        assert isinstance(sys.stderr, QuietStream)
        print("nowhere", file=sys.stderr)
    assert sys.stdin is None and sys.stderr is None  # given back as found


def test_stderr_is_quiet_inside_and_itself_again_after(monkeypatch: pytest.MonkeyPatch):
    err = io.StringIO()
    monkeypatch.setattr(sys, "stderr", err)
    stdin = sys.stdin
    with standard_streams():
        print("said", file=sys.stderr)
        assert sys.stdin is stdin  # an open stdin is left alone
    assert sys.stderr is err and err.getvalue() == "said\n"
