"""History validation (SPEC 3.3) and the JSON shapes of messages, tools and answers."""

from __future__ import annotations

import pytest

from minicode.errors import APIError, ProtocolError
from minicode.provider.messages import (
    content_parts,
    parse_chat_response,
    parse_usage,
    reasoning_of,
    to_openai,
    tool_spec_to_openai,
    validate_messages,
)
from minicode.provider.types import Message, ToolCall, ToolSpec, Usage


def call(cid: str, name: str = "read", args: str = "{}") -> ToolCall:
    return ToolCall(id=cid, name=name, arguments=args)


def assistant(*calls: ToolCall, content: str | None = None) -> Message:
    return Message(role="assistant", content=content, tool_calls=calls)


# --- validate_messages ----------------------------------------------------------------


def test_valid_history_with_batch_results_in_any_order() -> None:
    validate_messages(
        [
            Message.system("s"),
            Message.user("u"),
            assistant(call("a"), call("b")),
            Message.tool("b", "B"),
            Message.tool("a", ""),
            Message(role="assistant", content="done"),
            Message.user("again"),
            assistant(call("a")),  # a later batch may reuse an id (per-response numbering)
            Message.tool("a", "x"),
        ]
    )


def test_unknown_role_is_rejected() -> None:
    with pytest.raises(ProtocolError, match="message 1 has unknown role 'robot'"):
        validate_messages([Message.user("u"), Message(role="robot", content="x")])  # type: ignore[arg-type]


def test_user_inside_unfinished_batch_names_index_and_call() -> None:
    history = [Message.user("u"), assistant(call("a"), call("b")), Message.tool("a", "x"), Message.user("hey")]
    with pytest.raises(ProtocolError, match=r"message 3 \(user\).*'b' from message 1"):
        validate_messages(history)


def test_tool_without_open_call() -> None:
    with pytest.raises(ProtocolError, match=r"message 1 \(tool\) answers tool call 'zzz'"):
        validate_messages([Message.user("u"), Message.tool("zzz", "x")])


def test_tool_result_twice_is_rejected() -> None:
    history = [Message.user("u"), assistant(call("a")), Message.tool("a", "1"), Message.tool("a", "2")]
    with pytest.raises(ProtocolError, match=r"message 3 \(tool\) answers tool call 'a', which is not open"):
        validate_messages(history)


def test_missing_result_at_end() -> None:
    with pytest.raises(ProtocolError, match="tool call 'a' from message 1 has no tool result"):
        validate_messages([Message.user("u"), assistant(call("a"))])


def test_duplicate_id_in_batch() -> None:
    with pytest.raises(ProtocolError, match="message 1: tool call id 'a' is repeated"):
        validate_messages([Message.user("u"), assistant(call("a"), call("a"))])


def test_empty_call_id_and_name() -> None:
    with pytest.raises(ProtocolError, match="message 1 has a tool call without an id"):
        validate_messages([Message.user("u"), assistant(call(""))])
    with pytest.raises(ProtocolError, match="message 1: tool call 'a' has no name"):
        validate_messages([Message.user("u"), assistant(call("a", name=""))])


def test_tool_message_without_id_or_content() -> None:
    with pytest.raises(ProtocolError, match="message 0 \\(tool\\) has no tool_call_id"):
        validate_messages([Message(role="tool", content="x")])
    with pytest.raises(ProtocolError, match="has no content"):
        validate_messages([assistant(call("a")), Message(role="tool", content=None, tool_call_id="a")])


def test_assistant_inside_unfinished_batch() -> None:
    with pytest.raises(ProtocolError, match=r"message 2 \(assistant\)"):
        validate_messages([Message.user("u"), assistant(call("a")), assistant(call("b"))])


# --- to_openai ------------------------------------------------------------------------


def test_assistant_tool_call_message_keeps_none_content_and_drops_reasoning() -> None:
    msg = Message(role="assistant", content=None, tool_calls=(call("a", "bash", ""),), reasoning="hmm")
    assert to_openai(msg) == {
        "role": "assistant",
        "content": None,
        "tool_calls": [{"id": "a", "type": "function", "function": {"name": "bash", "arguments": "{}"}}],
    }


def test_tool_empty_content_kept_and_plain_messages() -> None:
    assert to_openai(Message.tool("a", "")) == {"role": "tool", "tool_call_id": "a", "content": ""}
    assert to_openai(Message.user("hi")) == {"role": "user", "content": "hi"}
    assert to_openai(Message(role="assistant", content="ok", reasoning="r")) == {"role": "assistant", "content": "ok"}


def test_tool_spec_to_openai() -> None:
    spec = ToolSpec("read", "Read a file", {"type": "object", "properties": {"path": {"type": "string"}}})
    assert tool_spec_to_openai(spec) == {
        "type": "function",
        "function": {"name": "read", "description": "Read a file", "parameters": dict(spec.parameters)},
    }


