"""Tests of the shared token estimate."""

from __future__ import annotations

import pytest

from minicode import tokens
from minicode.provider.types import Message, ToolCall, ToolSpec
from minicode.tokens import (
    CALL_OVERHEAD,
    MESSAGE_OVERHEAD,
    TokenCounter,
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


def test_module_functions_are_uncached() -> None:
    # Nothing module-level remembers estimates (style rule 4: no module singletons).
    assert not hasattr(estimate_message, "cache_info")
    assert not any(isinstance(v, dict) for k, v in vars(tokens).items() if k.startswith("_") and not k.startswith("__"))
    schema = {"type": "object"}
    specs = (ToolSpec("read", "Read a file.", schema),)
    first = estimate_tools(specs)
    schema["description"] = "z" * 400
    assert estimate_tools(specs) > first  # the same object is estimated afresh


def _counting(monkeypatch: pytest.MonkeyPatch) -> list[Message]:
    seen: list[Message] = []
    real = tokens.estimate_message

    def spy(message: Message) -> int:
        seen.append(message)
        return real(message)

    monkeypatch.setattr(tokens, "estimate_message", spy)
    return seen


def test_counter_estimates_each_message_object_once(monkeypatch: pytest.MonkeyPatch) -> None:
    history = [Message.user("cached " * 100), Message.user("other")]
    expected = [estimate_message(m) for m in history]
    seen = _counting(monkeypatch)
    counter = TokenCounter()
    assert counter.estimate_messages(history) == sum(expected)
    assert counter.estimate_message(history[0]) == expected[0]
    assert counter.estimate_messages(history) == sum(expected)
    assert seen == history  # each computed once, then remembered
    assert len(counter) == 2
    # An equal but distinct object is estimated again (identity keys: no hashing of long texts).
    twin = Message.user("other")
    assert counter.estimate_message(twin) == counter.estimate_message(history[1])
    assert seen[-1] is twin and len(counter) == 3


def test_counter_is_bounded_and_drops_the_oldest_first(monkeypatch: pytest.MonkeyPatch) -> None:
    seen = _counting(monkeypatch)
    counter = TokenCounter(max_messages=2)
    a, b, c = Message.user("a"), Message.user("b"), Message.user("c")
    for message in (a, b, c):
        counter.estimate_message(message)
    assert len(counter) == 2
    counter.estimate_message(c)
    counter.estimate_message(b)
    assert seen == [a, b, c]  # b and c still remembered
    counter.estimate_message(a)
    assert seen == [a, b, c, a]  # a was dropped when c came in


def test_counter_rejects_a_non_positive_bound() -> None:
    with pytest.raises(ValueError, match="positive"):
        TokenCounter(max_messages=0)


def test_counters_do_not_share_memory() -> None:
    message = Message.user("abcd")
    first, second = TokenCounter(), TokenCounter()
    first.estimate_message(message)
    assert len(first) == 1 and len(second) == 0


def test_estimate_messages_sums() -> None:
    messages = [Message.user("abcd"), Message.user("漢")]
    assert estimate_messages(messages) == 2 * MESSAGE_OVERHEAD + 1 + 2
    assert estimate_messages([]) == 0


def test_counter_memoises_tools_by_identity() -> None:
    counter = TokenCounter()
    schema = {"type": "object", "properties": {"path": {"type": "string"}}}
    specs = (ToolSpec("read", "Read a file.", schema),)
    first = counter.estimate_tools(specs)
    assert first == estimate_tools(specs) and first > estimate_text("Read a file.")
    schema["properties"]["extra"] = {"type": "string", "description": "z" * 400}
    # Same tuple object: the memoised value is returned (tool lists are immutable in use).
    assert counter.estimate_tools(specs) == first
    # A new tuple is estimated afresh and sees the bigger schema.
    assert counter.estimate_tools((specs[0],)) > first
    assert counter.estimate_tools(()) == 0
    for _ in range(20):  # bounded too: many distinct lists do not accumulate
        counter.estimate_tools((specs[0],))
    assert counter.estimate_tools(specs) > first  # the first entry was dropped long ago
