"""Compaction and project memory through the real Session and agent loop (SPEC 4, 6, 8).

A small ``context_window`` (40,000 → limit 30,000, keep-recent 15,000) makes every path
cheap. Main requests are streamed from a script; summary requests go through ``chat``.
"""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any, Awaitable, Callable, Iterator

import pytest

from minicode.agent.approval import AutoApprover
from minicode.agent.events import CompactionDone, Notice, TaskStatus, TurnFinished
from minicode.errors import APIError, ProtocolError
from minicode.provider.types import ChatRequest, ChatResponse, Message, ToolCall, Usage
from minicode.session.session import Session
from minicode.tokens import estimate_message, estimate_messages, estimate_tools
from tests.agent.conftest import Events
from tests.agent.scripted import fail, text, tools
from tests.compaction.fakes import reply
from tests.agent.conftest import SECRET, make_config
from tests.integration.twolane import HANG, TwoLaneProvider

BIG = "x" * 70_000  # 17,500 tokens: more than keep-recent, so there is something to compact
MEMORY = "- MEMORY-MARKER-42: run tests with `pytest -q`"


@pytest.fixture
def provider() -> TwoLaneProvider:
    return TwoLaneProvider()


@pytest.fixture
def open_session(workspace: Path, provider: TwoLaneProvider) -> Iterator[Callable[..., Awaitable[Session]]]:
    opened: list[Session] = []

    async def _open(*, window: int = 40_000, **kw: Any) -> Session:
        kw.setdefault("config", make_config(window=window))
        kw.setdefault("provider", provider)
        env = {"PATH": "/usr/bin:/bin", "TEST_KEY": SECRET, "HOME": str(workspace)}
        session = await Session.open(workspace=workspace, env=env, **kw)
        opened.append(session)
        return session

    yield _open
    for s in opened:
        s._store.close()


async def run(session, task: str, **kw: Any) -> tuple[TurnFinished, Events]:
    events = Events()
    finished = await session.turn(task, approver=AutoApprover(), emit=events.append, **kw)
    return finished, events


def records(session, kind: str) -> list[dict[str, Any]]:
    lines = session._store.path.read_text(encoding="utf-8").splitlines()
    return [r for r in map(json.loads, lines) if r["type"] == kind]


def calibrated(session, answer: str, user: str, over: int) -> Usage:
    """The usage of a first answer that puts the next request at ``limit + over`` tokens."""
    limit = session._context.budget.limit
    rest = estimate_message(Message(role="assistant", content=answer)) + estimate_message(Message.user(user))
    prompt = limit - rest + over
    return Usage(prompt, 10, prompt + 10)


def summary_text(request: ChatRequest) -> str:
    return request.messages[-1].content or ""


# --- trigger and calibration ------------------------------------------------------------------


@pytest.mark.parametrize("over", [0, 1])
async def test_trigger_just_below_and_just_above_the_limit(open_session, provider, over):
    session = await open_session()
    provider.script(text("first answer", usage=calibrated(session, "first answer", "second task", over)))
    await run(session, BIG)
    provider.summaries.append(reply("SUMMARY-1"))
    provider.script(text("second answer", usage=None))
    finished, events = await run(session, "second task")
    assert finished.status is TaskStatus.DONE
    second = provider.requests[1]
    # The local estimate alone is far below the limit: the main response's usage decided.
    assert estimate_messages(second.messages) + estimate_tools(second.tools) < session._context.budget.limit - 5_000
    if over:
        assert len(provider.chat_requests) == 1 and provider.chat_requests[0].tools == ()
        assert len(events.of(CompactionDone)) == 1
        assert "SUMMARY-1" in (second.messages[1].content or "")
        assert second.messages[-1].content == "second task"  # checked after the user message
    else:
        assert not provider.chat_requests and not events.of(CompactionDone)
        assert [m.content for m in second.messages[1:]] == [BIG, "first answer", "second task"]


async def test_compaction_calls_never_calibrate_and_count_in_stats(open_session, provider):
    session = await open_session()
    provider.script(text("a1", usage=calibrated(session, "a1", "t2", 1)))
    await run(session, BIG)
    provider.summaries.append(reply("SUMMARY", usage=Usage(900_000, 50, 900_050)))
    provider.script(text("a2", usage=Usage(5_000, 7, 5_007)))
    finished, _ = await run(session, "t2")
    assert finished.stats.model_calls == 2
    assert finished.stats.prompt_tokens == 905_000 and finished.stats.total_tokens == 905_057
    assert "2 model calls" in finished.stats.format() and "(partial)" not in finished.stats.format()
    used, _ = session.context_usage()  # the main usage calibrates, not the summary's 900,000
    calibrated_estimate = 5_000 + estimate_message(Message(role="assistant", content="a2"))
    local = session._context.local_estimate(session._registry.specs())
    assert used == max(local, calibrated_estimate) < 900_000  # the larger of the server's count and ours


