"""Benchmark: token estimates, the budget check and the cut plan over long histories.

Run: .venv/bin/python bench/compaction.py

Prints
- estimate + plan (full local estimate, should_compact, find_cut) over a 2,000-message
  history of ~256 Ki estimated tokens: uncached (module functions), with a fresh session
  ``TokenCounter`` (cold) and with a warm one; target < 20 ms;
- chunking the older part for the summariser (serialise + split), for reference;
- the per-request cost of the calibrated budget check at 100 / 1,000 / 2,000 messages,
  which must stay flat (ratio 2,000 : 100 near 1) thanks to the session's TokenCounter.
"""

from __future__ import annotations

import statistics
import time
from typing import Callable

from minicode.compaction.context import build_context
from minicode.compaction.plan import chunk_messages, find_cut
from minicode.compaction.trigger import Budget, Calibration, estimate_context, should_compact
from minicode.provider.types import Message, ToolCall, ToolSpec
from minicode.tokens import TokenCounter, estimate_messages

TARGET_TOKENS = 256 * 1024
MESSAGES = 2_000
TOOLS = tuple(
    ToolSpec(name, f"The {name} tool.", {"type": "object", "properties": {"path": {"type": "string"}}})
    for name in ("read", "write", "edit", "bash", "ls", "glob", "grep")
)
SYSTEM = Message.system("You are minicode. Workspace: /tmp/ws. " * 20)
MEMORY = Message.user("<project-memory>\n- use pytest\n</project-memory>")


def make_history(n: int, chars: int) -> list[Message]:
    """n messages in cycles of user / assistant tool call / tool result / assistant text."""
    history: list[Message] = []
    for i in range(n):
        body = f"{i} " + ("lorem ipsum dolor sit amet " * (chars // 27 + 1))[:chars]
        match i % 4:
            case 0:
                history.append(Message.user(body))
            case 1:
                call = ToolCall(f"call_{i}", "read", f'{{"path": "src/file_{i}.py"}}')
                history.append(Message(role="assistant", content=None, tool_calls=(call,)))
            case 2:
                history.append(Message.tool(f"call_{i - 1}", body + body))
            case _:
                history.append(Message(role="assistant", content=body))
    return history


def sized_history() -> list[Message]:
    """A 2,000-message history whose local estimate is close to 256 Ki tokens."""
    chars = 400
    history = make_history(MESSAGES, chars)
    chars = int(chars * TARGET_TOKENS / estimate_messages(history))
    return make_history(MESSAGES, chars)


def timed(fn: Callable[[], object], repeat: int) -> float:
    """Median seconds of ``repeat`` runs."""
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def estimate_and_plan(history: list[Message], budget: Budget, counter: TokenCounter | None) -> None:
    context = build_context(SYSTEM, MEMORY, None, history, None)
    should_compact(estimate_context(context, TOOLS, None, counter), budget)
    find_cut(history, 0, budget.keep_recent, counter)


def bench_plan() -> None:
    history = sized_history()
    budget = Budget(262_144)
    total = estimate_messages(history)
    print(f"history: {len(history):,} messages, {total:,} estimated tokens")
    uncached = timed(lambda: estimate_and_plan(history, budget, None), 20)
    cold = []
    for _ in range(5):
        fresh = [Message(m.role, m.content, m.tool_calls, m.tool_call_id) for m in history]
        counter = TokenCounter()
        start = time.perf_counter()
        estimate_and_plan(fresh, budget, counter)
        cold.append(time.perf_counter() - start)
    counter = TokenCounter()
    estimate_and_plan(history, budget, counter)
    warm = timed(lambda: estimate_and_plan(history, budget, counter), 50)
    print(f"estimate + plan, uncached:   {uncached * 1e3:7.2f} ms  (target < 20 ms)")
    print(f"estimate + plan, cold counter: {statistics.median(cold) * 1e3:5.2f} ms")
    print(f"estimate + plan, warm counter: {warm * 1e3:5.2f} ms")
    cut = find_cut(history, 0, budget.keep_recent)
    chunking = timed(lambda: chunk_messages(history[:cut], budget.limit - 16_384), 5)
    print(f"chunk older part ({cut:,} messages) for the summariser: {chunking * 1e3:7.2f} ms")


def bench_budget_check() -> None:
    print("per-request budget check (calibrated, 3 messages added since the last request):")
    base = None
    full = make_history(2_000, 500)
    for n in (100, 1_000, 2_000):
        history = full[:n]
        previous = build_context(SYSTEM, MEMORY, None, history[:-3], None)
        counter = TokenCounter()
        calibration = Calibration.of(previous, TOOLS, prompt_tokens=estimate_messages(previous), counter=counter)
        context = build_context(SYSTEM, MEMORY, None, history, None)
        budget = Budget(262_144)
        counter.estimate_messages(context)  # warm: the loop estimated these when they were added

        def check() -> None:
            for _ in range(100):
                should_compact(estimate_context(context, TOOLS, calibration, counter), budget)

        per_check = timed(check, 50) / 100
        with_build = timed(lambda: estimate_context(
            build_context(SYSTEM, MEMORY, None, history, None), TOOLS, calibration, counter), 200)
        base = base or per_check
        print(f"  {n:>5,} messages: check {per_check * 1e6:6.2f} us (ratio {per_check / base:4.2f})"
              f"   incl. building the context list {with_build * 1e6:7.2f} us")


def bench_own_estimate() -> None:
    """The trigger's floor, minicode's own estimate of the kept history: each message's estimate
    memoised (``TokenCounter``), the sum taken over the kept history at every request — a dict
    look-up a message (O(n), like building the request's context list), beside a request that
    takes seconds."""
    from minicode.tokens import TokenCounter

    print("per-request own estimate (every message's estimate memoised, summed over the history):")
    full = make_history(2_000, 500)
    for n in (100, 1_000, 2_000):
        counter = TokenCounter()
        history = list(full[:n])
        counter.estimate_messages(history)
        per_check = timed(lambda: counter.estimate_messages(history), 200)
        print(f"  {n:>5,} messages: {per_check * 1e6:7.2f} us")


if __name__ == "__main__":
    bench_plan()
    bench_budget_check()
    bench_own_estimate()
