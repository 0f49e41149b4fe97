"""The loop's events as ACP session updates (pure: no connection, no I/O).

One ``match`` over the ``AgentEvent`` union, one case per event that the editor shows: the
answer and the reasoning as message and thought chunks, each tool call as a ``tool_call``
(kind, title, locations, an edit as a diff) followed by ``tool_call_update``s for its approval
and its end, a running command's output as it comes, the acceptance checks as ``execute`` calls of their own,
a sub-agent's calls as calls of their own titled by it, the todo tool's task list as the
session's plan (``update_plan``: the whole list each time, as ACP wants it). A new event is
one more case here.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping, assert_never

from acp import (
    plan_entry,
    start_tool_call,
    text_block,
    tool_content,
    tool_diff_content,
    update_agent_message_text,
    update_agent_thought_text,
    update_plan,
    update_tool_call,
)
from acp.schema import (
    AgentMessageChunk,
    AgentPlanUpdate,
    PlanEntry,
    AgentThoughtChunk,
    ToolCallLocation,
    ToolCallProgress,
    ToolCallStart,
    ToolKind,
)

from minicode import jsonsafe
from minicode.cli.frontends.shared.plan_lines import MODE_LINES
from minicode.agent.events import (
    AgentEvent,
    ApprovalResolved,
    AssistantDone,
    CheckFinished,
    CheckStarted,
    ChecksFeedback,
    CompactionDone,
    HookFeedback,
    HookReport,
    ModeChanged,
    QuestionResolved,
    ModelCallStarted,
    Notice,
    Retrying,
    ReasoningChunk,
    SubAgentEvent,
    TextChunk,
    TodoUpdated,
    ToolFinished,
    ToolOutput,
    ToolStarted,
    TurnFinished,
    TurnStarted,
)

__all__ = ["RESULT_MAX", "CallView", "Update", "UpdateMapper", "call_view", "parse_arguments", "result_content"]

Update = AgentMessageChunk | AgentThoughtChunk | ToolCallStart | ToolCallProgress | AgentPlanUpdate

KINDS: Mapping[str, ToolKind] = {
    "read": "read", "write": "edit", "edit": "edit", "bash": "execute", "ls": "search", "glob": "search", "grep": "search",
    "skill": "read", "agent": "think",
}  # fmt: skip
"""ACP's tool kinds (the editor's icon and grouping); any other tool (MCP) is "other"."""

TITLE_MAX = 120
RESULT_MAX = 8000
"""Characters of a tool's result shown in the editor (the model got it whole)."""
LIVE_TAIL = 4000
"""Characters of a running command's output the editor shows (its tail, replaced by the result)."""


class CallView:
    """What the editor is told about one call: kind, title, where, the diff of an edit."""

    def __init__(self, kind: ToolKind, title: str, locations: list[ToolCallLocation],
                 diff: tuple[str, str | None, str] | None, raw_input: Mapping[str, Any] | None) -> None:
        self.kind = kind
        self.title = title
        self.locations = locations
        self.diff = diff  # (absolute path, old text or None, new text)
        self.raw_input = raw_input


def call_view(workspace: Path, name: str, target: str, detail: str, arguments: Mapping[str, Any] | None) -> CallView:
    """The view of a call from its preview (``target``, ``detail``) and its arguments."""
    title = " ".join(part for part in (name, target, detail) if part)
    title = title if len(title) <= TITLE_MAX else title[: TITLE_MAX - 1] + "…"
    path = arguments.get("path") if arguments is not None else None
    where = workspace / path if isinstance(path, str) and path else None
    diff: tuple[str, str | None, str] | None = None
    if where is not None and arguments is not None:
        if name == "edit" and isinstance(arguments.get("new_text"), str):
            old = arguments.get("old_text")
            diff = (str(where), old if isinstance(old, str) else None, arguments["new_text"])
        elif name == "write" and isinstance(arguments.get("content"), str):
            diff = (str(where), None, arguments["content"])
    locations = [ToolCallLocation(path=str(where))] if where is not None else []
    return CallView(KINDS.get(name, "other"), title, locations, diff, arguments)


