"""Summary calls and the shared compact() with a scripted provider (no network)."""

from __future__ import annotations

import asyncio

import pytest

from minicode.compaction.checkpoint import Checkpoint
from minicode.compaction.compact import (
    MAX_OVERFLOW_SPLITS,
    CompactionFailed,
    compact,
    summarize,
)
from minicode.compaction.context import build_context
from minicode.compaction.plan import serialize
from minicode.compaction.prompt import SUMMARISER_SYSTEM
from minicode.compaction.trigger import Budget
from minicode.errors import APIError, ProtocolError
from minicode.provider.types import ChatResponse, Message, ToolCall, ToolSpec, Usage
from minicode.tokens import TokenCounter

from .fakes import ScriptedProvider, echo_summariser, reply

TOOLS = (ToolSpec("read", "Read a file.", {"type": "object"}),)
BUDGET = Budget(262_144)
TASK = "Refactor the parser.\nCONSTRAINT: never touch tests/legacy/"


def _exchange(i: int, size: int = 2_000) -> list[Message]:
    call = ToolCall(f"call_{i}", "read", f'{{"path": "src/m{i}.py"}}')
    return [
        Message.user(f"step {i}"),
        Message(role="assistant", content=None, tool_calls=(call,)),
        Message.tool(f"call_{i}", f"contents of m{i} " + "x" * size),
        Message(role="assistant", content=f"read m{i}"),
    ]


def _history(n: int, size: int = 2_000) -> list[Message]:
    history = [Message.user(TASK)]
    for i in range(n):
        history += _exchange(i, size)
    return history


async def test_summarize_sends_one_tool_free_non_streaming_request() -> None:
    provider = ScriptedProvider([reply("the summary", usage=Usage(10, 5, 15))])
    older = _history(2)
    outcome = await summarize(provider, previous=None, older=older, request_budget=BUDGET.limit)
    assert outcome.summary == "the summary"
    assert outcome.usages == (Usage(10, 5, 15),)
    (request,) = provider.requests
    assert request.tools == ()
    assert request.messages[0] == Message.system(SUMMARISER_SYSTEM)
    prompt = provider.prompt(0)
    assert serialize(older) in prompt  # complete, never truncated
    for section in ("Goal", "Constraints and preferences", "Done", "In progress", "Blocked",
                    "Key decisions", "Next steps", "Critical context"):
        assert section in prompt
    assert "existing-summary" not in prompt


async def test_summarize_updates_an_existing_summary() -> None:
    provider = ScriptedProvider([reply("updated")])
    outcome = await summarize(provider, previous="OLD SUMMARY 42", older=_history(1), request_budget=BUDGET.limit)
    assert outcome.summary == "updated"
    prompt = provider.prompt(0)
    assert "<existing-summary>\nOLD SUMMARY 42\n</existing-summary>" in prompt
    assert "Update the summary" in prompt


async def test_large_input_is_chunked_and_folded_into_the_running_summary() -> None:
    steps = [reply(f"summary after chunk {i}", usage=Usage(1, 1, 2)) for i in range(20)]
    provider = ScriptedProvider(steps)
    older = _history(30, size=8_000)  # ~60k tokens, budget below forces several chunks
    outcome = await summarize(provider, previous=None, older=older, request_budget=30_000)
    n = len(provider.requests)
    assert n >= 3
    assert outcome.summary == f"summary after chunk {n - 1}"
    assert len(outcome.usages) == n
    assert "existing-summary" not in provider.prompt(0)
    for i in range(1, n):
        assert f"<existing-summary>\nsummary after chunk {i - 1}\n</existing-summary>" in provider.prompt(i)
    # Every byte of the older part was sent, exactly once, in order.
    sent = "".join(_conversation_of(provider.prompt(i)) for i in range(n))
    assert sent == serialize(older)


def _conversation_of(prompt: str) -> str:
    for open_tag, close_tag in (("<conversation>\n", "\n</conversation>"),
                                ("<newer-conversation>\n", "\n</newer-conversation>")):
        if open_tag in prompt:
            return prompt.split(open_tag, 1)[1].rsplit(close_tag, 1)[0]
    raise AssertionError("no conversation in prompt")


@pytest.mark.parametrize(
    "response, reason",
    [
        (reply(""), "empty"),
        (reply("   \n"), "empty"),
        (reply(None), "empty"),
        (reply("half a summ", finish="length"), "cut off"),
        (reply("summary", finish=None), "did not finish"),
        (reply("summary", finish="content_filter"), "did not finish"),
        (ChatResponse(Message(role="assistant", content="x", tool_calls=(ToolCall("c", "bash", "{}"),)), "stop"),
         "called tools"),
        (ChatResponse(Message(role="assistant", content="x", tool_calls=(ToolCall("c", "bash", "{}"),)), "tool_calls"),
         "called tools"),
    ],
)
async def test_no_commit_on_a_bad_summary(response: ChatResponse, reason: str) -> None:
    provider = ScriptedProvider([response])
    old = Checkpoint("old summary", 1)
    history = _history(20)
    with pytest.raises(CompactionFailed, match=reason) as info:
        await compact(provider, history, old, budget=Budget(262_144, keep_recent=100),
                      original_task=TASK, tools=TOOLS, memory=None)
    assert info.value.usages == (response.usage,)  # the call still counts in statistics
    assert info.value.failed_calls == 0  # it answered: counted through usages, not as failed
    assert len(provider.requests) == 1


