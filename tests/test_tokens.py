"""Tests of the shared token estimate."""

from __future__ import annotations

from minicode.provider.types import Message, ToolCall, ToolSpec
from minicode.tokens import (
    CALL_OVERHEAD,
    MESSAGE_OVERHEAD,
    estimate_message,
    estimate_messages,
    estimate_text,
    estimate_tools,
)


def test_ascii_is_a_quarter_token_rounded_up() -> None:
    assert estimate_text("") == 0
    assert estimate_text("a") == 1
    assert estimate_text("abcd") == 1
    assert estimate_text("abcde") == 2
    assert estimate_text("x" * 400) == 100


def test_non_ascii_costs_two_per_character() -> None:
    assert estimate_text("漢字") == 4
    assert estimate_text("é") == 2
    assert estimate_text("ab漢") == 1 + 2  # two ASCII chars round up to one token
    assert estimate_text("🙂") == 2
    assert estimate_text("a\udc80") == 1 + 2  # a lone surrogate is still one character


def test_message_counts_content_calls_and_id_but_not_reasoning() -> None:
    plain = Message(role="assistant", content="x" * 40)
    assert estimate_message(plain) == MESSAGE_OVERHEAD + 10
    thinking = Message(role="assistant", content="x" * 40, reasoning="y" * 4000)
    assert estimate_message(thinking) == estimate_message(plain)
    call = ToolCall(id="call_1", name="read", arguments='{"path": "a.py"}')
    calling = Message(role="assistant", content=None, tool_calls=(call,))
    expected = MESSAGE_OVERHEAD + CALL_OVERHEAD + estimate_text("call_1") + 1 + estimate_text(call.arguments)
    assert estimate_message(calling) == expected
    result = Message.tool("call_1", "")
    assert estimate_message(result) == MESSAGE_OVERHEAD + estimate_text("call_1")


def test_message_estimate_is_cached_per_message() -> None:
    message = Message.user("cached " * 100)
    first = estimate_message(message)
    hits = estimate_message.cache_info().hits
    assert estimate_message(message) == first
    assert estimate_message.cache_info().hits == hits + 1


def test_estimate_messages_sums() -> None:
    messages = [Message.user("abcd"), Message.user("漢")]
    assert estimate_messages(messages) == 2 * MESSAGE_OVERHEAD + 1 + 2
    assert estimate_messages([]) == 0


def test_tools_are_estimated_and_cached_by_identity() -> None:
    schema = {"type": "object", "properties": {"path": {"type": "string"}}}
    specs = (ToolSpec("read", "Read a file.", schema),)
    first = estimate_tools(specs)
    assert first > estimate_text("Read a file.")
    schema["properties"]["extra"] = {"type": "string", "description": "z" * 400}
    # Same tuple object: the cached value is returned (tool lists are immutable in use).
    assert estimate_tools(specs) == first
    # A new tuple is estimated afresh and sees the bigger schema.
    assert estimate_tools((specs[0],)) > first
    assert estimate_tools(()) == 0