async def test_summary_without_usage_marks_tokens_partial(open_session, provider):
    session = await open_session()
    provider.script(text("a1", usage=calibrated(session, "a1", "t2", 1)))
    await run(session, BIG)
    provider.summaries.append(reply("SUMMARY", usage=None))
    provider.script(text("a2"))
    finished, _ = await run(session, "t2")
    assert finished.stats.model_calls == 2 and "(partial)" in finished.stats.format()


# --- three compactions in one long task ------------------------------------------------------

TASK = "TASK-7731: read big1.txt to big7.txt and report.\nCONSTRAINT: never modify setup.py"


def numbered_summariser() -> Any:
    """Keeps every CONSTRAINT line it is shown (like a model following the prompt) and
    tags each summary with its number."""
    count = 0

    def summarise(request: ChatRequest) -> ChatResponse:
        nonlocal count
        count += 1
        found = dict.fromkeys(re.findall(r"CONSTRAINT: [^\n<]*", summary_text(request)))
        body = "\n".join([f"SUMMARY-#{count}", "## Constraints and preferences", *found])
        return reply(body, usage=Usage(1_000, 100, 1_100))

    return summarise


async def _long_task(open_session, provider: TwoLaneProvider, workspace: Path) -> tuple[Any, TurnFinished, Events]:
    for i in range(1, 8):  # ~9,000 tokens each as a read result
        (workspace / f"big{i}.txt").write_text("".join(f"file {i} line {n:04d} " + "y" * 70 + "\n" for n in range(400)))
    # 38,000 (limit 28,500, keep-recent 14,250): exactly three compactions whatever the fixed
    # part of every request (system prompt + tool declarations) costs between ~900 and ~2,700
    # estimated tokens; at 40,000 the count flipped to four when the prompt budget shrank.
    session = await open_session(window=38_000)
    provider.script(*[tools(("read", {"path": f"big{i}.txt"}), usage=None) for i in range(1, 8)])
    provider.script(text("all seven read", usage=None))
    provider.summaries.extend([numbered_summariser()] * 3)
    finished, events = await run(session, TASK)
    return session, finished, events


async def test_three_compactions_in_one_task_keep_task_constraint_and_raw_history(open_session, provider, workspace):
    session, finished, events = await _long_task(open_session, provider, workspace)
    assert finished.status is TaskStatus.DONE and finished.final_text == "all seven read"
    assert len(events.of(CompactionDone)) == 3 and len(provider.chat_requests) == 3
    assert all(r.tools == () for r in provider.chat_requests)  # non-streaming (chat), no tools
    final = provider.requests[-1].messages
    summary = final[1].content or ""
    assert summary.startswith("<context-summary>")
    assert f"<original-task>\n{TASK}\n</original-task>" in summary
    assert "SUMMARY-#3" in summary and "CONSTRAINT: never modify setup.py" in summary.split("</original-task>")[1]
    assert final[-1].role == "tool" and "file 7 line 0000" in (final[-1].content or "")
    # The raw session file holds every original message, plus the three checkpoints.
    stored = records(session, "message")
    assert len(stored) == len(session.messages) == 1 + 7 * 2 + 1
    assert [(r["role"], r["content"]) for r in stored] == [(m.role, m.content) for m in session.messages]
    assert stored[0]["content"] == TASK
    assert sum("file 3 line 0399" in (r["content"] or "") for r in stored) == 1
    kept = [r["first_kept"] for r in records(session, "checkpoint")]
    assert len(kept) == 3 and kept == sorted(set(kept))
    assert finished.stats.model_calls == 8 + 3


async def test_second_compaction_updates_the_first_summary(open_session, provider, workspace):
    await _long_task(open_session, provider, workspace)
    first, second, third = map(summary_text, provider.chat_requests)
    assert "<existing-summary>" not in first and "CONSTRAINT: never modify setup.py" in first
    assert re.search(r"<existing-summary>\nSUMMARY-#1\n.*CONSTRAINT: never modify setup.py", second, re.S)
    assert "<existing-summary>\nSUMMARY-#2" in third
    # The summarised part is never re-sent: the second request holds only newer messages.
    assert "file 1 line 0000" in first and "file 1 line 0000" not in second


# --- failed summaries ----------------------------------------------------------------------------

_TOOL_CALL = ChatResponse(Message(role="assistant", content="x", tool_calls=(ToolCall("c", "ls", "{}"),)), "tool_calls")