@pytest.mark.parametrize(
    "error",
    [APIError("rate limited", status=429), APIError("boom", status=500), ProtocolError("bad stream")],
)
async def test_no_commit_on_an_error(error: Exception) -> None:
    provider = ScriptedProvider([error])
    with pytest.raises(CompactionFailed, match="summary request failed") as info:
        await compact(provider, _history(20), None, budget=Budget(262_144, keep_recent=100),
                      original_task=TASK, tools=TOOLS, memory=None)
    assert info.value.__cause__ is error
    assert info.value.usages == ()
    assert info.value.failed_calls == 1


async def test_cancellation_propagates_and_commits_nothing() -> None:
    started = asyncio.Event()

    async def hang(request: object) -> ChatResponse:
        started.set()
        await asyncio.sleep(3600)
        raise AssertionError("never reached")

    provider = ScriptedProvider([reply("first"), hang])
    task = asyncio.create_task(
        summarize(provider, previous=None, older=_history(30, size=8_000), request_budget=30_000)
    )
    await started.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert len(provider.requests) == 2  # cancelled in the second chunk's request


async def test_scripted_cancellation_is_not_turned_into_compaction_failed() -> None:
    provider = ScriptedProvider([asyncio.CancelledError()])
    with pytest.raises(asyncio.CancelledError):
        await summarize(provider, previous=None, older=_history(1), request_budget=BUDGET.limit)


async def test_overflow_on_a_chunk_splits_it_smaller() -> None:
    overflow = APIError("maximum context length exceeded", status=400, context_overflow=True)
    provider = ScriptedProvider([overflow, reply("first half"), reply("second half")])
    older = _history(10)
    outcome = await summarize(provider, previous=None, older=older, request_budget=BUDGET.limit)
    assert outcome.summary == "second half"
    assert len(provider.requests) == 3
    whole = _conversation_of(provider.prompt(0))
    first, second = _conversation_of(provider.prompt(1)), _conversation_of(provider.prompt(2))
    assert first + second == whole == serialize(older)
    assert "<existing-summary>\nfirst half\n</existing-summary>" in provider.prompt(2)
    assert outcome.usages == (None, None)
    assert outcome.failed_calls == 1  # the overflowing request was a call without a response


async def test_repeated_overflow_gives_up_after_bounded_splits() -> None:
    overflow = APIError("context_length_exceeded", status=400, context_overflow=True)
    provider = ScriptedProvider([overflow] * 50)
    with pytest.raises(CompactionFailed, match="summary request failed") as info:
        await summarize(provider, previous=None, older=_history(20, size=4_000), request_budget=BUDGET.limit)
    assert len(provider.requests) == MAX_OVERFLOW_SPLITS + 1
    assert info.value.failed_calls == MAX_OVERFLOW_SPLITS + 1 and info.value.usages == ()


async def test_compact_with_a_session_counter_reports_the_same_sizes() -> None:
    history = _history(20)
    budget = Budget(262_144, keep_recent=3_000)
    counter = TokenCounter()
    shared = await compact(ScriptedProvider([reply("S")]), history, None, budget=budget,
                           original_task=TASK, tools=TOOLS, memory=None, counter=counter)
    fresh = await compact(ScriptedProvider([reply("S")]), history, None, budget=budget,
                          original_task=TASK, tools=TOOLS, memory=None)
    assert shared is not None and fresh is not None
    assert (shared.tokens_before, shared.tokens_after, shared.messages_summarised) == (
        fresh.tokens_before, fresh.tokens_after, fresh.messages_summarised)
    assert len(counter) >= len(history)  # the history's estimates now live in the session's counter


async def test_failure_after_a_cured_overflow_counts_every_call() -> None:
    overflow = APIError("maximum context length exceeded", status=400, context_overflow=True)
    first = reply("first half", usage=Usage(5, 1, 6))
    provider = ScriptedProvider([overflow, first, APIError("boom", status=500)])
    with pytest.raises(CompactionFailed, match="boom") as info:
        await summarize(provider, previous=None, older=_history(10), request_budget=BUDGET.limit)
    assert len(provider.requests) == 3
    assert info.value.usages == (Usage(5, 1, 6),) and info.value.failed_calls == 2


async def test_bad_answer_after_a_cured_overflow_keeps_the_failed_count() -> None:
    overflow = APIError("maximum context length exceeded", status=400, context_overflow=True)
    provider = ScriptedProvider([overflow, reply("first half"), reply("", finish="stop")])
    with pytest.raises(CompactionFailed, match="empty") as info:
        await summarize(provider, previous=None, older=_history(10), request_budget=BUDGET.limit)
    assert info.value.usages == (None, None) and info.value.failed_calls == 1


