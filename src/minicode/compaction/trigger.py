"""When to compact: the context budget, the calibrated request-size estimate, the trigger.

Pure functions over values (SPEC 6, "Budget" and "Estimate"). The last main response's
``usage.prompt_tokens`` calibrates what was sent with it; everything added since is
estimated locally with ``minicode.tokens``. Compaction summary calls never calibrate.
"""

from __future__ import annotations

from typing import Sequence

from dataclasses import dataclass
from minicode.provider.types import Message, ToolSpec
from minicode.provider.wire import output_limit
from minicode.tokens import TokenCounter, estimate_message, estimate_messages, estimate_tools

__all__ = [
    "DEFAULT_KEEP_RECENT",
    "DEFAULT_RESERVE",
    "Budget",
    "Calibration",
    "estimate_context",
    "should_compact",
]

DEFAULT_RESERVE = 16 * 1024
"""Tokens kept free below the window for the answer (``max_tokens`` 8192) and estimate error."""
DEFAULT_KEEP_RECENT = 20_000
"""Tokens of the newest history kept verbatim after a compaction."""

# How many leading context messages a calibration remembers to recognise its own prefix:
# system prompt, memory message, and the summary message (or the first history message).
_HEAD_MARKS = 3


@dataclass(frozen=True, slots=True)
class Budget:
    """The context budget of one model: compaction triggers above ``limit``."""

    context_window: int
    reserve: int = DEFAULT_RESERVE
    keep_recent: int = DEFAULT_KEEP_RECENT

    def __post_init__(self) -> None:
        if self.context_window <= 0 or self.reserve < 0 or self.keep_recent < 0:
            raise ValueError(f"invalid context budget: {self}")

    @property
    def limit(self) -> int:
        """The largest estimated request size that does not trigger compaction."""
        return self.context_window - self.reserve

    @property
    def output_limit(self) -> int:
        """The ``max_tokens`` its requests are sent with (``wire.output_limit``: at most the
        reserve ``for_window`` keeps free of the prompt)."""
        return output_limit(self.context_window)

    @classmethod
    def for_window(cls, context_window: int) -> Budget:
        """The SPEC defaults, scaled down for small windows (e.g. a 32k local model).

        For windows of 64 Ki tokens and more this is exactly ``Budget(context_window)``;
        below that the reserve is a quarter of the window and the kept part at most half
        the limit, so the limit stays positive and a compaction can actually free room.
        """
        reserve = min(DEFAULT_RESERVE, context_window // 4)
        keep_recent = min(DEFAULT_KEEP_RECENT, (context_window - reserve) // 2)
        return cls(context_window, reserve, keep_recent)


@dataclass(frozen=True, slots=True)
class Calibration:
    """What the server counted for the last main request.

    ``prompt_tokens`` is that response's ``usage.prompt_tokens``; ``context_len`` is how
    many context messages the request had. ``marks`` (optional, see ``of``) are the first
    messages and the last one of that context, used to notice that the context changed
    underneath (a compaction, a memory reload) so the calibration no longer applies.
    ``tools_tokens`` (optional) is the local estimate of the tools sent then, so a request
    with a different tool list is corrected by the difference.
    """

    prompt_tokens: int
    context_len: int
    marks: tuple[Message, ...] = ()
    tools_tokens: int | None = None

    @classmethod
    def of(
        cls,
        context: Sequence[Message],
        tools: Sequence[ToolSpec],
        prompt_tokens: int,
        counter: TokenCounter | None = None,
    ) -> Calibration:
        """Calibrate from the context and tools of a main request and its prompt_tokens."""
        n = len(context)
        marks = tuple(context[: min(_HEAD_MARKS, n)])
        if n > _HEAD_MARKS:
            marks += (context[n - 1],)
        tools_tokens = counter.estimate_tools(tools) if counter is not None else estimate_tools(tools)
        return cls(prompt_tokens, n, marks, tools_tokens)

    def fits(self, context: Sequence[Message]) -> bool:
        """Whether ``context`` still starts with the calibrated request's messages."""
        n = self.context_len
        if n <= 0 or n > len(context):
            return False
        head = min(_HEAD_MARKS, n)
        if not self.marks:
            return True
        if len(self.marks) != head + (1 if n > head else 0):
            return False
        if not all(_same(self.marks[i], context[i]) for i in range(head)):
            return False
        return n == head or _same(self.marks[-1], context[n - 1])


def estimate_context(
    context: Sequence[Message],
    tools: Sequence[ToolSpec],
    calibration: Calibration | None,
    counter: TokenCounter | None = None,
) -> int:
    """Estimated prompt size of a request with ``context`` and ``tools``.

    With a calibration that fits: the server's count plus local estimates of the messages
    added since (cost proportional to those messages only). Otherwise a full local estimate
    of every message and the tool declarations — memoised per message when a session's
    ``counter`` is given, which is what keeps repeated checks cheap.
    """
    message_tokens = counter.estimate_message if counter is not None else estimate_message
    tools_tokens = counter.estimate_tools if counter is not None else estimate_tools
    if calibration is not None and calibration.fits(context):
        tokens = calibration.prompt_tokens
        if calibration.tools_tokens is not None:
            tokens += tools_tokens(tools) - calibration.tools_tokens
        for i in range(calibration.context_len, len(context)):
            tokens += message_tokens(context[i])
        return tokens
    messages = counter.estimate_messages(context) if counter is not None else estimate_messages(context)
    return messages + tools_tokens(tools)


def _same(a: Message, b: Message) -> bool:
    # Identity first: the context reuses the history's message objects, so the usual case
    # is O(1); a rebuilt but equal system or memory message still matches by value.
    return a is b or a == b


def should_compact(estimate: int, budget: Budget) -> bool:
    """Compaction triggers when the estimate is strictly above ``window - reserve``."""
    return estimate > budget.limit