@pytest.mark.parametrize(
    "bad, reason",
    [
        (reply(""), "empty"),
        (reply("half a summ", finish="length"), "cut off"),
        (_TOOL_CALL, "called tools"),
        (APIError("upstream broke", status=500), "summary request failed"),
        (ProtocolError("bad stream"), "summary request failed"),
    ],
)
async def test_failed_auto_compaction_keeps_old_checkpoint_and_goes_on(open_session, provider, bad, reason):
    session = await open_session()
    provider.script(text("a1", usage=calibrated(session, "a1", "t2", 1)))  # over the limit, within the window
    await run(session, BIG)
    provider.summaries.append(bad)
    provider.script(text("a2", usage=None))
    finished, events = await run(session, "t2")
    assert finished.status is TaskStatus.DONE and finished.final_text == "a2"
    notice = [e.text for e in events.of(Notice)]
    assert any("compaction failed" in t and reason in t for t in notice), notice
    assert session._context.checkpoint is None and not records(session, "checkpoint")
    assert [m.content for m in provider.requests[-1].messages[1:]] == [BIG, "a1", "t2"]
    assert finished.stats.model_calls == 2  # the summary call counts, with or without a response


async def test_failed_compaction_after_an_earlier_one_keeps_that_checkpoint(open_session, provider):
    session = await open_session()
    provider.script(text("a1", usage=calibrated(session, "a1", "t2", 1)))
    await run(session, BIG)
    provider.summaries.append(reply("GOOD SUMMARY"))
    provider.script(text("a2", usage=None))
    await run(session, "t2")
    old = session._context.checkpoint
    assert old is not None
    provider.script(text("a3", usage=None))
    await run(session, "y" * 70_000)
    provider.summaries.append(reply("cut", finish="length"))
    provider.script(text("a4", usage=Usage(29_999, 1, 30_000)))
    await run(session, "t4")  # a3's user message is 17,500 tokens: over budget, compaction fails
    assert session._context.checkpoint is old and len(records(session, "checkpoint")) == 1
    assert "GOOD SUMMARY" in (provider.requests[-1].messages[1].content or "")


async def test_failed_compaction_over_the_whole_window_fails_the_task_without_a_request(open_session, provider):
    session = await open_session()
    window = session._context.budget.context_window
    over_window = calibrated(session, "a1", "t2", window - session._context.budget.limit + 1)
    provider.script(text("a1", usage=over_window))
    await run(session, BIG)
    provider.summaries.append(reply("cut", finish="length"))
    finished, events = await run(session, "t2")
    assert finished.status is TaskStatus.ERROR
    assert "context window" in (finished.error or "") and "cut off" in (finished.error or "")
    assert len(provider.requests) == 1  # no doomed request was sent
    assert session.messages[-1].content == "t2"  # the task is kept for a retry


async def test_cancelled_summary_commits_nothing_and_the_next_turn_compacts(open_session, provider):
    session = await open_session()
    provider.script(text("a1", usage=calibrated(session, "a1", "t2", 1)))
    await run(session, BIG)
    provider.summaries.append(HANG)
    events = Events()
    task = asyncio.create_task(session.turn("t2", approver=AutoApprover(), emit=events.append))
    while not provider.chat_requests:
        await asyncio.sleep(0.01)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert events.of(TurnFinished)[0].status is TaskStatus.INTERRUPTED
    assert session._context.checkpoint is None and not records(session, "checkpoint")
    provider.summaries.append(reply("LATER SUMMARY"))
    provider.script(text("a3", usage=None))
    finished, _ = await run(session, "t3")
    assert finished.status is TaskStatus.DONE and len(records(session, "checkpoint")) == 1


# --- overflow recovery ----------------------------------------------------------------------------

OVERFLOW = APIError("maximum context length exceeded", status=400, context_overflow=True)


async def test_overflow_compacts_and_retries_once_keeping_tool_results(open_session, provider, workspace):
    (workspace / "small.txt").write_text("SMALL-FILE-CONTENT\n")
    session = await open_session()
    provider.script(text("a1", usage=None))
    await run(session, BIG)
    provider.script(tools(("read", {"path": "small.txt"}), usage=None), fail(OVERFLOW), text("recovered", usage=None))
    provider.summaries.append(reply("OVERFLOW SUMMARY"))
    finished, events = await run(session, "t2")
    assert finished.status is TaskStatus.DONE and finished.final_text == "recovered"
    assert finished.stats.tool_calls == 1 and len(provider.chat_requests) == 1
    assert len(provider.requests) == 4  # a1, the tool call, the overflow, the one retry
    retried = provider.requests[-1].messages
    assert "OVERFLOW SUMMARY" in (retried[1].content or "")
    assert retried[-1].role == "tool" and "SMALL-FILE-CONTENT" in (retried[-1].content or "")
    assert len(events.of(CompactionDone)) == 1 and len(records(session, "checkpoint")) == 1