# --- response parsing -----------------------------------------------------------------


def test_reasoning_precedence_never_twice() -> None:
    assert reasoning_of({"reasoning_content": "A", "reasoning": "A", "reasoning_details": [{"text": "A"}]}) == "A"
    assert reasoning_of({"reasoning": "B", "reasoning_details": [{"text": "B"}]}) == "B"
    assert reasoning_of({"reasoning_details": [{"type": "reasoning.text", "text": "C"}, {"text": "D"}]}) == "CD"
    assert reasoning_of({"content": "x"}) == ""


def test_content_parts_split_text_and_thinking() -> None:
    parts = [
        {"type": "thinking", "thinking": [{"type": "text", "text": "plan "}]},  # Mistral
        {"type": "text", "text": "Hello"},
        {"type": "reasoning", "text": "more"},
        {"type": "image_url", "image_url": {}},
    ]
    assert content_parts(parts) == ("Hello", "plan more")
    assert content_parts("plain") == ("plain", "")
    assert content_parts(None) == ("", "")


def test_parse_usage_rules() -> None:
    assert parse_usage(None) is None
    assert parse_usage({"prompt_tokens": 3, "completion_tokens": 4, "total_tokens": 0}) == Usage(3, 4, 7)
    assert parse_usage({"prompt_tokens": 3, "completion_tokens": 4}) == Usage(3, 4, 7)
    assert parse_usage({"prompt_tokens": 3, "completion_tokens": 4, "total_tokens": 99}) == Usage(3, 4, 99)
    assert parse_usage({"foo": 1}) is None


def test_parse_chat_response_full() -> None:
    data = {
        "choices": [
            {
                "index": 0,
                "finish_reason": "tool_calls",
                "message": {
                    "role": "assistant",
                    "content": None,
                    "reasoning_content": "think",
                    "tool_calls": [
                        {"id": "c1", "type": "function", "function": {"name": "ls", "arguments": ""}},
                        {"id": "c2", "function": {"name": "read", "arguments": {"path": "a"}}},
                    ],
                },
            }
        ],
        "usage": {"prompt_tokens": 10, "completion_tokens": 2, "total_tokens": 12},
    }
    resp = parse_chat_response(data)
    assert resp.message.content is None
    assert resp.message.reasoning == "think"
    assert resp.message.tool_calls == (ToolCall("c1", "ls", "{}"), ToolCall("c2", "read", '{"path": "a"}'))
    assert resp.finish_reason == "tool_calls"
    assert resp.usage == Usage(10, 2, 12)


def test_parse_chat_response_list_content() -> None:
    data = {"choices": [{"message": {"content": [{"type": "thinking", "thinking": "t"}, {"type": "text", "text": "x"}]}}]}
    resp = parse_chat_response(data)
    assert (resp.message.content, resp.message.reasoning) == ("x", "t")


@pytest.mark.parametrize(
    ("data", "match"),
    [
        ([], "not a JSON object"),
        ({"choices": []}, "no choice with index 0"),
        ({"choices": [{"index": 0}]}, "no message"),
        ({"choices": [{"message": {"tool_calls": [{"function": {"name": "x"}}]}}]}, "has no id"),
        ({"choices": [{"message": {"tool_calls": [{"id": "a", "type": "web", "function": {"name": "x"}}]}}]}, "type"),
    ],
)
def test_parse_chat_response_malformed(data: object, match: str) -> None:
    with pytest.raises(APIError, match=match):
        parse_chat_response(data)


def test_consecutive_user_messages_are_merged_for_the_wire() -> None:
    from minicode.provider.messages import merge_user_runs

    call = Message(role="assistant", content=None, tool_calls=(ToolCall("c1", "ls", "{}"),))
    messages = [Message.system("s"), Message.user("memory"), Message.user("summary"), Message.user("task"),
                call, Message.tool("c1", "x"), Message.user("next")]
    merged = merge_user_runs(messages)
    assert [m.role for m in merged] == ["system", "user", "assistant", "tool", "user"]
    assert merged[1].content == "memory\n\nsummary\n\ntask"
    assert merged[3:] == messages[5:]
    assert merge_user_runs([]) == []


def test_a_call_without_a_name_is_kept_as_an_unknown_tool_with_the_others() -> None:
    from minicode.provider.messages import MISSING_NAME

    data = {"choices": [{"message": {"tool_calls": [
        {"id": "a", "function": {"name": "read", "arguments": '{"path": "x"}'}},
        {"id": "b", "function": {"name": "", "arguments": "{}"}},
        {"id": "c", "function": {"arguments": "{}"}},
    ]}}]}
    calls = parse_chat_response(data).message.tool_calls
    assert [(c.id, c.name) for c in calls] == [("a", "read"), ("b", MISSING_NAME), ("c", MISSING_NAME)]
