"""The pure pieces of `minicode --acp`: events -> session updates, a loaded history -> updates,
approval options -> decisions, prompt blocks -> the task's text, and the stdin line check."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from acp.schema import (
    AllowedOutcome,
    DeniedOutcome,
    EmbeddedResourceContentBlock,
    RequestPermissionResponse,
    ResourceContentBlock,
    TextContentBlock,
    TextResourceContents,
)

from minicode.agent.approval import ApprovalRequest, Decision
from minicode.agent.deps import ToolOutcome
from minicode.agent.events import (
    ApprovalResolved,
    AssistantDone,
    Notice,
    ReasoningChunk,
    SubAgentEvent,
    TextChunk,
    ToolFinished,
    ToolOutput,
    ToolStarted,
    TurnStarted,
)
from minicode.agent.approval import ApprovedBy
from minicode.cli.frontends.acp.prompt import prompt_text
from minicode.cli.frontends.acp.approver import EditorApprover, options_for
from minicode.cli.frontends.acp.replay import replay
from minicode.cli.frontends.acp.run import problem
from minicode.cli.frontends.acp.sender import UpdateSender
from minicode.cli.frontends.acp.updates import UpdateMapper
from minicode.provider.types import Message, ToolCall

WS = Path("/work/project")


def _edit_call(mapper: UpdateMapper, call_id: str = "c1") -> list[Any]:
    args = json.dumps({"path": "src/a.py", "old_text": "x = 1", "new_text": "x = 2"})
    assert mapper.updates(AssistantDone("", "", 1, tool_calls=(ToolCall(call_id, "edit", args),))) == []
    return mapper.updates(ToolStarted(call_id, "edit", "src/a.py", "replace 1 line with 1 line"))


def test_text_and_reasoning_become_message_and_thought_chunks() -> None:
    mapper = UpdateMapper(WS)
    [text] = mapper.updates(TextChunk("Hello"))
    [thought] = mapper.updates(ReasoningChunk("hmm"))
    assert (text.session_update, text.content.text) == ("agent_message_chunk", "Hello")
    assert (thought.session_update, thought.content.text) == ("agent_thought_chunk", "hmm")
    assert mapper.updates(TurnStarted("task")) == []


def test_an_edit_is_a_tool_call_with_kind_location_and_a_diff_kept_when_it_succeeds() -> None:
    mapper = UpdateMapper(WS)
    [started] = _edit_call(mapper)
    assert started.session_update == "tool_call" and started.kind == "edit" and started.status == "pending"
    assert started.title == "edit src/a.py replace 1 line with 1 line"
    assert [loc.path for loc in started.locations] == [str(WS / "src/a.py")]
    [diff] = started.content
    assert (diff.type, diff.path, diff.old_text, diff.new_text) == ("diff", str(WS / "src/a.py"), "x = 1", "x = 2")
    [running] = mapper.updates(ApprovalResolved("c1", "edit", True, ApprovedBy.USER))
    assert running.status == "in_progress"
    [done] = mapper.updates(ToolFinished("c1", "edit", False, "1 replacement", None, 0.1, result_text="Edited"))
    assert done.status == "completed" and done.content is None  # the diff stays what the editor shows


def test_a_failed_or_denied_call_shows_its_result_text() -> None:
    mapper = UpdateMapper(WS)
    _edit_call(mapper)
    assert mapper.updates(ApprovalResolved("c1", "edit", False, ApprovedBy.USER, reason="no")) == []
    [failed] = mapper.updates(ToolFinished("c1", "edit", True, "denied", None, 0.0, denied=True,
                                           result_text="denied by the user"))
    assert failed.status == "failed" and failed.content[0].content.text == "denied by the user"


def test_a_call_with_broken_arguments_still_gets_a_tool_call_without_them() -> None:
    mapper = UpdateMapper(WS)
    mapper.updates(AssistantDone("", "", 1, tool_calls=(ToolCall("c9", "bash", "{not json"),)))
    [started] = mapper.updates(ToolStarted("c9", "bash", ".", "$ make"))
    assert started.kind == "execute" and started.raw_input == {} and started.content is None and started.locations == []


def test_a_running_commands_output_is_shown_as_its_tail_until_the_result_replaces_it() -> None:
    mapper = UpdateMapper(WS)
    mapper.updates(ToolStarted("b1", "bash", ".", "$ make"))
    [first] = mapper.updates(ToolOutput("b1", "compiling\n"))
    [second] = mapper.updates(ToolOutput("b1", "x" * 5000))
    assert first.content[0].content.text == "compiling\n"
    assert len(second.content[0].content.text) == 4000 and second.content[0].content.text.endswith("x")
    [done] = mapper.updates(ToolFinished("b1", "bash", False, "exit 0", 0, 1.0, result_text="exit 0\nok"))
    assert done.content[0].content.text == "exit 0\nok"


def test_a_subagents_calls_are_calls_of_their_own_titled_by_it_and_its_text_stays_out() -> None:
    mapper = UpdateMapper(WS)
    mapper.updates(ToolStarted("a1", "agent", "", "find the bug"))

    def sub(event: Any) -> list[Any]:
        return mapper.updates(SubAgentEvent("a1", "agent-1", event))

    assert sub(TurnStarted("find the bug")) == [] and sub(TextChunk("thinking aloud")) == []
    sub(AssistantDone("", "", 1, tool_calls=(ToolCall("a1", "read", '{"path": "x.py"}'),)))
    [started] = sub(ToolStarted("a1", "read", "x.py", ""))  # its model reused the id "a1"
    assert started.tool_call_id == "a1/agent-1/a1" and started.title == "agent-1: read x.py"
    assert started.kind == "read" and started.locations[0].path == str(WS / "x.py")
    [done] = sub(ToolFinished("a1", "read", False, "3 lines", None, 0.1, result_text="1\tx"))
    assert done.tool_call_id == "a1/agent-1/a1" and done.status == "completed"
    assert sub(Notice("a sub-agent notice")) == []


def test_a_notice_and_a_hooks_block_reach_the_editor_as_message_text() -> None:
    from minicode.agent.events import HookFeedback, HookReport

    [update] = UpdateMapper(WS).updates(Notice("could not save the session: disk full"))
    assert "disk full" in update.content.text
    [hook] = UpdateMapper(WS).updates(HookReport("PreToolUse", "check-call", True, "not on Fridays", tool="bash"))
    assert "PreToolUse hook `check-call` blocked bash: not on Fridays" in hook.content.text
    assert UpdateMapper(WS).updates(HookFeedback("fix the tests", 1, 3)) == []


def test_a_loaded_history_replays_messages_and_calls_with_their_results() -> None:
    messages = [
        Message("user", "fix it"),
        Message("assistant", "Looking.", tool_calls=(ToolCall("r1", "read", '{"path": "a.py"}'),
                                                      ToolCall("b1", "bash", '{"command": "make"}'))),
        Message("tool", "1\tx = 1", tool_call_id="r1"),
        Message("tool", "exit 2", tool_call_id="b1"),
        Message("assistant", "Done."),
    ]
    out = replay(WS, messages, {"b1": ToolOutcome(is_error=True, exit_code=2)})
    kinds = [u.session_update for u in out]
    assert kinds == ["user_message_chunk", "agent_message_chunk", "tool_call", "tool_call", "agent_message_chunk"]
    read, bash = out[2], out[3]
    assert (read.title, read.status, read.kind) == ("read a.py", "completed", "read")
    assert (bash.title, bash.status) == ("bash make", "failed")
    assert read.content[0].content.text == "1\tx = 1"


def test_a_replayed_edit_shows_as_its_diff_and_a_failed_one_as_its_error() -> None:
    args = '{"path": "a.py", "old_text": "x = 1", "new_text": "x = 2"}'
    messages = [Message("user", "go"), Message("assistant", None, tool_calls=(ToolCall("e1", "edit", args),
                                                                              ToolCall("e2", "edit", args))),
                Message("tool", "Edited a.py", tool_call_id="e1"), Message("tool", "old_text not found", tool_call_id="e2")]
    _, ok, failed = replay(WS, messages, {"e2": ToolOutcome(is_error=True, exit_code=None)})
    assert (ok.content[0].type, ok.content[0].old_text, ok.content[0].new_text) == ("diff", "x = 1", "x = 2")
    assert failed.status == "failed" and failed.content[0].content.text == "old_text not found"


def test_a_replayed_call_without_a_result_is_failed() -> None:
    [_, call] = replay(WS, [Message("user", "go"), Message("assistant", None, tool_calls=(ToolCall("w", "write", "{}"),))], {})
    assert call.status == "failed"


def _request(**kw: Any) -> ApprovalRequest:
    base: dict[str, Any] = dict(call_id="c1", tool="bash", target=".", detail="$ touch a", arguments={"command": "touch a"})
    return ApprovalRequest(**{**base, **kw})


def test_the_options_offer_the_session_and_the_rule_only_where_minicode_does() -> None:
    assert [o.option_id for o in options_for(_request(suggested_rule="bash(touch *)"))] == [
        "allow_once", "allow_session", "allow_always", "reject"]
    assert [o.option_id for o in options_for(_request())] == ["allow_once", "allow_session", "reject"]
    assert [o.option_id for o in options_for(_request(always_ask=True, suggested_rule="x"))] == ["allow_once", "reject"]


class _Asker:
    def __init__(self, answer: Any) -> None:
        self.answer = answer
        self.asked = 0

    async def request_permission(self, session_id: str, tool_call: Any, options: Any, **kwargs: Any) -> Any:
        self.asked += 1
        if isinstance(self.answer, BaseException):
            raise self.answer
        return self.answer


class _Quiet:
    async def session_update(self, session_id: str, update: Any) -> None:
        pass


def _approve(answer: Any, request: ApprovalRequest, *, acting: bool = False) -> tuple[Any, int]:
    async def go() -> tuple[Any, int]:
        asker = _Asker(answer)
        approver = EditorApprover(asker, "s", UpdateSender(_Quiet(), "s"), lambda _id: None, lambda: acting)
        return await approver.approve(request), asker.asked

    return asyncio.run(go())


def _picked(option: str) -> RequestPermissionResponse:
    return RequestPermissionResponse(outcome=AllowedOutcome(outcome="selected", option_id=option))


def test_each_answer_maps_onto_a_decision() -> None:
    rule = _request(suggested_rule="bash(touch *)")
    assert _approve(_picked("allow_once"), rule)[0].decision is Decision.ALLOW_ONCE
    assert _approve(_picked("allow_session"), rule)[0].decision is Decision.ALLOW_SESSION
    assert _approve(_picked("allow_always"), rule)[0].decision is Decision.ALLOW_ALWAYS
    assert _approve(_picked("reject"), rule)[0].decision is Decision.DENY


def test_cancelled_unknown_and_unoffered_answers_never_allow_more_than_offered() -> None:
    cancelled, _ = _approve(RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled")), _request())
    assert cancelled.decision is Decision.DENY and cancelled.reason == "the user cancelled"
    assert _approve(_picked("sudo"), _request())[0].decision is Decision.DENY
    assert _approve(_picked("allow_always"), _request())[0].decision is Decision.ALLOW_ONCE  # no rule was offered
    assert _approve(_picked("allow_session"), _request(always_ask=True))[0].decision is Decision.ALLOW_ONCE


def test_a_vanished_editor_ends_the_batch_and_an_error_answer_denies() -> None:
    gone, _ = _approve(ConnectionError("closed"), _request())
    assert gone.decision is Decision.DENY and gone.input_ended
    failed, _ = _approve(RuntimeError("bad answer"), _request())
    assert failed.decision is Decision.DENY and not failed.input_ended


def test_act_mode_approves_without_asking_but_a_person_only_call_is_still_asked() -> None:
    approval, asked = _approve(_picked("reject"), _request(), acting=True)
    assert approval.decision is Decision.ALLOW_ONCE and approval.by is ApprovedBy.AUTO and asked == 0
    approval, asked = _approve(_picked("allow_once"), _request(person_only="unclear command"), acting=True)
    assert approval.decision is Decision.ALLOW_ONCE and approval.by is ApprovedBy.USER and asked == 1


def test_prompt_blocks_become_the_task_text() -> None:
    blocks = [
        TextContentBlock(type="text", text="explain"),
        ResourceContentBlock(type="resource_link", uri="file:///work/project/a.py", name="a.py"),
        EmbeddedResourceContentBlock(type="resource", resource=TextResourceContents(uri="file:///x.py", text="x = 1")),
    ]
    assert prompt_text(blocks) == 'explain\n@/work/project/a.py\n<context uri="file:///x.py">\nx = 1\n</context>'


def test_the_line_check_lets_messages_through_and_names_what_is_wrong_with_the_rest() -> None:
    assert problem(b'{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}\n') is None
    assert problem(b'{"jsonrpc": "2.0", "id": 1, "result": {}}\n') is None
    assert problem(b"  \n") == ("", "")
    assert problem(b"not json\n") == (None, "Parse error")
    assert problem(b"[" * 10000) == (None, "Parse error")
    assert problem(b"[1]")[1].startswith("Invalid Request")  # type: ignore[index]
    assert problem(b'{"id": true, "method": "x"}')[1].startswith("Invalid Request")  # type: ignore[index]
    assert problem(b'{"id": 3, "method": 7}') == (3, "Invalid Request: the method is a string")
    assert problem(b'{"jsonrpc": "2.0"}')[1].startswith("Invalid Request")  # type: ignore[index]
    assert problem(b'{"id": 4, "method": "x", "params": 5}') == (4, "Invalid Request: params is an object or an array")


def test_the_editors_stdio_servers_join_the_config_with_names_minicode_can_carry(tmp_path: Path) -> None:
    from acp.schema import EnvVariable, HttpMcpServer, McpServerStdio

    from minicode.cli.frontends.acp.editor_mcp import with_editor_servers
    from minicode.config import Config, McpServerConfig, ModelConfig

    config = Config(model=ModelConfig(base_url="http://127.0.0.1:1/v1", name="m", api_key="k"), path=tmp_path / "c.toml",
                    mcp=(McpServerConfig(name="fs", command=("fs-server",)),))
    merged = with_editor_servers(config, [
        McpServerStdio(name="my tools", command="srv", args=["--x"], env=[EnvVariable(name="A", value="1")]),
        McpServerStdio(name="my__tools", command="srv2", args=[], env=[]),
        McpServerStdio(name="!!!", command="srv3", args=[], env=[]),
        HttpMcpServer(type="http", name="remote", url="https://example.invalid", headers=[]),
    ])
    assert [(s.name, s.command, s.trust) for s in merged.mcp] == [
        ("fs", ("fs-server",), False), ("my-tools", ("srv", "--x"), False), ("my_tools", ("srv2",), False),
        ("editor", ("srv3",), False)]
    assert merged.mcp[1].env == (("A", "1"),)
    assert with_editor_servers(config, None) is config and with_editor_servers(config, []) is config


def test_the_task_list_is_the_sessions_plan_and_plan_mode_a_line() -> None:
    from minicode.agent.events import ModeChanged, TodoUpdated
    from minicode.cli.frontends.acp.updates import UpdateMapper
    from minicode.tools.todo_list import TodoItem, TodoList

    mapper = UpdateMapper(Path("/ws"))
    todo = TodoList((TodoItem("read a.py", "done"), TodoItem("fix it", "in_progress"), TodoItem("ship", "blocked"),
                     TodoItem("test", "pending")))
    [plan] = mapper.updates(TodoUpdated(todo))
    assert plan.session_update == "plan"
    assert [(e.content, e.status) for e in plan.entries] == [("read a.py", "completed"), ("fix it", "in_progress"),
                                                             ("blocked: ship", "pending"), ("test", "pending")]
    [cleared] = mapper.updates(TodoUpdated(TodoList(), todo))
    assert cleared.entries == []  # ACP's plan is replaced whole: an empty one clears it
    [line] = mapper.updates(ModeChanged("plan", "entered"))
    assert "plan mode: read-only tools" in line.content.text