class UpdateMapper:
    """Maps the events of one session's turns; it remembers each call's arguments (from
    ``AssistantDone``) until the call finished, and the check that is running."""

    def __init__(self, workspace: Path, *, ids: str = "", titles: str = "") -> None:
        self._workspace = workspace
        self._ids = ids  # a sub-agent's calls: ids and titles under its own (its model's ids may repeat ours)
        self._titles = titles
        self._subagents: dict[tuple[str, str], UpdateMapper] = {}
        self._arguments: dict[str, Mapping[str, Any]] = {}
        self._views: dict[str, CallView] = {}
        self._live: dict[str, str] = {}  # a running command's output so far (its tail)
        self._check = 0

    def view(self, call_id: str) -> CallView | None:
        """The view sent for a started call (the permission request repeats it)."""
        return self._views.get(call_id)

    def updates(self, event: AgentEvent) -> list[Update]:
        match event:
            case TextChunk(text=text):
                return [update_agent_message_text(text)]
            case ReasoningChunk(text=text):
                return [update_agent_thought_text(text)]
            case AssistantDone(tool_calls=calls):
                for call in calls:
                    self._arguments[call.id] = parse_arguments(call.arguments)
                return []
            case ToolStarted():
                view = call_view(self._workspace, event.name, event.target, event.detail,
                                 self._arguments.pop(event.call_id, None))
                self._views[event.call_id] = view
                content = [tool_diff_content(view.diff[0], view.diff[2], view.diff[1])] if view.diff else None
                return [start_tool_call(self._ids + event.call_id, self._titles + view.title, kind=view.kind,
                                        status="pending", content=content, locations=view.locations,
                                        raw_input=view.raw_input)]
            case ApprovalResolved(allowed=True):
                return [update_tool_call(self._ids + event.call_id, status="in_progress")]
            case ApprovalResolved():
                return []  # its ToolFinished (denied) follows with the reason
            case ToolOutput(call_id=call_id, text=text):  # already throttled and redacted by the producer
                tail = self._live[call_id] = (self._live.get(call_id, "") + text)[-LIVE_TAIL:]
                return [update_tool_call(self._ids + call_id, content=[result_content(tail)])]
            case ToolFinished():
                self._live.pop(event.call_id, None)
                finished_view = self._views.pop(event.call_id, None)
                keep_diff = finished_view is not None and finished_view.diff is not None and not event.is_error
                content = None if keep_diff else [result_content(event.result_text or event.summary)]
                return [update_tool_call(self._ids + event.call_id, status="failed" if event.is_error else "completed",
                                         content=content, raw_output={"summary": event.summary})]
            case SubAgentEvent(call_id=parent, agent_id=agent, event=inner):
                # its calls as calls of their own, titled by it; its text is its report (the
                # agent call's result) and its end is that call's
                key = (parent, agent)
                if key not in self._subagents:
                    self._subagents[key] = UpdateMapper(self._workspace, ids=f"{self._ids}{parent}/{agent}/",
                                                        titles=f"{self._titles}{agent}: ")
                sub: list[Update] = [u for u in self._subagents[key].updates(inner)
                                     if isinstance(u, (ToolCallStart, ToolCallProgress))]
                if isinstance(inner, TurnFinished):
                    del self._subagents[key]
                return sub
            case CheckStarted(command=command, index=index):
                self._check = index
                return [start_tool_call(f"check-{index}", f"check {command}", kind="execute", status="in_progress")]
            case CheckFinished(result=result):
                shown = result.describe() + (f"\n{result.output_tail}" if result.output_tail else "")
                return [update_tool_call(f"check-{self._check}", status="completed" if result.passed else "failed",
                                         content=[result_content(shown)])]
            case CompactionDone(tokens_before=before, tokens_after=after):
                return [update_agent_message_text(f"\n\n*minicode: context compacted ({before} → {after} tokens)*\n\n")]
            case Notice(text=text):
                return [update_agent_message_text(f"\n\n*minicode: {text}*\n\n")]
            case HookReport():  # a block or a failure the user must know of
                return [update_agent_message_text(f"\n\n*minicode: {event.describe()}*\n\n")]
            case TodoUpdated(todo=todo):
                return [update_plan([_plan_entry(item.text, item.status) for item in todo.items])]
            case ModeChanged(why=why):  # minicode's plan mode; the editor's modes (ask/act) are approvals
                return [update_agent_message_text(f"\n\n*minicode: {MODE_LINES.get(why, event.mode)}*\n\n")]
            case TurnStarted() | ModelCallStarted() | Retrying() | ChecksFeedback() | HookFeedback() | TurnFinished():
                return []  # the prompt's answer says how the task ended; a retry is a stderr line
            case QuestionResolved():
                return []  # ask_user is not offered to an editor yet: its call's result says "no answer available"
            case _:
                assert_never(event)


def _plan_entry(text: str, status: str) -> PlanEntry:
    """An item as ACP's plan entry: ACP has no blocked step, so a blocked one stays pending and
    says so; done is ACP's completed."""
    if status == "blocked":
        return plan_entry(f"blocked: {text}", status="pending")
    return plan_entry(text, status="completed" if status == "done" else "in_progress" if status == "in_progress"
                      else "pending")


def parse_arguments(raw: str) -> Mapping[str, Any]:
    """A call's raw JSON arguments as an object; {} when the model's text is not one (the
    batch tells the model why; the editor just sees no arguments)."""
    try:
        value = jsonsafe.loads(raw or "{}", repair_surrogates=True)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def result_content(text: str) -> Any:
    shown = text if len(text) <= RESULT_MAX else text[: RESULT_MAX - 1] + "…"
    return tool_content(text_block(shown))
