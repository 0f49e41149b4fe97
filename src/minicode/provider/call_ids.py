"""Unique tool-call ids within one response (pure).

Some OpenAI-compatible servers (DeepSeek, GLM, Kimi, local servers that number calls per
chunk) give two parallel calls of one response the same id. Answering both under one id is
an invalid conversation (every later request is refused), and a frontend cannot tell the two
results apart. So a repeated id is renamed the moment the response is complete, before any
call runs: the second ``same`` becomes ``same-2`` (the third ``same-3``, skipping any name the
response already uses). ``-`` and digits keep the id inside ``[A-Za-z0-9_-]``, the alphabet
the strictest servers and proxies accept, whenever the original was.

Session files written before this rename exist: ``unique_history_ids`` applies the same rule
to every batch of a history (the k-th result for ``same`` answers the k-th call named
``same``), so such a session is sent as a valid conversation instead of failing for ever.
Imports only the standard library and ``minicode.provider.types``.
"""

from __future__ import annotations

from collections import deque
from typing import Sequence

from dataclasses import replace
from minicode.provider.types import Message

__all__ = ["unique_call_ids", "unique_history_ids"]


def unique_call_ids(ids: Sequence[str]) -> list[str]:
    """``ids`` in order, a repeated one renamed ``id-N`` (the smallest N ≥ 2 not in use)."""
    taken = set(ids)
    seen: set[str] = set()
    out: list[str] = []
    for call_id in ids:
        if call_id not in seen:
            seen.add(call_id)
            out.append(call_id)
            continue
        number = 2
        while f"{call_id}-{number}" in taken:
            number += 1
        renamed = f"{call_id}-{number}"
        taken.add(renamed)
        out.append(renamed)
    return out


def unique_history_ids(messages: Sequence[Message]) -> Sequence[Message]:
    """``messages`` with every batch's repeated call ids renamed as ``unique_call_ids`` does,
    its results renamed to match; the same object when no batch repeats an id (the usual
    case costs one pass and no copy)."""
    out: list[Message] | None = None
    renames: dict[str, deque[str]] = {}  # the open batch: an original id -> its new ids, in order
    for index, message in enumerate(messages):
        fixed = message
        if message.role == "assistant":
            renames = {}
            ids = [call.id for call in message.tool_calls]
            if len(set(ids)) != len(ids):
                fixed, renames = _renamed_batch(message, ids)
        elif message.role == "tool" and message.tool_call_id in renames:
            queue = renames[message.tool_call_id]
            if queue:
                fixed = replace(message, tool_call_id=queue.popleft())
        elif message.role != "tool":
            renames = {}
        if fixed is not message:
            if out is None:
                out = list(messages[:index])
            out.append(fixed)
        elif out is not None:
            out.append(message)
    return messages if out is None else out


def _renamed_batch(message: Message, ids: list[str]) -> tuple[Message, dict[str, deque[str]]]:
    new_ids = unique_call_ids(ids)
    renames: dict[str, deque[str]] = {}
    for old, new in zip(ids, new_ids):
        renames.setdefault(old, deque()).append(new)
    calls = tuple(replace(call, id=new) for call, new in zip(message.tool_calls, new_ids))
    return replace(message, tool_calls=calls), renames
