"""End to end: a stream of the wrong shape is an error (exit 1), never an empty "done"; an
emoji split into surrogate halves across chunks arrives whole; the answer is written whatever
stdout's encoding; on a pipe the answer is verbatim (escape sequences included)."""

from __future__ import annotations

import subprocess

from tests.support.fake_openai import Reply


def _raw(*datas: str) -> Reply:
    return Reply.raw_sse(b"".join(f"data: {d}\n\n".encode() for d in datas) + b"data: [DONE]\n\n")


def _run_bytes(e2e, *args: str, stdin: bytes = b"", env: dict[str, str] | None = None) -> tuple[int, bytes, str]:
    proc = subprocess.run(
        e2e.argv(*args), cwd=e2e.workspace, env={**e2e.environ(), **(env or {})}, input=stdin,
        capture_output=True, timeout=60, start_new_session=True,
    )
    return proc.returncode, proc.stdout, proc.stderr.decode("utf-8", "replace")


def test_choices_that_is_not_a_list_is_a_protocol_error(e2e) -> None:
    e2e.server.script(_raw('{"choices":"x"}'))
    e2e.server.default = _raw('{"choices":"x"}')  # a retry (if any) gets the same
    code, out, err = _run_bytes(e2e, "say hi")
    assert code == 1, err
    assert out == b""
    assert "malformed stream: the chunk's 'choices' must be an array of choices, got the string 'x'" in err
    assert "minicode: done" not in err


def test_a_delta_that_is_not_an_object_is_a_protocol_error(e2e) -> None:
    e2e.server.default = _raw('{"choices":[{"delta":"hello"}]}')
    code, _, err = _run_bytes(e2e, "say hi")
    assert code == 1 and "choices[0].delta must be an object" in err


def test_an_emoji_split_across_chunks_is_printed_and_the_pipe_goes_on(e2e) -> None:
    split = _raw('{"choices":[{"delta":{"content":"smile \\ud83d"}}]}',
                 '{"choices":[{"delta":{"content":"\\ude00"},"finish_reason":"stop"}]}')
    e2e.server.script(split, Reply.text("second answer"))
    code, out, err = _run_bytes(e2e, stdin=b"first task\nsecond task\n")
    assert code == 0, err
    assert out.decode("utf-8") == "smile \U0001f600\nsecond answer\n"
    sent = e2e.server.requests[1].messages
    assert any(m["role"] == "assistant" and m.get("content") == "smile \U0001f600" for m in sent)


def test_an_unpaired_half_is_a_replacement_character(e2e) -> None:
    e2e.server.script(_raw('{"choices":[{"delta":{"content":"half \\ud83d"},"finish_reason":"stop"}]}'))
    code, out, err = _run_bytes(e2e, "say it")
    assert code == 0, err
    assert out.decode("utf-8") == "half \ufffd\n"


def test_the_answer_is_written_on_an_ascii_stdout(e2e) -> None:
    e2e.server.script(Reply.text("caf\u00e9 \U0001f600"))
    code, out, err = _run_bytes(e2e, "say it", env={"PYTHONIOENCODING": "ascii"})
    assert code == 0, err
    assert out == b"caf? ?\n"
    assert "could not be written" not in err


def test_on_a_pipe_the_answer_is_verbatim(e2e) -> None:
    e2e.server.script(Reply.text("title \x1b]0;PWNED\x07 clear \x1b[2J done"))
    code, out, err = _run_bytes(e2e, "say it")
    assert code == 0, err
    assert out == b"title \x1b]0;PWNED\x07 clear \x1b[2J done\n"
