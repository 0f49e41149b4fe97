"""Repeated tool-call ids: renamed when a response arrives, and in histories written before."""

from __future__ import annotations

import httpx2
import pytest

from minicode.agent.repair import missing_results
from minicode.provider.call_ids import unique_call_ids, unique_history_ids
from minicode.provider.messages import parse_chat_response, validate_messages
from minicode.provider.types import ChatRequest, Message, StreamEnd, ToolCall

from .helpers import URL, chunk, collect, make_provider, sent_json, sse, sse_response
from .mock_router import Router


def call(cid: str, command: str = "ls") -> ToolCall:
    return ToolCall(id=cid, name="bash", arguments=f'{{"command": "{command}"}}')


def batch(*ids: str) -> Message:
    return Message(role="assistant", tool_calls=tuple(call(i, f"c{n}") for n, i in enumerate(ids)))


# --- the rule -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("ids", "expected"),
    [
        (["a", "b"], ["a", "b"]),
        (["same", "same"], ["same", "same-2"]),
        (["x", "x", "x"], ["x", "x-2", "x-3"]),
        (["a", "a-2", "a"], ["a", "a-2", "a-3"]),  # a name the response uses is never taken
        (["a", "a", "a-2"], ["a", "a-3", "a-2"]),
        (["call_0", "call_1", "call_0", "call_1"], ["call_0", "call_1", "call_0-2", "call_1-2"]),
        ([], []),
    ],
)
def test_unique_call_ids(ids: list[str], expected: list[str]) -> None:
    assert unique_call_ids(ids) == expected
    assert len(set(expected)) == len(expected)


def test_a_history_without_repeats_is_the_same_object() -> None:
    history = (Message.user("u"), batch("a", "b"), Message.tool("b", "B"), Message.tool("a", "A"),
               Message.user("again"), batch("a"), Message.tool("a", "x"))  # fmt: skip
    assert unique_history_ids(history) is history


def test_an_old_history_with_a_repeated_id_becomes_valid() -> None:
    """The k-th result for ``same`` answers the k-th call named ``same``; a later batch that
    reuses ``same`` legitimately is left alone, and nothing else changes."""
    history = (
        Message.user("u"), batch("same", "same"), Message.tool("same", "one"), Message.tool("same", "two"),
        Message(role="assistant", content="done"), Message.user("more"), batch("same"), Message.tool("same", "3"),
    )  # fmt: skip
    fixed = unique_history_ids(history)
    validate_messages(fixed)
    assert [c.id for c in fixed[1].tool_calls] == ["same", "same-2"]
    assert [(m.tool_call_id, m.content) for m in fixed[2:4]] == [("same", "one"), ("same-2", "two")]
    assert fixed[1].tool_calls[1].arguments == history[1].tool_calls[1].arguments
    assert list(fixed[4:]) == list(history[4:])
    assert unique_history_ids(fixed) is fixed  # repaired once means repaired


def test_an_old_trailing_batch_with_a_repeated_id_and_a_missing_result() -> None:
    """A crash after the first of two same-id calls: one synthetic result per missing call
    (counted per call, not per id), then the history is valid once renamed."""
    history = [Message.user("u"), batch("same", "same"), Message.tool("same", "one")]
    repaired = missing_results(history)
    assert [m.tool_call_id for m in repaired] == ["same"]
    validate_messages(unique_history_ids([*history, *repaired]))
    assert missing_results([*history, *repaired]) == []


def test_a_result_the_batch_never_asked_for_stays_invalid() -> None:
    history = (Message.user("u"), batch("same", "same"), Message.tool("same", "1"), Message.tool("same", "2"),
               Message.tool("same", "3"))  # fmt: skip
    with pytest.raises(Exception, match="not open"):
        validate_messages(unique_history_ids(history))


# --- on arrival ---------------------------------------------------------------------------


def test_a_json_answer_with_repeated_ids_is_renamed() -> None:
    raw = [{"id": "same", "type": "function", "function": {"name": "bash", "arguments": '{"command": "one"}'}},
           {"id": "same", "type": "function", "function": {"name": "bash", "arguments": '{"command": "two"}'}}]
    body = {"choices": [{"index": 0, "message": {"content": None, "tool_calls": raw}, "finish_reason": "tool_calls"}]}
    calls = parse_chat_response(body).message.tool_calls
    assert [(c.id, c.arguments) for c in calls] == [("same", '{"command": "one"}'), ("same-2", '{"command": "two"}')]


async def test_a_stream_with_repeated_ids_is_renamed_before_it_ends(router: Router) -> None:
    def piece(index: int, command: str) -> dict[str, object]:
        whole = {"index": index, "id": "same", "type": "function",
                 "function": {"name": "bash", "arguments": f'{{"command": "{command}"}}'}}
        return chunk({"tool_calls": [whole]})

    router.post(URL).mock(return_value=sse_response(sse(piece(0, "one"), piece(1, "two"), chunk(finish="tool_calls"))))
    events = await collect(make_provider())
    end = events[-1]
    assert isinstance(end, StreamEnd)
    assert [c.id for c in end.response.message.tool_calls] == ["same", "same-2"]


async def test_an_old_history_is_sent_renamed(router: Router) -> None:
    """A session written by an older version (two calls ``same``, two results ``same``) is
    sent as a valid conversation, the same way every time."""
    route = router.post(URL).mock(return_value=sse_response(sse(chunk({"content": "ok"}), chunk(finish="stop"))))
    old = ChatRequest(messages=(Message.user("u"), batch("same", "same"), Message.tool("same", "one"),
                                Message.tool("same", "two"), Message(role="assistant", content="done"),
                                Message.user("next")))  # fmt: skip
    await collect(make_provider(), old)
    sent = sent_json(route)["messages"]
    assert [c["id"] for c in sent[1]["tool_calls"]] == ["same", "same-2"]
    assert [(m["tool_call_id"], m["content"]) for m in sent[2:4]] == [("same", "one"), ("same-2", "two")]


async def test_an_old_history_is_sent_renamed_without_streaming(router: Router) -> None:
    ok = {"choices": [{"index": 0, "message": {"content": "ok"}, "finish_reason": "stop"}]}
    route = router.post(URL).mock(return_value=httpx2.Response(200, json=ok))
    old = ChatRequest(messages=(Message.user("u"), batch("same", "same"), Message.tool("same", "one"),
                                Message.tool("same", "two"), Message.user("next")))  # fmt: skip
    assert (await make_provider().chat(old)).message.content == "ok"
    assert [m["tool_call_id"] for m in sent_json(route)["messages"][2:4]] == ["same", "same-2"]
