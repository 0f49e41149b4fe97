"""Budget, calibrated estimate and the compaction trigger."""

from __future__ import annotations

import pytest

from minicode.compaction.trigger import (
    DEFAULT_KEEP_RECENT,
    DEFAULT_RESERVE,
    Budget,
    Calibration,
    estimate_context,
    should_compact,
)
from minicode.provider.types import Message, ToolSpec
from minicode.tokens import TokenCounter, estimate_message, estimate_messages, estimate_tools

TOOLS = (ToolSpec("read", "Read a file.", {"type": "object", "properties": {}}),)


def test_budget_defaults_and_limit() -> None:
    budget = Budget(262_144)
    assert (budget.reserve, budget.keep_recent) == (16 * 1024, 20_000)
    assert budget.limit == 262_144 - 16_384
    assert Budget.for_window(262_144) == budget


def test_budget_for_small_window_keeps_a_positive_limit() -> None:
    budget = Budget.for_window(8192)
    assert budget.reserve == 2048 and budget.limit == 6144
    assert 0 < budget.keep_recent < budget.limit
    assert Budget.for_window(65_536) == Budget(65_536, DEFAULT_RESERVE, DEFAULT_KEEP_RECENT)


def test_budget_rejects_nonsense() -> None:
    with pytest.raises(ValueError):
        Budget(0)
    with pytest.raises(ValueError):
        Budget(1000, reserve=-1)


def test_threshold_is_strictly_above_the_limit() -> None:
    budget = Budget(100_000, reserve=10_000)
    assert not should_compact(89_999, budget)
    assert not should_compact(90_000, budget)
    assert should_compact(90_001, budget)


def _context(n: int) -> list[Message]:
    return [Message.system("sys")] + [Message.user(f"message {i} " + "x" * 96) for i in range(n)]


def test_uncalibrated_estimate_is_the_full_local_estimate() -> None:
    context = _context(10)
    assert estimate_context(context, TOOLS, None) == estimate_messages(context) + estimate_tools(TOOLS)


def test_uncalibrated_trigger_just_below_and_just_above() -> None:
    context = _context(10)
    size = estimate_context(context, TOOLS, None)
    assert not should_compact(size, Budget(size + 16_384))
    assert should_compact(size, Budget(size - 1 + 16_384))


def test_calibrated_estimate_adds_only_messages_since() -> None:
    context = _context(10)
    calibration = Calibration.of(context, TOOLS, prompt_tokens=5_000)
    grown = context + [Message.user("a" * 400), Message.tool("c1", "b" * 40)]
    expected = 5_000 + estimate_message(grown[-2]) + estimate_message(grown[-1])
    assert estimate_context(grown, TOOLS, calibration) == expected
    assert estimate_context(context, TOOLS, calibration) == 5_000


def test_calibrated_trigger_just_below_and_just_above() -> None:
    context = _context(5)
    calibration = Calibration.of(context, TOOLS, prompt_tokens=200_000)
    grown = context + [Message.user("z" * 4000)]  # 1000 + overhead tokens locally
    size = estimate_context(grown, TOOLS, calibration)
    assert size == 200_000 + estimate_message(grown[-1])
    assert not should_compact(size, Budget(size + DEFAULT_RESERVE))
    assert should_compact(size, Budget(size + DEFAULT_RESERVE - 1))


def test_plain_calibration_only_checks_length() -> None:
    context = _context(4)
    calibration = Calibration(prompt_tokens=1234, context_len=len(context))
    assert estimate_context(context + [Message.user("abcd")], TOOLS, calibration) == 1234 + 5


def test_calibration_that_does_not_fit_falls_back_to_local_estimate() -> None:
    context = _context(6)
    calibration = Calibration.of(context, TOOLS, prompt_tokens=99_999)
    # After a compaction the context is shorter ...
    shorter = context[:3]
    assert estimate_context(shorter, TOOLS, calibration) == estimate_messages(shorter) + estimate_tools(TOOLS)
    # ... or as long but with a different summary/memory message near the start.
    changed = [context[0], Message.user("<context-summary>new</context-summary>")] + context[2:] + [Message.user("q")]
    local = estimate_messages(changed) + estimate_tools(TOOLS)
    assert estimate_context(changed, TOOLS, calibration) == local
    # ... or the last calibrated message differs (history rebuilt differently).
    rebuilt = context[:-1] + [Message.user("other"), Message.user("q")]
    assert estimate_context(rebuilt, TOOLS, calibration) == estimate_messages(rebuilt) + estimate_tools(TOOLS)


def test_calibration_matches_equal_but_rebuilt_messages() -> None:
    context = _context(6)
    calibration = Calibration.of(context, TOOLS, prompt_tokens=7_000)
    rebuilt = [Message.system("sys")] + context[1:]  # system prompt regenerated: equal value
    assert estimate_context(rebuilt, TOOLS, calibration) == 7_000


def test_calibration_corrects_for_a_different_tool_list() -> None:
    context = _context(3)
    calibration = Calibration.of(context, TOOLS, prompt_tokens=3_000)
    assert estimate_context(context, (), calibration) == 3_000 - estimate_tools(TOOLS)


def test_calibration_of_a_short_context() -> None:
    context = [Message.system("s"), Message.user("u")]
    calibration = Calibration.of(context, (), prompt_tokens=100)
    assert estimate_context(context + [Message.user("abcd")], (), calibration) == 100 + 5
    other = [Message.system("changed"), context[1]]
    assert estimate_context(other, (), calibration) == estimate_messages(other)
    assert estimate_context([], (), Calibration(100, 0)) == 0


def test_a_session_counter_gives_the_same_estimates_and_remembers_them() -> None:
    context = _context(10)
    counter = TokenCounter()
    assert estimate_context(context, TOOLS, None, counter) == estimate_context(context, TOOLS, None)
    assert len(counter) == len(context)
    calibration = Calibration.of(context, TOOLS, prompt_tokens=5_000, counter=counter)
    assert calibration == Calibration.of(context, TOOLS, prompt_tokens=5_000)
    grown = context + [Message.user("a" * 400)]
    assert estimate_context(grown, TOOLS, calibration, counter) == 5_000 + estimate_message(grown[-1])
    assert len(counter) == len(grown)
    changed = [Message.system("other")] + grown[1:]  # calibration no longer fits: full estimate
    assert estimate_context(changed, (), calibration, counter) == estimate_messages(changed)
