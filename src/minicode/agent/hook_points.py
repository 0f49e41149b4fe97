"""Where the hooks run in a task (docs/hooks.md) and what a block does there.

``Hooks`` is the session's configured hooks bound to the session (its id, its file, the
workspace, the tools' environment). Each point runs the hooks of its event in the order
configured, stops at the first that blocks, and reports every block and failure as a
``HookReport``; a hook with nothing to say is silent. What a block means is the caller's:
``agent.batch`` (PreToolUse: the call does not run; PostToolUse: the reason joins the result)
and ``agent.loop`` (UserPromptSubmit: the prompt is not sent; Stop: the model goes on, at most
``MAX_STOP_BLOCKS`` times a task).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from minicode.agent.events import AgentEvent, HookReport
from minicode.hooks.spec import HookSpec

__all__ = ["MAX_STOP_BLOCKS", "STOP_HEADER", "Hooks", "stop_message"]

MAX_STOP_BLOCKS = 3
"""How often Stop hooks may send the model back in one task; after that the task ends."""
STOP_HEADER = "[Stop hook]"
"""The first line of the message a Stop block sends: marks it as minicode's, not the user's typing."""

Emit = Callable[[AgentEvent], None]


class Hooks:
    """The session's hooks, ready to run."""

    def __init__(self, specs: Sequence[HookSpec], *, workspace: Path, env: Mapping[str, str],
                 secrets: tuple[str, ...] = (), session_id: str = "", transcript: Path | None = None) -> None:
        self.specs = tuple(specs)
        self._workspace = workspace
        # Claude Code's variable too, so its hook scripts ("$CLAUDE_PROJECT_DIR"/.claude/hooks/…) run as they are
        self._env = {**env, "MINICODE_PROJECT_DIR": str(workspace), "CLAUDE_PROJECT_DIR": str(workspace)}
        self._secrets = secrets
        self._common: dict[str, Any] = {"session_id": session_id, "cwd": str(workspace)}
        if transcript is not None:
            self._common["transcript_path"] = str(transcript)

    def __bool__(self) -> bool:
        return bool(self.specs)

    def for_tools(self) -> Hooks:
        """These hooks with only PreToolUse and PostToolUse kept: a sub-agent's calls pass the
        user's tool hooks like the task's own, but its sub-task is no prompt the user submitted
        and its report no answer that ends the task (UserPromptSubmit and Stop are the task's)."""
        kept = Hooks((), workspace=self._workspace, env={})
        kept.specs = tuple(spec for spec in self.specs if spec.event in ("PreToolUse", "PostToolUse"))
        kept._env, kept._secrets, kept._common = self._env, self._secrets, self._common
        return kept

    async def pre_tool(self, emit: Emit, call_id: str, tool: str, args: Mapping[str, Any]) -> str | None:
        """The reason a PreToolUse hook blocks the call, or None: it may run (rules and approval decide)."""
        return await self._run("PreToolUse", emit, {"tool_name": tool, "tool_input": dict(args),
                                                    "tool_use_id": call_id}, tool)

    async def post_tool(self, emit: Emit, call_id: str, tool: str, args: Mapping[str, Any], text: str,
                        is_error: bool, exit_code: int | None) -> str | None:
        """What a PostToolUse hook objects to in the result (it is added for the model), or None."""
        response = {"output": text, "is_error": is_error, "exit_code": exit_code}
        return await self._run("PostToolUse", emit, {"tool_name": tool, "tool_input": dict(args),
                                                     "tool_response": response, "tool_use_id": call_id}, tool)

    async def prompt(self, emit: Emit, text: str) -> str | None:
        """Why a UserPromptSubmit hook keeps the prompt from being sent, or None."""
        return await self._run("UserPromptSubmit", emit, {"prompt": text})

    async def stop(self, emit: Emit, answer: str, active: bool) -> str | None:
        """Why a Stop hook does not let the task end at this answer, or None. ``active``: the model
        is already going on because of a Stop hook (Claude Code's ``stop_hook_active``)."""
        return await self._run("Stop", emit, {"stop_hook_active": active, "last_assistant_message": answer})

    async def _run(self, event: str, emit: Emit, fields: Mapping[str, Any], tool: str = "") -> str | None:
        from minicode.hooks.run import run_hook, shown_command  # loaded when a hook runs

        for spec in self.specs:
            if spec.event != event or (tool and not spec.matches(tool)):
                continue
            ran = await run_hook(spec, {**self._common, "hook_event_name": event, **fields}, cwd=self._workspace,
                                 env=self._env, secrets=self._secrets)
            if ran.outcome == "ok":
                continue
            shown = shown_command(spec, self._secrets)
            emit(HookReport(event, shown, ran.outcome == "blocked", ran.text, tool))
            if ran.outcome == "blocked":
                return f"{event} hook `{shown}`: {ran.text}"
        return None


def stop_message(reason: str, blocks: int) -> str:
    """The user message a Stop block sends the model (``blocks`` of ``MAX_STOP_BLOCKS``)."""
    left = MAX_STOP_BLOCKS - blocks
    return (f"{STOP_HEADER}\nThe task may not end yet: {reason}\n\nDo what it asks, then give your final answer "
            "again. " + ("After this, the task ends at your next answer." if left == 0 else
                         f"(Stop {blocks} of {MAX_STOP_BLOCKS}.)"))