async def test_second_overflow_fails_the_task_clearly(open_session, provider):
    session = await open_session()
    provider.script(text("a1", usage=None))
    await run(session, BIG)
    provider.script(fail(OVERFLOW), fail(OVERFLOW))
    provider.summaries.append(reply("S"))
    finished, _ = await run(session, "t2")
    assert finished.status is TaskStatus.ERROR
    assert "context window" in (finished.error or "") and "after compaction" in (finished.error or "")
    assert len(provider.requests) == 3 and len(provider.chat_requests) == 1


async def test_overflow_with_nothing_to_compact_fails_clearly(open_session, provider):
    session = await open_session()
    provider.script(fail(OVERFLOW))
    finished, _ = await run(session, "only message")
    assert finished.status is TaskStatus.ERROR and "context window" in (finished.error or "")
    assert not provider.chat_requests and len(provider.requests) == 1


async def test_rate_limit_and_length_stop_do_not_trigger_compaction(open_session, provider):
    session = await open_session()
    provider.script(text("a1", usage=None))
    await run(session, BIG)
    provider.script(fail(APIError("slow down", status=429)))
    finished, _ = await run(session, "t2")
    assert finished.status is TaskStatus.ERROR and "429" in (finished.error or "")
    provider.script(text("cut off answ", finish="length", usage=None))
    finished, events = await run(session, "t3")
    assert not provider.chat_requests and not events.of(CompactionDone)


# --- resume -------------------------------------------------------------------------------------


async def test_resumed_session_over_budget_is_compacted_before_its_first_request(open_session, provider, workspace):
    provider.script(text("a1", usage=None), text("a2", usage=None))
    s1 = await open_session(window=256 * 1024)
    await run(s1, "original task")
    await run(s1, "z" * 140_000)  # 35,000 tokens: fine for 256k, over a 40k window's budget
    s1._store.close()
    (workspace / "MiniCode.md").write_text(MEMORY + "\n")
    # 35,000 tokens do not fit one summary request of a 40k window: two chunks, folded.
    provider.summaries.extend([numbered_summariser()] * 6)
    provider.script(text("a3", usage=None))
    s2 = await open_session(resume=s1.id, window=40_000)
    finished, events = await run(s2, "go on")
    assert finished.status is TaskStatus.DONE, finished.error
    n = len(provider.chat_requests)
    assert n >= 2 and all(f"<existing-summary>\nSUMMARY-#{i}\n" in summary_text(provider.chat_requests[i])
                          for i in range(1, n))
    sent = provider.requests[-1].messages
    assert [m.role for m in sent] == ["system", "user", "user", "assistant", "user"]
    assert sent[1].content.startswith("<project-memory>") and "MEMORY-MARKER-42" in sent[1].content
    assert sent[2].content.startswith("<context-summary>") and f"SUMMARY-#{n}" in sent[2].content
    assert "<original-task>\noriginal task\n</original-task>" in sent[2].content
    assert [m.content for m in sent[3:]] == ["a2", "go on"]
    assert len(records(s2, "checkpoint")) == 1 and s2._context.checkpoint.first_kept == 3


# --- project memory -----------------------------------------------------------------------------


async def test_memory_after_compaction_order_never_stored_never_summarised(open_session, provider, workspace):
    (workspace / "MiniCode.md").write_text(MEMORY + "\n")
    session = await open_session()
    provider.script(text("a1", usage=calibrated(session, "a1", "t2", 1)))
    await run(session, BIG)
    provider.summaries.append(reply("S1"))
    provider.script(text("a2", usage=None))
    await run(session, "t2")
    sent = provider.requests[-1].messages
    assert [m.role for m in sent] == ["system", "user", "user", "assistant", "user"]
    assert sent[1].content.startswith("<project-memory>") and "MEMORY-MARKER-42" in sent[1].content
    assert "current request take precedence" in sent[1].content
    assert sent[2].content.startswith("<context-summary>")
    assert "MEMORY-MARKER-42" not in summary_text(provider.chat_requests[0])
    assert "MEMORY-MARKER-42" not in session._store.path.read_text()


