"""A loaded session's conversation as ACP updates (``session/load`` replays it to the editor):
the user's messages, the answers, and each tool call with its recorded result. Pure."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping, Sequence

from acp import start_tool_call, tool_diff_content, update_agent_message_text, update_user_message_text
from acp.schema import AgentMessageChunk, ToolCallStart, UserMessageChunk

from minicode.agent.deps import ToolOutcome
from minicode.cli.frontends.shared.replay_text import call_target
from minicode.cli.frontends.acp.updates import RESULT_MAX, call_view, parse_arguments, result_content
from minicode.provider.types import Message

__all__ = ["replay"]

Replayed = UserMessageChunk | AgentMessageChunk | ToolCallStart


def replay(workspace: Path, messages: Sequence[Message], outcomes: Mapping[str, ToolOutcome]) -> list[Replayed]:
    results = {m.tool_call_id: m.content or "" for m in messages if m.role == "tool" and m.tool_call_id}
    out: list[Replayed] = []
    for m in messages:
        if m.role == "user" and m.content:
            out.append(update_user_message_text(m.content))
        elif m.role == "assistant":
            if m.content:
                out.append(update_agent_message_text(m.content))
            for call in m.tool_calls:
                arguments = parse_arguments(call.arguments)
                view = call_view(workspace, call.name, "", "", arguments)
                outcome = outcomes.get(call.id)
                failed = outcome is not None and outcome.is_error
                result = results.get(call.id)
                if view.diff is not None and not failed and result is not None:  # an edit shows as its diff
                    content: list[Any] | None = [tool_diff_content(view.diff[0], view.diff[2], view.diff[1])]
                else:
                    content = [result_content(result[:RESULT_MAX])] if result is not None else None
                out.append(start_tool_call(call.id, " ".join(p for p in (call.name, call_target(call.arguments)) if p), kind=view.kind,
                                           status="failed" if failed or result is None else "completed",
                                           content=content, locations=view.locations, raw_input=arguments))
    return out

