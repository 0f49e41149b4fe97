"""Coalescing streamed fragments into delta events (cli/frontends/json/deltas.py), on a simulated clock."""

from __future__ import annotations

import random

import pytest

from minicode.agent.events import AssistantDone, TaskStatus, TurnFinished, TurnStarted
from minicode.agent.stats import TaskStats
from minicode.cli.frontends.json.deltas import FLOOR_BYTES, HARD_DELAY, MAX_DELAY, MIN_BYTES, DeltaCoalescer, Fragment
from minicode.cli.frontends.json.event_json import EventMapper, SessionInfo, encode_line
from minicode.provider.types import Usage
from tests.support.events import check_stream


def test_small_fragments_wait_and_come_out_whole_and_in_order():
    c = DeltaCoalescer(min_bytes=10, min_interval=0.05, max_delay=1.0, floor_bytes=4)
    assert c.add("text", "abc", 0.0) == [] and c.add("text", "def", 0.01) == []
    assert c.deadline == 1.0
    assert c.add("text", "ghijk", 0.1) == [Fragment("text", "abcdefghijk")]
    assert c.deadline is None and c.flush() == []


def test_enough_bytes_still_wait_for_the_minimum_interval():
    c = DeltaCoalescer(min_bytes=4, min_interval=0.05, max_delay=1.0)
    assert c.add("text", "aaaa", 1.0) == [Fragment("text", "aaaa")]
    assert c.add("text", "bbbb", 1.01) == []  # 10 ms after the last piece
    assert c.add("text", "cc", 1.06) == [Fragment("text", "bbbbcc")]


def test_a_piece_worth_its_envelope_waits_at_most_max_delay():
    c = DeltaCoalescer(min_bytes=1000, min_interval=0.05, max_delay=0.5, floor_bytes=8, hard_delay=3.0)
    c.add("text", "slow", 2.0)
    assert c.deadline == 5.0  # too little to be worth an event yet
    c.add("text", " model", 2.3)
    assert c.deadline == 2.5
    assert c.due(2.49) == []
    assert c.due(2.5) == [Fragment("text", "slow model")]
    assert c.due(9.0) == [] and c.deadline is None


def test_a_tiny_piece_waits_at_most_hard_delay():
    c = DeltaCoalescer(min_bytes=1000, max_delay=0.5, floor_bytes=100, hard_delay=3.0)
    c.add("text", "hm", 1.0)
    assert c.due(3.9) == [] and c.due(4.0) == [Fragment("text", "hm")]


def test_a_piece_that_grows_past_the_floor_late_goes_out_with_the_next_fragment():
    c = DeltaCoalescer(min_bytes=1000, max_delay=0.5, floor_bytes=6, hard_delay=3.0)
    c.add("text", "abc", 0.0)
    assert c.add("text", "def", 0.7) == [Fragment("text", "abcdef")]


def test_each_kind_and_call_is_held_apart_and_released_together_in_order_of_appearance():
    c = DeltaCoalescer(min_bytes=1000)
    assert c.add("reasoning", "think", 0.0) == [] and c.add("text", "say", 0.01) == []
    assert c.add("reasoning", "ing", 0.02) == [] and c.add("tool_output", "out1", 0.03, "c1") == []
    assert c.add("tool_output", "out2", 0.04, "c2") == [] and c.add("tool_output", "+", 0.05, "c1") == []
    assert c.flush() == [
        Fragment("reasoning", "thinking"), Fragment("text", "say"),
        Fragment("tool_output", "out1+", "c1"), Fragment("tool_output", "out2", "c2"),
    ]  # fmt: skip
    assert c.flush() == [] and c.deadline is None


def test_one_kind_reaching_min_bytes_releases_every_kind_held():
    c = DeltaCoalescer(min_bytes=8, min_interval=0.0)
    assert c.add("text", "abcd", 0.0) == [] and c.add("reasoning", "wxyz", 0.0) == []
    assert c.add("reasoning", "1234", 0.0) == [Fragment("text", "abcd"), Fragment("reasoning", "wxyz1234")]


def test_the_earliest_deadline_of_the_kinds_held_decides():
    c = DeltaCoalescer(min_bytes=1000, max_delay=0.5, floor_bytes=4, hard_delay=3.0)
    c.add("text", "ab", 1.0)  # under the floor: waits up to 3 s
    c.add("reasoning", "abcdef", 2.0)  # worth its envelope: up to 0.5 s
    assert c.deadline == 2.5
    assert c.due(2.5) == [Fragment("text", "ab"), Fragment("reasoning", "abcdef")]


def test_interleaved_kinds_cost_an_event_per_min_bytes_not_per_chunk():
    """A server alternating 4-character reasoning and text chunks (J8): about one delta per
    MIN_BYTES of each kind, not one per chunk."""
    c = DeltaCoalescer()
    pieces: list[Fragment] = []
    for i in range(2000):
        pieces += c.add("reasoning", "r" * 4, i * 0.001) + c.add("text", "t" * 4, i * 0.001)
    pieces += c.flush()
    assert "".join(p.text for p in pieces if p.kind == "text") == "t" * 8000
    assert "".join(p.text for p in pieces if p.kind == "reasoning") == "r" * 8000
    assert len(pieces) <= 2 * 8000 // MIN_BYTES + 2


def test_empty_fragments_are_nothing():
    c = DeltaCoalescer()
    assert c.add("text", "", 0.0) == [] and c.deadline is None


def test_bytes_not_characters_count():
    c = DeltaCoalescer(min_bytes=8, min_interval=0.0)
    assert c.add("text", "ééé", 0.0) == []  # 6 bytes
    assert c.add("text", "é", 0.1) == [Fragment("text", "éééé")]  # 8 bytes


