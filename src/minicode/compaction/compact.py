"""Context compaction: the summary calls and the one function all entry points share.

This is the only compaction module doing I/O, and only through the ``Provider`` it is
given (a non-streaming request with no tools). The three entry points — automatic
(budget), manual ``/compact`` and overflow recovery — all call ``compact``; it returns a
new ``Checkpoint`` or raises, so a failed, cut-off or cancelled summary never replaces the
old checkpoint (the caller simply keeps it). The raw history is never modified.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import Sequence

from minicode.compaction.checkpoint import Checkpoint
from minicode.compaction.context import build_context
from minicode.compaction.plan import chunk_messages, find_cut
from minicode.compaction.prompt import prompt_overhead, summary_request_messages
from minicode.compaction.trigger import Budget
from minicode.errors import APIError, MinicodeError, ProtocolError
from minicode.provider.base import Provider
from minicode.provider.types import ChatRequest, ChatResponse, Message, ToolSpec, Usage
from minicode.tokens import MESSAGE_OVERHEAD, TokenCounter, estimate_text

__all__ = [
    "MAX_OVERFLOW_SPLITS",
    "MIN_CHUNK_TOKENS",
    "CompactionFailed",
    "CompactionResult",
    "SummaryOutcome",
    "compact",
    "summarize",
]

MAX_OVERFLOW_SPLITS = 4
"""How many times one chunk may be halved after context-overflow errors before giving up."""
MIN_CHUNK_TOKENS = 256
"""Below this, splitting further cannot help: the window is too small to summarise in."""
# Room kept for the running summary in each chunk request: it is at most one answer long.
_SUMMARY_ROOM = ChatRequest(messages=()).max_tokens


class CompactionFailed(MinicodeError):
    """No summary was committed; the old checkpoint stays.

    ``usages`` are those of the summary calls that did return and ``failed_calls`` counts
    the summary calls that raised instead (overflows that were then split included), so
    every call made can still be counted in the task statistics.
    """

    def __init__(
        self, message: str, *, usages: tuple[Usage | None, ...] = (), failed_calls: int = 0
    ) -> None:
        super().__init__(message)
        self.usages = usages
        self.failed_calls = failed_calls


@dataclass(frozen=True, slots=True)
class SummaryOutcome:
    """A committed summary, the usage of every summary response, and how many summary
    calls raised (context overflows that were cured by splitting the chunk)."""

    summary: str
    usages: tuple[Usage | None, ...]
    failed_calls: int = 0


@dataclass(frozen=True, slots=True)
class CompactionResult:
    """The new checkpoint and what the user is told about it.

    ``tokens_before``/``tokens_after`` are local estimates of the context (memory, summary,
    kept history, tools; the system prompt when given) before and after.
    ``messages_summarised`` is how many history messages the summary now covers
    (== ``checkpoint.first_kept``). ``usages``: one entry per summary response;
    ``failed_calls``: summary calls that raised (overflows cured by splitting).
    """

    checkpoint: Checkpoint
    tokens_before: int
    tokens_after: int
    messages_summarised: int
    usages: tuple[Usage | None, ...]
    failed_calls: int = 0


async def summarize(
    provider: Provider,
    *,
    previous: str | None,
    older: Sequence[Message],
    request_budget: int,
) -> SummaryOutcome:
    """Summarise ``older``, folding it into ``previous`` (updated, never replaced).

    The serialised messages are split into chunks that fit ``request_budget`` together
    with the prompt and the running summary; each chunk updates the running summary in
    turn. A context-overflow error on a chunk halves it and retries (at most
    ``MAX_OVERFLOW_SPLITS`` times per chunk). Raises ``CompactionFailed`` for an API or
    protocol error, an empty, cut-off (``length``) or tool-calling summary, or anything
    but finish_reason ``stop``. ``asyncio.CancelledError`` propagates untouched.
    """
    usages: list[Usage | None] = []
    failed = 0
    running = previous
    chunk_tokens = _chunk_budget(previous, request_budget)
    queue = deque((chunk, 0) for chunk in chunk_messages(older, chunk_tokens))
    if not queue and previous is None:
        raise CompactionFailed("nothing to summarise")
    while queue:
        piece, splits = queue.popleft()
        request = ChatRequest(summary_request_messages(running, piece), tools=())
        try:
            response = await provider.chat(request)
        except (APIError, ProtocolError) as e:
            failed += 1
            smaller = _split_on_overflow(e, piece, splits) if isinstance(e, APIError) else None
            if smaller is None:
                raise CompactionFailed(
                    f"summary request failed: {e}", usages=tuple(usages), failed_calls=failed
                ) from e
            queue.extendleft(reversed([(part, splits + 1) for part in smaller]))
            continue
        usages.append(response.usage)
        running = _accepted(response, tuple(usages), failed)
    assert running is not None  # queue was non-empty or previous was given
    return SummaryOutcome(running, tuple(usages), failed)


def _chunk_budget(previous: str | None, request_budget: int) -> int:
    fixed = estimate_text(prompt_overhead(None)) + 2 * MESSAGE_OVERHEAD
    summary_room = max(_SUMMARY_ROOM, estimate_text(previous or ""))
    tokens = request_budget - fixed - summary_room
    if tokens < MIN_CHUNK_TOKENS:
        raise CompactionFailed(
            f"the context window is too small to summarise in ({request_budget:,} tokens"
            f" of request budget, {fixed + summary_room:,} needed for prompt and summary)"
        )
    return tokens


def _split_on_overflow(error: APIError, piece: str, splits: int) -> list[str] | None:
    """The piece in halves when a context overflow may be cured by that, else None."""
    if not error.context_overflow or splits >= MAX_OVERFLOW_SPLITS:
        return None
    if estimate_text(piece) < 2 * MIN_CHUNK_TOKENS:
        return None
    middle = len(piece) // 2
    # Prefer the line break nearest before the middle, unless it is far from it.
    newline = piece.rfind("\n", 0, middle)
    if newline + 1 > len(piece) // 4:
        middle = newline + 1
    return [piece[:middle], piece[middle:]]


def _accepted(response: ChatResponse, usages: tuple[Usage | None, ...], failed: int) -> str:
    """The summary text, if the response is a complete, non-empty, tool-free answer."""
    message = response.message
    if message.tool_calls:
        problem = "the summary answer called tools"
    elif response.finish_reason == "length":
        problem = "the summary was cut off (finish_reason: length)"
    elif response.finish_reason != "stop":
        problem = f"the summary did not finish normally (finish_reason: {response.finish_reason})"
    elif not (message.content or "").strip():
        problem = "the summary was empty"
    else:
        return (message.content or "").strip()
    raise CompactionFailed(problem, usages=usages, failed_calls=failed)


async def compact(
    provider: Provider,
    history: Sequence[Message],
    checkpoint: Checkpoint | None,
    *,
    budget: Budget,
    original_task: str | None,
    tools: Sequence[ToolSpec],
    memory: Message | None,
    system: Message | None = None,
    counter: TokenCounter | None = None,
    task_list: str = "",
) -> CompactionResult | None:
    """Compact ``history`` behind a new checkpoint; None when there is nothing to compact.

    The shared core of automatic, manual and overflow-recovery compaction. The kept part
    is found with ``find_cut`` (``budget.keep_recent`` tokens of whole units); when it
    already starts at the old checkpoint, returns None without any model call. Otherwise
    ``history[old first_kept : cut]`` is summarised into the previous summary. Raises
    ``CompactionFailed`` (old checkpoint stays valid) or propagates cancellation.
    ``memory``, ``tools`` and ``system`` only enter the before/after estimates; the
    session's ``counter``, when given, memoises them (a fresh one is used otherwise).
    ``task_list``: the model's task list now (``todo``), kept in the checkpoint verbatim.
    """
    start = checkpoint.first_kept if checkpoint is not None else 0
    counter = counter if counter is not None else TokenCounter()
    cut = find_cut(history, start, budget.keep_recent, counter)
    if cut <= start:
        return None
    outcome = await summarize(
        provider,
        previous=checkpoint.summary if checkpoint is not None else None,
        older=history[start:cut],
        request_budget=budget.limit,
    )
    new = Checkpoint(summary=outcome.summary, first_kept=cut, todo=task_list)
    tools_tokens = counter.estimate_tools(tools)
    before = build_context(system, memory, checkpoint, history, original_task)
    after = build_context(system, memory, new, history, original_task)
    return CompactionResult(
        checkpoint=new,
        tokens_before=counter.estimate_messages(before) + tools_tokens,
        tokens_after=counter.estimate_messages(after) + tools_tokens,
        messages_summarised=cut,
        usages=outcome.usages,
        failed_calls=outcome.failed_calls,
    )