@pytest.mark.parametrize("content", [None, b"", b"  \n\n"])
async def test_missing_or_empty_memory_injects_nothing(open_session, provider, workspace, content):
    if content is not None:
        (workspace / "MiniCode.md").write_bytes(content)
    session = await open_session()
    provider.script(text("ok"))
    await run(session, "hello")
    assert [m.role for m in provider.requests[0].messages] == ["system", "user"]
    assert (workspace / "MiniCode.md").exists() == (content is not None)


@pytest.mark.parametrize(
    "data, why",
    [
        (b"caf\xe9\n", "not valid UTF-8"),
        (b"a\x00b", "NUL"),
        (b"# x\n" * 17_000, "65,536-byte limit"),
        (b"word " * 3_400, "4,096"),
    ],
)
async def test_memory_over_a_limit_stops_the_turn_before_any_request(open_session, provider, workspace, data, why):
    session = await open_session()
    (workspace / "MiniCode.md").write_bytes(data)
    finished, _ = await run(session, "task")
    assert finished.status is TaskStatus.ERROR and why in (finished.error or "")
    assert "Fix the file" in (finished.error or "")
    assert not provider.requests and not provider.chat_requests and session.messages == []
    (workspace / "MiniCode.md").write_text(MEMORY)  # fixed: the next turn works
    provider.script(text("ok"))
    finished, _ = await run(session, "task")
    assert finished.status is TaskStatus.DONE and "MEMORY-MARKER-42" in provider.requests[0].messages[1].content


async def test_broken_memory_at_start_opens_the_session_with_a_warning(open_session, provider, workspace):
    (workspace / "MiniCode.md").write_bytes(b"a\x00b")
    session = await open_session()
    assert any("NUL" in w for w in session.warnings)
    finished, _ = await run(session, "task")
    assert finished.status is TaskStatus.ERROR and not provider.requests


async def test_memory_is_reloaded_before_every_turn(open_session, provider, workspace):
    (workspace / "MiniCode.md").write_text("- OLD FACT\n")
    session = await open_session()
    provider.script(text("one"), text("two"))
    await run(session, "first")
    (workspace / "MiniCode.md").write_text("- NEW FACT\n")
    await run(session, "second")
    assert "OLD FACT" in provider.requests[0].messages[1].content
    assert "NEW FACT" in provider.requests[1].messages[1].content
    assert "OLD FACT" not in provider.requests[1].messages[1].content


async def test_memory_written_by_a_tool_is_seen_by_the_next_request_of_the_turn(open_session, provider, workspace):
    (workspace / "MiniCode.md").write_text("- OLD FACT\n")
    session = await open_session()
    provider.script(tools(("write", {"path": "MiniCode.md", "content": "- NEW FACT\n"})), text("saved"))
    await run(session, "remember NEW FACT")
    assert "NEW FACT" in provider.requests[1].messages[1].content
    assert "<project-memory>" not in session._store.path.read_text()


@pytest.mark.parametrize("content", ["word " * 3_400, "a\x00b"])
async def test_memory_write_breaking_a_limit_is_a_tool_error_and_keeps_the_old_file(
    open_session, provider, workspace, content
):
    (workspace / "MiniCode.md").write_text("- OLD FACT\n")
    session = await open_session()
    provider.script(tools(("write", {"path": "MiniCode.md", "content": content})), text("could not"))
    finished, events = await run(session, "remember a lot")
    assert finished.status is TaskStatus.DONE
    result = provider.requests[1].messages[-1]
    assert result.role == "tool" and "refused" in (result.content or "") and "not changed" in (result.content or "")
    assert (workspace / "MiniCode.md").read_text() == "- OLD FACT\n"
    assert "OLD FACT" in provider.requests[1].messages[1].content


async def test_memory_detail_file_is_read_with_the_read_tool(open_session, provider, workspace):
    (workspace / ".minicode" / "memory").mkdir(parents=True)
    (workspace / ".minicode" / "memory" / "style.md").write_text("DETAIL: tabs, not spaces\n")
    (workspace / "MiniCode.md").write_text("- style: see .minicode/memory/style.md\n")
    session = await open_session()
    provider.script(tools(("read", {"path": ".minicode/memory/style.md"})), text("tabs"))
    finished, _ = await run(session, "what style?")
    result = provider.requests[1].messages[-1]
    assert finished.status is TaskStatus.DONE and "DETAIL: tabs, not spaces" in (result.content or "")


async def test_missing_detail_file_is_a_tool_error_not_a_task_failure(open_session, provider, workspace):
    session = await open_session()
    provider.script(tools(("read", {"path": ".minicode/memory/none.md"})), text("no details"))
    finished, events = await run(session, "what style?")
    assert finished.status is TaskStatus.DONE
    assert "no such file" in (provider.requests[1].messages[-1].content or "")
