"""End-to-end findings of the round-5 trial (findings-r5-trial.md), with the real executable."""

from __future__ import annotations

from tests.e2e.conftest import Env
from tests.support.fake_openai import Reply


def test_undo_after_a_task_that_changed_no_file_names_an_earlier_task_not_the_last(e2e: Env) -> None:
    # R11: "/undo" right after a question-only task said "undo the last task (“write a”)"
    (e2e.workspace / "a.txt").write_text("one\n")
    e2e.server.script(
        Reply.tool("write", path="a.txt", content="two\n"), Reply.text("wrote"),
        Reply.text("it says two"),
    )
    r = e2e.run("--yes", stdin="write a\nwhat does a.txt say?\n/undo\n")
    assert r.code == 0, r.stderr
    assert "undo the last task" not in r.stderr
    assert "undo an earlier task (“write a”: the newest one with file changes left to undo)" in r.stderr
    assert (e2e.workspace / "a.txt").read_text() == "one\n"


def test_undo_right_after_the_task_that_changed_files_still_says_the_last_task(e2e: Env) -> None:
    (e2e.workspace / "a.txt").write_text("one\n")
    e2e.server.script(Reply.text("hello"), Reply.tool("write", path="a.txt", content="two\n"),
                      Reply.text("wrote"))
    r = e2e.run("--yes", stdin="say hello\nwrite a\n/undo\n")
    assert r.code == 0, r.stderr
    assert "undo the last task (“write a”): 1 of 1 file(s) can be put back" in r.stderr
    assert "an earlier task" not in r.stderr


def test_a_web_page_where_the_api_was_expected_is_named_with_what_to_check(e2e: Env) -> None:
    # a 200 web page (a UI's front page at a base_url without /v1) said only "the stream
    # ended before [DONE]; the answer is incomplete"
    e2e.server.script(Reply.error(200, "<html><head><title>Welcome to nginx!</title></head><body></body></html>"))
    r = e2e.run("hello")
    assert r.code == 1
    assert "the server answered with a web page (Welcome to nginx!), not the model's streamed answer; " \
           "is [model].base_url the API's URL?" in r.stderr
    assert "before [DONE]" not in r.stderr


def test_a_stream_cut_short_is_still_told_as_cut_short(e2e: Env) -> None:
    e2e.server.script(Reply.raw_sse(b'data: {"choices":[{"index":0,"delta":{"content":"hal"}}]}\n\n'))
    r = e2e.run("hello")
    assert r.code == 1 and "the stream ended before [DONE]" in r.stderr and "web page" not in r.stderr


def test_a_one_shot_task_that_is_a_session_command_is_refused_not_sent_to_the_model(e2e: Env) -> None:
    # `minicode --yes /undo` sent "/undo" to the model as a task, which may act on it as it
    # sees fit (a `git checkout .`, approved by --yes)
    for words in (["/undo"], ["/rewind"], ["/undoo"], ["/permissions", "trust"], ["/help"]):
        r = e2e.run("--yes", *words)
        assert r.code == 2, (words, r.stderr)
        assert "is a session command" in r.stderr or "looks like the session command" in r.stderr
        assert "minicode -- " in r.stderr  # how to send it to the model anyway
    assert e2e.server.requests == []
    assert not (e2e.workspace / ".minicode" / "sessions").exists() or \
        not list((e2e.workspace / ".minicode" / "sessions").glob("*.jsonl"))


def test_after_double_dash_or_as_a_path_a_slash_task_goes_to_the_model(e2e: Env) -> None:
    e2e.server.script(Reply.text("one"), Reply.text("two"))
    assert e2e.run("--", "/undo").code == 0
    assert e2e.run("/tmp/x.py fails, fix it").code == 0
    sent = [r.messages[-1]["content"] for r in e2e.server.requests]
    assert sent[0].endswith("/undo") and sent[1].endswith("/tmp/x.py fails, fix it")


def test_a_model_the_server_does_not_have_names_every_way_it_was_chosen(e2e: Env) -> None:
    # chosen with /model in the session, the hint named only [model].name and --model
    e2e.server.script(Reply.error(404, {"error": {"message": "The model `nope` does not exist",
                                                  "type": "invalid_request_error", "code": "model_not_found"}}))
    r = e2e.run(stdin="/model nope\nhi\n")
    assert r.code == 1
    assert "The model `nope` does not exist (check [model].name — or --model, /model — and [model].base_url" in r.stderr
