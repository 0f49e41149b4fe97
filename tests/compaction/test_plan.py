"""Cut point over whole units, complete serialisation, chunking within a token budget."""

from __future__ import annotations

import pytest

from minicode.compaction.plan import chunk_messages, find_cut, serialize, split_utf8, unit_start
from minicode.provider.types import Message, ToolCall
from minicode.tokens import TokenCounter, estimate_message, estimate_messages, estimate_text


def _batch(prefix: str, n: int, result: str = "ok") -> list[Message]:
    calls = tuple(ToolCall(f"{prefix}{i}", "read", f'{{"path": "f{i}.py"}}') for i in range(n))
    return [Message(role="assistant", content=None, tool_calls=calls)] + [
        Message.tool(f"{prefix}{i}", result) for i in range(n)
    ]


def _history() -> list[Message]:
    return (
        [Message.user("task"), Message(role="assistant", content="looking")]
        + _batch("a", 3, "r" * 400)
        + [Message.user("more")]
        + _batch("b", 2, "s" * 400)
        + [Message(role="assistant", content="done")]
    )


def test_unit_start_groups_a_tool_batch() -> None:
    history = _history()
    # history: 0 user, 1 assistant, 2 calls a, 3-5 results, 6 user, 7 calls b, 8-9 results, 10 text
    assert unit_start(history, 11) == 10
    assert unit_start(history, 10) == 7
    assert unit_start(history, 7) == 6
    assert unit_start(history, 6) == 2
    assert unit_start(history, 1) == 0


def test_unit_start_with_orphaned_results() -> None:
    history = [Message.user("q"), Message.tool("x", "1"), Message.tool("y", "2")]
    assert unit_start(history, 3) == 1
    assert unit_start([Message.tool("x", "1")], 1) == 0


def test_cut_never_splits_a_tool_batch() -> None:
    history = _history()
    for keep in range(0, estimate_messages(history) + 50, 7):
        cut = find_cut(history, 0, keep)
        assert cut in {0, 1, 2, 6, 7, 10}, (keep, cut)
        assert cut == len(history) or history[cut].role != "tool"


def test_cut_keeps_units_up_to_the_budget() -> None:
    history = _history()
    tail = estimate_messages(history[7:])
    assert find_cut(history, 0, tail) == 7
    assert find_cut(history, 0, tail - 1) == 10  # batch b no longer fits
    assert find_cut(history, 0, estimate_messages(history)) == 0  # everything fits


def test_cut_with_a_session_counter_is_the_same_cut() -> None:
    history = _history()
    counter = TokenCounter()
    for keep in range(0, estimate_messages(history) + 50, 11):
        assert find_cut(history, 0, keep, counter) == find_cut(history, 0, keep)
    assert len(counter) == len(history)  # every message estimated once, then remembered


def test_cut_keeps_an_oversized_newest_unit() -> None:
    history = [Message.user("task")] + _batch("c", 2, "h" * 100_000)
    assert find_cut(history, 0, 10) == 1  # the whole batch, though far above 10 tokens
    single = [Message.user("a"), Message.user("b" * 90_000)]
    assert find_cut(single, 0, 10) == 1


def test_cut_respects_start_and_reports_nothing_to_compact() -> None:
    history = _history()
    assert find_cut(history, 7, 10) == 10
    assert find_cut(history, 10, 10) == 10  # only the newest unit after start: nothing to do
    assert find_cut(history, 0, 1_000_000) == 0
    assert find_cut([], 0, 10) == 0


def test_serialize_is_complete() -> None:
    big = "line\n" * 50_000
    history = [Message.user("do it")] + _batch("id", 1, big) + [Message.tool("zz", "")]
    text = serialize(history)
    assert "[user]\ndo it" in text
    assert '[tool call read id=id0] {"path": "f0.py"}' in text
    assert "[tool result for call id0]\n" + big in text
    assert "[tool result for call zz]" in text
    assert len(text) > len(big)


def test_split_utf8_of_cjk_text_stays_within_budget_and_loses_nothing() -> None:
    text = ("漢字仮名交じり文。" * 3000) + "\n" + ("한국어 텍스트 " * 2000)
    pieces = split_utf8(text, 1000)
    assert "".join(pieces) == text
    assert len(pieces) > 1
    assert all(0 < estimate_text(p) <= 1000 for p in pieces)
    for piece in pieces:
        piece.encode("utf-8")  # every piece is a complete UTF-8 string on its own


def test_split_utf8_prefers_newlines_and_handles_small_budgets() -> None:
    text = "\n".join("x" * 30 for _ in range(100))
    pieces = split_utf8(text, 100)
    assert "".join(pieces) == text
    assert all(p.endswith("\n") for p in pieces[:-1])
    assert split_utf8("", 10) == []
    assert split_utf8("短", 2) == ["短"]
    with pytest.raises(ValueError):
        split_utf8("短", 1)


def test_chunking_one_huge_tool_result() -> None:
    huge = "".join(f"row {i}: value é{i}\n" for i in range(60_000))
    history = [Message.user("analyse")] + _batch("h", 1, huge) + [Message.user("thanks")]
    pieces = chunk_messages(history, 4000)
    assert "".join(pieces) == serialize(history)
    assert len(pieces) >= estimate_text(huge) // 4000
    assert all(estimate_text(p) <= 4000 for p in pieces)


def test_chunking_a_cjk_history_packs_whole_messages() -> None:
    history = [Message.user("これはテスト" * 50) for _ in range(40)]
    per_message = estimate_message(history[0])
    pieces = chunk_messages(history, 5 * per_message)
    assert "".join(pieces) == serialize(history)
    assert all(estimate_text(p) <= 5 * per_message for p in pieces)
    assert all(p.startswith("[user]") for p in pieces)  # no message was split
    assert chunk_messages([], 100) == []
