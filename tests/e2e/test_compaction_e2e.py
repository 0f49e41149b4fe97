"""End-to-end: compaction and project memory through the real `minicode` executable.

FakeOpenAI records every request; a 40,000-token ``context_window`` (limit 30,000, keep
recent 15,000) keeps the scripted histories small.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from tests.support.filler import prose
from tests.support.fake_openai import RecordedRequest, Reply

BIG = "B" * 70_000  # 17,500 estimated tokens: more than the kept recent part
TASK = "TASK-7731: tidy the parser. CONSTRAINT: never modify setup.py"
MEMORY = "- MEMORY-MARKER-42: run tests with pytest -q\n"


def small_window(e2e: Any) -> None:
    config = e2e.workspace / "config" / "config.toml"
    config.write_text(config.read_text() + "context_window = 40000\n")


def records(e2e: Any, session_id: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in e2e.session_file(session_id).read_text().splitlines()]


def is_summary_request(request: RecordedRequest) -> bool:
    return not request.body.get("stream") and not request.has_tools


def test_compact_line_nothing_then_something(e2e):
    small_window(e2e)
    (e2e.workspace / "MiniCode.md").write_text(MEMORY)
    e2e.server.script(Reply.text("a0"), Reply.text("a1"), Reply.text("a2"), Reply.text("MANUAL SUMMARY"),
                      Reply.text("a3"))
    r = e2e.run(stdin=f"/compact\n{TASK}\n{BIG}\nsmall task\n/compact\nthird task\n")
    assert r.code == 0, r.stderr
    assert r.stdout == "a0\na1\na2\na3\n"
    lines = r.stderr.splitlines()
    assert any("nothing to compact" in line for line in lines)
    # the first /compact made no call (the memory and the task are one user message on the wire)
    assert e2e.server.requests[0].messages[-1]["content"].endswith("</project-memory>\n\n" + TASK)
    summary = e2e.server.requests[3]
    assert is_summary_request(summary) and "MEMORY-MARKER-42" not in json.dumps(summary.body)
    notice = [line for line in lines if "context compacted" in line]
    assert len(notice) == 1
    found = re.findall(r"([\d,]+) → ([\d,]+) tokens \((\d+) messages summarised\)", notice[0])
    before, after, covered = (int(n.replace(",", "")) for n in found[0])
    assert before > after + 10_000 and covered == 3
    sent = e2e.server.requests[4].messages
    # memory, then the summary: consecutive user messages travel as one (strict alternation)
    assert [m["role"] for m in sent] == ["system", "user", "assistant", "user", "assistant", "user"]
    assert sent[1]["content"].startswith("<project-memory>") and "MEMORY-MARKER-42" in sent[1]["content"]
    summary_part = sent[1]["content"].split("</project-memory>\n\n", 1)[1]
    assert summary_part.startswith("<context-summary>") and "MANUAL SUMMARY" in summary_part
    assert f"<original-task>\n{TASK}\n</original-task>" in summary_part
    assert [m["content"] for m in sent[2:]] == ["a1", "small task", "a2", "third task"]
    # Saved at once: the checkpoint record comes before the next task's message.
    recs = records(e2e, r.session_id)
    kinds = [(x["type"], x.get("content")) for x in recs]
    assert kinds.index(("checkpoint", None)) < kinds.index(("message", "third task"))
    assert [x["summary"] for x in recs if x["type"] == "checkpoint"] == ["MANUAL SUMMARY"]
    assert [x["content"] for x in recs if x["type"] == "message"] == [
        TASK, "a0", BIG, "a1", "small task", "a2", "third task", "a3"]  # the raw history is all there


def test_compact_reloads_memory_first(e2e):
    small_window(e2e)
    (e2e.workspace / "MiniCode.md").write_text(MEMORY)

    def answer_and_break_memory(request: RecordedRequest) -> Reply:
        (e2e.workspace / "MiniCode.md").write_bytes(b"broken \x00 memory")
        return Reply.text("a2")

    e2e.server.script(Reply.text("a0"), Reply.text("a1"), Reply.dynamic(answer_and_break_memory))
    r = e2e.run(stdin=f"{TASK}\n{BIG}\nsmall task\n/compact\nlater task\n")
    assert r.code == 1
    assert r.stdout == "a0\na1\na2\n"
    error = [line for line in r.stderr.splitlines() if line.startswith("minicode: error:")]
    # /compact reported the broken file and the pipe went on: the later task stopped on it too.
    assert len(error) == 2 and all("NUL" in line and "Fix the file" in line for line in error)
    assert sum("model call" in line for line in r.stderr.splitlines()) == 4
    assert len(e2e.server.requests) == 3  # no summary request, no request for the later task
    assert not any(x["type"] == "checkpoint" for x in records(e2e, r.session_id))


def test_checkpoint_is_used_after_resume(e2e):
    small_window(e2e)
    (e2e.workspace / "MiniCode.md").write_text(MEMORY)
    e2e.server.script(Reply.text("a0"), Reply.text("a1"), Reply.text("a2"), Reply.text("RESUMABLE SUMMARY"))
    first = e2e.run(stdin=f"{TASK}\n{BIG}\nsmall task\n/compact\n")
    assert first.code == 0, first.stderr
    e2e.server.script(Reply.text("a3"))
    second = e2e.run("--session", first.session_id, stdin="next task\n")
    assert second.code == 0, second.stderr
    sent = e2e.server.requests[-1].messages
    assert [m["role"] for m in sent] == ["system", "user", "assistant", "user", "assistant", "user"]
    assert "MEMORY-MARKER-42" in sent[1]["content"]
    summary_part = sent[1]["content"].split("</project-memory>\n\n", 1)[1]
    assert summary_part.startswith("<context-summary>") and "RESUMABLE SUMMARY" in summary_part
    assert f"<original-task>\n{TASK}\n</original-task>" in summary_part
    assert [m["content"] for m in sent[2:]] == ["a1", "small task", "a2", "next task"]
    assert not any(BIG in m["content"] for m in sent)  # not the whole history


def test_auto_compaction_counts_in_the_statistics_line(e2e):
    small_window(e2e)
    e2e.server.script(
        Reply.text("a1", usage={"prompt_tokens": 29_990, "completion_tokens": 5, "total_tokens": 29_995}),
        Reply.text("AUTO SUMMARY", usage={"prompt_tokens": 5_000, "completion_tokens": 300, "total_tokens": 5_300}),
        Reply.text("a2"),  # 100 in, 20 out
    )
    r = e2e.run(stdin=f"{BIG}\nsecond task\n")
    assert r.code == 0, r.stderr
    assert is_summary_request(e2e.server.requests[1])
    assert "context compacted" in r.stderr
    stats = [line for line in r.stderr.splitlines() if "model call" in line]
    assert "1 model call " in stats[0]
    assert "2 model calls" in stats[1] and "tokens: 5,420 total (5,100 in, 320 out)" in stats[1]
    assert "(partial)" not in stats[1]


@pytest.mark.parametrize(
    "data, why",
    [
        (b"caf\xe9\n", "not valid UTF-8"),
        (b"a\x00b", "NUL"),
        (b"# x\n" * 17_000, "65,536-byte limit"),
        (b"word " * 3_400, "4,096"),
    ],
)
def test_memory_over_a_limit_fails_before_any_request(e2e, data, why):
    (e2e.workspace / "MiniCode.md").write_bytes(data)
    r = e2e.run("do the task")
    assert r.code == 1
    assert why in r.stderr and "Fix the file" in r.stderr
    assert e2e.server.requests == []
    assert (e2e.workspace / "MiniCode.md").read_bytes() == data  # never truncated or rewritten


def test_missing_memory_sends_no_memory_message(e2e):
    e2e.server.script(Reply.text("ok"))
    r = e2e.run("hello")
    assert r.code == 0, r.stderr
    assert [m["role"] for m in e2e.server.requests[0].messages] == ["system", "user"]
    assert not (e2e.workspace / "MiniCode.md").exists()


def test_memory_edited_between_pipe_turns_is_reloaded(e2e):
    # This server edits the file the moment a request arrives: the edit falls between the turns.
    (e2e.workspace / "MiniCode.md").write_text("- OLD FACT\n")

    def answer_and_edit(request: RecordedRequest) -> Reply:
        (e2e.workspace / "MiniCode.md").write_text("- NEW FACT\n")  # the user edits it meanwhile
        return Reply.text("one")

    e2e.server.script(Reply.dynamic(answer_and_edit), Reply.text("two"))
    r = e2e.run(stdin="first\nsecond\n")
    assert r.code == 0, r.stderr
    first, second = (req.messages[1]["content"] for req in e2e.server.requests)
    assert "OLD FACT" in first and "NEW FACT" in second and "OLD FACT" not in second


def test_memory_written_by_the_write_tool_is_in_the_next_request(e2e):
    (e2e.workspace / "MiniCode.md").write_text("- OLD FACT\n")
    e2e.server.script(Reply.tool("write", path="MiniCode.md", content="- NEW FACT\n"), Reply.text("saved"))
    r = e2e.run("--yes", "remember NEW FACT")
    assert r.code == 0, r.stderr
    assert "NEW FACT" in e2e.server.requests[1].messages[1]["content"]
    assert "<project-memory>" not in e2e.session_file(r.session_id).read_text()


# --- a server that under-reports its usage (issue 16 item 4) -----------------------------------

ANSWER = prose(8_000)  # ~2,000 estimated tokens an answer, like the benches'


def _main_requests(e2e: Any) -> list[RecordedRequest]:
    return [r for r in e2e.server.requests if not is_summary_request(r)]


@pytest.mark.parametrize("output", ["text", "json"])
def test_a_long_pipe_run_compacts_by_its_own_estimate_when_the_server_reports_100_tokens(e2e, output):
    """The fake server reports 100 prompt tokens for every request (like the benches'): the
    trigger must not trust that alone, or the history grows without bound."""
    small_window(e2e)
    e2e.server.default = Reply.text(ANSWER)  # usage: 100 prompt tokens, always
    tasks = 40  # ~80,000 estimated tokens of conversation in a 40,000-token window
    args = ("--output", "json") if output == "json" else ()
    r = e2e.run(*args, stdin="".join(f"task {i}\n" for i in range(tasks)), timeout=120)
    assert r.code == 0, r.stderr
    main = _main_requests(e2e)
    assert len(main) == tasks
    for request in main:  # none ever went over the budget (30,000 tokens, ~4 characters each)
        assert len(json.dumps(request.messages, ensure_ascii=False)) < 30_000 * 4
    summaries = len(e2e.server.requests) - tasks
    assert summaries >= 2
    if output == "json":
        events = [json.loads(line) for line in r.stdout.splitlines()]
        compactions = [e for e in events if e["type"] == "compaction"]
        assert len(compactions) >= 2 and not any(e["manual"] for e in compactions)
        assert all(e["tokens_before"] > 30_000 > e["tokens_after"] for e in compactions)
    else:
        compactions = [line for line in r.stderr.splitlines() if "context compacted" in line]
        assert len(compactions) >= 2
    recs = records(e2e, r.session_id)
    assert len([x for x in recs if x["type"] == "checkpoint"]) == len(compactions)
    assert len([x for x in recs if x["type"] == "message"]) == 2 * tasks  # the raw history is all there