# --- the size of a stream for a 2,000-token answer ----------------------------------------

INFO = SessionInfo("3f1b7c2e-1111-4222-8333-444455556666", "/home/user/project", "gpt-4.1",
                   ("read", "ls", "glob", "grep", "write", "edit", "bash"), False, 0, "stream-json", "deny", "0.1.0",
                   262144, "default (unknown)")


def _tokens(count: int) -> list[str]:
    rng = random.Random(7)
    words = "the of a function returns value when test file module error session stream token code".split()
    return [("\n" if rng.random() < 0.08 else " ") + rng.choice(words) for _ in range(count)]


def _stream(tokens: list[str], tokens_per_second: float | None) -> tuple[str, str]:
    """stdout of a one-shot stream-json run whose answer streams at the given rate (None: at once)."""
    mapper, deltas = EventMapper(stream=True), DeltaCoalescer()
    out = [mapper.opened(INFO), *mapper.event(TurnStarted("write it"))]
    now = 0.0
    for token in tokens:
        now += 1 / tokens_per_second if tokens_per_second else 0.0
        while deltas.deadline is not None and deltas.deadline <= now:  # the runner's timer
            out += [mapper.delta(p.kind, p.text) for p in deltas.due(deltas.deadline)]
        out += [mapper.delta(p.kind, p.text) for p in deltas.add("text", token, now)]
    out += [mapper.delta(p.kind, p.text) for p in deltas.flush(now)]
    answer = "".join(tokens)
    out += mapper.event(AssistantDone(answer, "", 0, usage=Usage(900, 2000, 2900), finish_reason="stop"))
    stats = TaskStats(wall_seconds=now, model_calls=1, calls_with_usage=1, prompt_tokens=900,
                      completion_tokens=2000, total_tokens=2900)
    out += mapper.event(TurnFinished(TaskStatus.DONE, answer, stats))
    return answer, "".join(encode_line(p).decode() for p in out)


@pytest.mark.parametrize("rate", [10, 20, 50, 200, 1000, None])
def test_a_2000_token_answer_costs_at_most_three_times_its_size(rate):
    answer, stdout = _stream(_tokens(2000), rate)
    events = check_stream(stdout)
    deltas = [e for e in events if e["type"] == "delta"]
    assert "".join(d["text"] for d in deltas) == answer  # every byte once, in order
    assert events[-1]["answer"] == answer
    assert len(stdout.encode()) <= 3 * len(answer.encode())


@pytest.mark.parametrize("rate,longest", [(5, HARD_DELAY), (40, MAX_DELAY), (500, MAX_DELAY)])
def test_no_byte_waits_longer_than_the_delays(rate, longest):
    """A slow model's text waits at most HARD_DELAY; once a piece is worth its envelope
    (FLOOR_BYTES), at most MAX_DELAY; a fast one goes out in MIN_BYTES pieces."""
    deltas = DeltaCoalescer()
    now, held_since, waits, sizes = 0.0, None, [], []
    for token in _tokens(400):
        now += 1 / rate
        if deltas.deadline is not None and deltas.deadline <= now:
            waits.append(deltas.deadline - held_since)
            sizes += [len(p.text.encode()) for p in deltas.due(deltas.deadline)]
            held_since = None
        pieces = deltas.add("text", token, now)
        if pieces:
            waits.append(now - held_since)
            sizes += [len(p.text.encode()) for p in pieces]
            held_since = None
        held_since = now if held_since is None and deltas.deadline is not None else held_since
    assert waits and max(waits) <= longest + 1e-9
    if longest == MAX_DELAY:
        assert min(sizes) >= FLOOR_BYTES
    if rate == 500:
        assert min(sizes) >= MIN_BYTES


def _interleaved_stream(chunks: int) -> tuple[str, str, str]:
    """stdout of a stream-json run whose server alternates 4-character reasoning and text chunks."""
    mapper, deltas = EventMapper(stream=True), DeltaCoalescer()
    out = [mapper.opened(INFO), *mapper.event(TurnStarted("write it"))]
    tokens = _tokens(chunks)
    reasoning, text = "".join(tokens[: chunks // 2]), "".join(tokens[chunks // 2 :])
    for i in range(0, max(len(reasoning), len(text)), 4):
        now = i / 4000
        for kind, source in (("reasoning", reasoning), ("text", text)):
            out += [mapper.delta(p.kind, p.text) for p in deltas.add(kind, source[i : i + 4], now)]
    out += [mapper.delta(p.kind, p.text) for p in deltas.flush()]
    out += mapper.event(AssistantDone(text, reasoning, 0, usage=Usage(900, 2000, 2900), finish_reason="stop"))
    out += mapper.event(TurnFinished(TaskStatus.DONE, text, TaskStats(wall_seconds=1.0, model_calls=1)))
    return reasoning, text, "".join(encode_line(p).decode() for p in out)


def test_an_interleaved_2000_token_answer_costs_at_most_three_times_its_size():
    reasoning, text, stdout = _interleaved_stream(2000)
    events = check_stream(stdout)
    deltas = [e for e in events if e["type"] == "delta"]
    assert "".join(d["text"] for d in deltas if d["kind"] == "text") == text
    assert "".join(d["text"] for d in deltas if d["kind"] == "reasoning") == reasoning
    assistant = next(e for e in events if e["type"] == "assistant")
    assert "text" not in assistant and "reasoning" not in assistant  # the deltas add up
    assert len(stdout.encode()) <= 3 * len((reasoning + text).encode())