async def test_window_too_small_fails_without_a_request() -> None:
    provider = ScriptedProvider([])
    with pytest.raises(CompactionFailed, match="too small") as info:
        await summarize(provider, previous=None, older=_history(2), request_budget=5_000)
    assert provider.requests == []
    assert info.value.failed_calls == 0 and info.value.usages == ()


async def test_nothing_to_compact_returns_none_without_a_model_call() -> None:
    provider = ScriptedProvider([])
    short = _history(1)
    assert await compact(provider, short, None, budget=BUDGET, original_task=TASK, tools=TOOLS, memory=None) is None
    checkpoint = Checkpoint("s", len(short) - 1)
    assert await compact(provider, short, checkpoint, budget=BUDGET, original_task=TASK, tools=TOOLS,
                         memory=None) is None
    assert provider.requests == []


async def test_compact_result_and_second_compaction_updates_the_first_summary() -> None:
    provider = ScriptedProvider([reply("FIRST SUMMARY", usage=Usage(7, 3, 10)), reply("SECOND SUMMARY")])
    budget = Budget(262_144, keep_recent=3_000)
    memory = Message.user("<project-memory>m</project-memory>")
    history = _history(20)
    first = await compact(provider, history, None, budget=budget, original_task=TASK, tools=TOOLS, memory=memory)
    assert first is not None
    cut = first.checkpoint.first_kept
    assert first.checkpoint.summary == "FIRST SUMMARY"
    assert first.messages_summarised == cut and 0 < cut < len(history)
    assert history[cut].role != "tool"
    assert first.tokens_after < first.tokens_before
    assert first.usages == (Usage(7, 3, 10),) and first.failed_calls == 0
    assert serialize(history[:cut]) in provider.prompt(0)

    history += _history(20)[1:]
    second = await compact(provider, history, first.checkpoint, budget=budget, original_task=TASK,
                           tools=TOOLS, memory=memory)
    assert second is not None
    assert second.checkpoint == Checkpoint("SECOND SUMMARY", second.messages_summarised)
    assert second.checkpoint.first_kept > cut
    prompt = provider.prompt(1)
    assert "<existing-summary>\nFIRST SUMMARY\n</existing-summary>" in prompt
    # Exactly the messages between the old checkpoint and the new cut are sent.
    assert _conversation_of(prompt) == serialize(history[cut : second.checkpoint.first_kept])


def test_build_context_order_with_and_without_checkpoint() -> None:
    system = Message.system("sys")
    memory = Message.user("<project-memory>m</project-memory>")
    history = _history(3)
    assert build_context(system, memory, None, history, TASK) == [system, memory, *history]
    assert build_context(system, None, None, history, TASK) == [system, *history]
    context = build_context(system, memory, Checkpoint("SUM", 5), history, TASK)
    assert context[:2] == [system, memory]
    summary = context[2]
    assert summary.role == "user"
    assert summary.content is not None
    assert summary.content.startswith("<context-summary>")
    assert summary.content.endswith("</context-summary>")
    assert f"<original-task>\n{TASK}\n</original-task>" in summary.content
    assert "SUM" in summary.content
    assert context[3:] == history[5:]
    # The same summary message object is reused across requests (cheap estimates).
    assert build_context(system, memory, Checkpoint("SUM", 5), history, TASK)[2] is summary


def test_build_context_without_memory_and_beyond_history() -> None:
    system = Message.system("sys")
    context = build_context(system, None, Checkpoint("S", 99), _history(1), None)
    assert len(context) == 2 and context[0] is system
    assert "<original-task>" not in (context[1].content or "")


def test_build_context_without_system_prompt_is_the_estimate_shape() -> None:
    memory = Message.user("<project-memory>m</project-memory>")
    history = _history(2)
    assert build_context(None, None, None, history, TASK) == history
    assert build_context(None, memory, None, history, TASK) == [memory, *history]
    context = build_context(None, memory, Checkpoint("SUM", 5), history, TASK)
    assert context[0] is memory and (context[1].content or "").startswith("<context-summary>")
    assert context[2:] == history[5:]
    assert build_context(None, None, Checkpoint("SUM", len(history)), history, None)[1:] == []


async def test_three_compactions_keep_the_original_task_and_a_constraint() -> None:
    provider = ScriptedProvider([echo_summariser] * 3)
    budget = Budget(262_144, keep_recent=2_000)
    system = Message.system("sys")
    history = _history(15)
    checkpoint = None
    for round_ in range(3):
        result = await compact(provider, history, checkpoint, budget=budget, original_task=TASK,
                               tools=TOOLS, memory=None)
        assert result is not None, round_
        checkpoint = result.checkpoint
        context = build_context(system, None, checkpoint, history, TASK)
        summary = context[1].content or ""
        assert TASK in summary
        assert "CONSTRAINT: never touch tests/legacy/" in summary
        history += [Message.user(f"round {round_}")] + _history(15)[1:]
    assert len(provider.requests) == 3
    # The first message of the session is long gone from the kept part ...
    assert checkpoint is not None and checkpoint.first_kept > 1
    # ... and later rounds only saw the constraint through the previous summary.
    assert TASK not in provider.prompt(2).split("<newer-conversation>")[1]
