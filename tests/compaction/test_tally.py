"""HistoryTally: the local estimate of the kept history as running sums (compaction/tally.py)."""

from __future__ import annotations

from minicode.compaction.tally import HistoryTally
from minicode.provider.types import Message
from minicode.tokens import estimate_message, estimate_messages


class Counting:
    """``estimate_message`` that counts its calls."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, message: Message) -> int:
        self.calls += 1
        return estimate_message(message)


def history(n: int, start: int = 0) -> list[Message]:
    return [Message.user(f"message {i} " + "x" * (i % 13)) for i in range(start, start + n)]


def test_each_message_is_estimated_once_however_often_the_tally_is_asked() -> None:
    tally, estimate = HistoryTally(), Counting()
    messages = history(50)
    assert tally.tokens(messages, 0, estimate) == estimate_messages(messages)
    for _ in range(100):
        assert tally.tokens(messages, 0, estimate) == estimate_messages(messages)
    assert estimate.calls == 50
    messages += history(3, 50)
    assert tally.tokens(messages, 0, estimate) == estimate_messages(messages)
    assert estimate.calls == 53  # only the new ones


def test_the_kept_part_moving_forward_is_a_subtraction_not_a_recount() -> None:
    tally, estimate = HistoryTally(), Counting()
    messages = history(40)
    tally.tokens(messages, 0, estimate)
    assert tally.tokens(messages, 25, estimate) == estimate_messages(messages[25:])
    assert tally.tokens(messages, 30, estimate) == estimate_messages(messages[30:])
    assert estimate.calls == 40


def test_a_shorter_or_changed_history_is_counted_again() -> None:
    tally, estimate = HistoryTally(), Counting()
    messages = history(20)
    tally.tokens(messages, 0, estimate)
    rewound = messages[:8]  # a rewind: shorter
    assert tally.tokens(rewound, 0, estimate) == estimate_messages(rewound)
    replaced = messages[:7] + [Message.user("another " * 40)] + history(12, 100)  # same length, other tail
    assert tally.tokens(replaced, 0, estimate) == estimate_messages(replaced)
    replaced[-1] = Message.user("the last one replaced " * 10)
    assert tally.tokens(replaced, 0, estimate) == estimate_messages(replaced)


def test_the_kept_part_moving_back_or_past_the_end_is_counted_again() -> None:
    tally, estimate = HistoryTally(), Counting()
    messages = history(30)
    tally.tokens(messages, 20, estimate)
    assert tally.tokens(messages, 5, estimate) == estimate_messages(messages[5:])  # an older checkpoint again
    assert tally.tokens(messages, 30, estimate) == 0
    assert tally.tokens(messages, 99, estimate) == 0  # clamped: nothing kept
    assert tally.tokens([], 0, estimate) == 0


def test_reset_forgets_everything() -> None:
    tally, estimate = HistoryTally(), Counting()
    messages = history(10)
    tally.tokens(messages, 0, estimate)
    tally.reset()
    assert tally.tokens(messages, 0, estimate) == estimate_messages(messages)
    assert estimate.calls == 20


def test_the_tally_holds_no_message_but_the_last_one_counted() -> None:
    import gc
    import weakref

    class Weak(Message):
        __slots__ = ("__weakref__",)  # Message itself has slots and no weak references

    tally = HistoryTally()
    messages: list[Message] = [Weak(role="user", content=f"m{i}") for i in range(10)]
    refs = [weakref.ref(m) for m in messages]
    tally.tokens(messages, 0, estimate_message)
    del messages
    gc.collect()
    assert sum(r() is not None for r in refs) == 1 and refs[-1]() is not None
