"""The pure event -> JSON mapping of --output json/stream-json (cli/frontends/json/event_json.py)."""

from __future__ import annotations

import json

import pytest

from minicode.agent.approval import ApprovalRequest, ApprovedBy
from minicode.agent.batch import CANCELLED_RESULT
from minicode.agent.events import (
    ApprovalResolved,
    AssistantDone,
    CheckFinished,
    CheckResult,
    CheckStarted,
    ChecksFeedback,
    CompactionDone,
    ModelCallStarted,
    Notice,
    Retrying,
    TaskStatus,
    TextChunk,
    ToolFinished,
    ToolStarted,
    TurnFinished,
    TurnStarted,
)
from minicode.agent.stats import TaskStats
from minicode.cli.frontends.json.event_json import EventMapper, SessionInfo, encode_line, status_name
from minicode.provider.types import ToolCall, Usage
from tests.support.events import check_stream

INFO = SessionInfo("s-1", "/ws", "m", ("read", "bash"), False, 0, "json", "deny", "0.1.0", 32768, "llama.cpp /props")


def _lines(payloads) -> str:
    return "".join(encode_line(p).decode() for p in payloads)


def _stats(**kw) -> TaskStats:
    stats = TaskStats(wall_seconds=1.23456, model_calls=2, tool_calls=1)
    for key, value in kw.items():
        setattr(stats, key, value)
    return stats


def _run(mapper: EventMapper, *events) -> list:
    out = [mapper.opened(INFO)]
    for event in events:
        out += mapper.event(event)
    return out


def test_envelope_version_session_and_seq():
    mapper = EventMapper(stream=False)
    out = _run(mapper, TurnStarted("task"), AssistantDone("hi", "", 0), TurnFinished(TaskStatus.DONE, "hi", _stats()))
    assert [p["type"] for p in out] == ["session", "user", "assistant", "result"]
    assert all(p["v"] == 1 and p["session"] == "s-1" for p in out)
    assert [p["seq"] for p in out] == [1, 2, 3, 4]
    assert list(out[0])[:4] == ["v", "type", "session", "seq"]  # the envelope comes first
    assert out[0]["context_window"] == {"tokens": 32768, "source": "llama.cpp /props"}
    check_stream(_lines(out))


def test_a_tool_batch_maps_calls_approvals_and_results():
    calls = (ToolCall("c1", "bash", '{"command": "ls"}'), ToolCall("c2", "read", "{broken"))
    mapper = EventMapper(stream=False)
    request = ApprovalRequest("c1", "bash", "/ws", "ls", {"command": "ls"}, suggested_rule="bash(ls)")
    out = _run(
        mapper,
        TurnStarted("go"),
        AssistantDone("", "", 2, usage=Usage(10, 2, 12), tool_calls=calls, finish_reason="tool_calls"),
    )
    out.append(mapper.asked(request))
    out += mapper.event(ApprovalResolved("c1", "bash", True, ApprovedBy.AUTO))
    out += mapper.event(ToolFinished("c1", "bash", True, "exit 2", 2, 0.01234, result_text="boom\n[exit code 2]"))
    out += mapper.event(ToolFinished("c2", "read", True, "invalid call", None, 0.0, result_text="bad JSON"))
    out += mapper.event(TurnFinished(TaskStatus.DONE, "ok", _stats()))
    events = check_stream(_lines(out))
    kinds = [e["type"] for e in events]
    assert kinds == ["session", "user", "assistant", "tool_call", "tool_call", "approval", "approval",
                     "tool_result", "tool_result", "result"]
    assert events[2]["usage"] == {"prompt_tokens": 10, "completion_tokens": 2, "total_tokens": 12}
    assert events[3]["arguments"] == {"command": "ls"} and "raw_arguments" not in events[3]
    assert events[4]["arguments"] is None and events[4]["raw_arguments"] == "{broken"
    assert events[5] == {**events[5], "phase": "asked", "target": "/ws", "detail": "ls", "suggested_rule": "bash(ls)"}
    assert events[6] == {**events[6], "phase": "answered", "allowed": True, "by": "auto"}
    assert events[7]["status"] == "failed" and events[7]["exit_code"] == 2 and events[7]["duration_seconds"] == 0.012
    assert events[7]["text"] == "boom\n[exit code 2]"


def test_a_call_recovered_from_text_carries_from_text_and_a_native_one_does_not():
    calls = (ToolCall("text_call_1_1", "ls", "{}", from_text=True), ToolCall("c2", "read", '{"path": "a"}'))
    mapper = EventMapper(stream=False)
    out = _run(mapper, TurnStarted("go"), AssistantDone("Let me look:", "", 2, tool_calls=calls))
    events = check_stream(_lines(out), final=False)  # the schema knows the field
    assert events[2]["text"] == "Let me look:"
    assert events[3] == {**events[3], "id": "text_call_1_1", "arguments": {}, "from_text": True}
    assert "from_text" not in events[4]


@pytest.mark.parametrize("finished,status", [
    (ToolFinished("c", "bash", False, "exit 0", 0, 0.1), "done"),
    (ToolFinished("c", "bash", False, "exit 1", 1, 0.1), "failed"),
    (ToolFinished("c", "write", True, "denied", None, 0.0, denied=True), "denied"),
    (ToolFinished("c", "bash", True, "interrupted", None, 0.5, interrupted=True), "interrupted"),
])
def test_tool_status(finished, status):
    mapper = EventMapper(stream=False)
    assert mapper.event(finished)[0]["status"] == status


def test_calls_the_task_stopped_before_they_ran_still_get_a_result():
    calls = (ToolCall("c1", "bash", "{}"), ToolCall("c2", "bash", "{}"))
    mapper = EventMapper(stream=False)
    out = _run(
        mapper,
        TurnStarted("go"),
        AssistantDone("", "", 2, tool_calls=calls),
        ToolFinished("c1", "bash", True, "interrupted after 0.5 s", None, 0.5, interrupted=True, result_text="x"),
        TurnFinished(TaskStatus.INTERRUPTED, "", _stats(), "interrupted"),
    )
    events = check_stream(_lines(out))
    results = [e for e in events if e["type"] == "tool_result"]
    assert [(r["id"], r["status"]) for r in results] == [("c1", "interrupted"), ("c2", "interrupted")]
    assert results[1]["text"] == CANCELLED_RESULT
    assert events[-1]["status"] == "interrupted" and events[-1]["exit_code"] == 130


def test_results_carry_stats_usage_checks_and_the_running_exit_code():
    mapper = EventMapper(stream=False)
    check = CheckResult("pytest -q", False, 1, 2.5, output_tail="1 failed")
    out = _run(
        mapper,
        TurnStarted("one"),
        TurnFinished(TaskStatus.ERROR, "", _stats(), "HTTP 500"),
        TurnStarted("two"),
        TurnFinished(TaskStatus.CHECKS_FAILED, "tried", _stats(calls_with_usage=1, prompt_tokens=5, total_tokens=7,
                                                               completion_tokens=2), checks=(check,)),
        TurnStarted("three"),
        TurnFinished(TaskStatus.DONE, "fine", _stats(model_calls=0)),
    )
    first, second, third = [e for e in check_stream(_lines(out)) if e["type"] == "result"]
    assert (first["task"], first["status"], first["error"], first["exit_code"]) == (1, "error", "HTTP 500", 1)
    assert first["usage"] is None and first["stats"] == {"wall_seconds": 1.235, "model_calls": 2, "tool_calls": 1}
    assert second["status"] == "checks_failed" and second["answer"] == "tried"
    assert second["usage"] == {"prompt_tokens": 5, "completion_tokens": 2, "total_tokens": 7, "partial": True}
    assert second["checks"][0] == {"command": "pytest -q", "passed": False, "exit_code": 1, "duration_seconds": 2.5,
                                   "timed_out": False, "output_tail": "1 failed"}
    # a later success does not hide the earlier failure: the process still ends with 1
    assert third["status"] == "done" and third["exit_code"] == 1


def test_every_status_has_an_identifier_in_the_schema():
    schema = json.loads(open("docs/events.schema.json").read())
    allowed = set(schema["$defs"]["result"]["properties"]["status"]["enum"])
    assert {status_name(s) for s in TaskStatus} <= allowed


def test_other_events():
    mapper = EventMapper(stream=False)
    out = _run(
        mapper,
        TurnStarted("t"),
        ModelCallStarted(1),
        ToolStarted("c", "read", "a", "a"),
        Retrying(2, 4, 1.5, "HTTP 429 rate limited"),
        CompactionDone(9000, 1200, 14),
        Notice("the answer was cut off at the output limit"),
        CheckStarted("pytest", 1, 2),
        CheckFinished(CheckResult("pytest", True, 0, 0.4)),
        ChecksFeedback("tests failed: …", 1, 2),
        TurnFinished(TaskStatus.TIMED_OUT, "", _stats(), "timed out after 5 s"),
    )
    events = check_stream(_lines(out))
    by_type = {e["type"]: e for e in events}
    assert by_type["retry"] == {**by_type["retry"], "attempt": 2, "max_attempts": 4, "wait_seconds": 1.5,
                                "reason": "HTTP 429 rate limited"}
    assert by_type["compaction"]["tokens_before"] == 9000 and by_type["compaction"]["manual"] is False
    assert by_type["notice"]["text"].startswith("the answer was cut off")
    assert [e["phase"] for e in events if e["type"] == "check"] == ["started", "finished"]
    feedback = [e for e in events if e["type"] == "user"][-1]
    assert feedback["source"] == "checks" and feedback["round"] == 1 and feedback["task"] == 1
    assert events[-1]["status"] == "timed_out" and events[-1]["exit_code"] == 1
    # ModelCallStarted and ToolStarted are progress for the stderr lines only
    assert [e["type"] for e in events] == ["session", "user", "retry", "compaction", "notice", "check", "check",
                                           "user", "result"]


def test_stream_mode_does_not_send_the_text_a_third_time():
    mapper = EventMapper(stream=True)
    out = [mapper.opened(INFO), *mapper.event(TurnStarted("t"))]
    out += [mapper.delta("reasoning", "hm"), mapper.delta("text", "Hel"), mapper.delta("text", "lo")]
    out += mapper.event(TextChunk("ignored: chunks come through delta"))
    out += mapper.event(AssistantDone("Hello", "hm", 0))
    out += mapper.event(TurnFinished(TaskStatus.DONE, "Hello", _stats()))
    events = check_stream(_lines(out))
    assistant = next(e for e in events if e["type"] == "assistant")
    assert "text" not in assistant and "reasoning" not in assistant
    assert events[-1]["answer"] == "Hello"


def test_stream_mode_sends_the_text_when_the_deltas_do_not_add_up():
    mapper = EventMapper(stream=True)
    mapper.opened(INFO)
    mapper.event(TurnStarted("t"))
    mapper.delta("text", "partial answer of a failed stream")
    (first,) = mapper.event(AssistantDone("the real text", "", 0))
    assert first["text"] == "the real text" and "reasoning" not in first
    (second,) = mapper.event(AssistantDone("", "", 0))  # nothing streamed, nothing to say
    assert "text" not in second


def test_json_mode_always_has_text_and_reasoning_only_when_there_is_some():
    mapper = EventMapper(stream=False)
    (plain,) = mapper.event(AssistantDone("", "", 1))
    (thought,) = mapper.event(AssistantDone("a", "why", 0))
    assert plain["text"] == "" and "reasoning" not in plain
    assert thought["reasoning"] == "why"


def test_closing_result_only_when_the_last_line_is_not_the_runs_result():
    mapper = EventMapper(stream=False)
    _run(mapper, TurnStarted("t"), TurnFinished(TaskStatus.DONE, "a", _stats()))
    assert mapper.closing(0, None) is None
    closing = mapper.closing(130, "interrupted")  # e.g. SIGTERM while waiting for the next line
    assert closing is not None and closing["task"] is None and closing["status"] == "interrupted"
    assert closing["exit_code"] == 130 and closing["answer"] == "" and closing["usage"] is None
    assert mapper.closing(130, "interrupted") is None


def test_a_run_stopped_before_its_first_task_says_why_it_ends_130():
    """error says why the run does not end 0 — also when the stop came before any task (a
    signal while the session opened gave "error": null, unlike every other 130)."""
    closing = EventMapper(stream=False).closing(130, None)
    assert closing is not None and closing["status"] == "interrupted" and closing["error"] == "interrupted"


def test_a_failure_before_any_session_is_still_a_valid_line():
    mapper = EventMapper(stream=False)
    closing = mapper.closing(2, "config/config.toml: [model] name must be a string")
    events = check_stream(_lines([closing]))
    assert events[0]["session"] is None and events[0]["status"] == "error" and events[0]["exit_code"] == 2


def test_arguments_that_are_not_plain_json_objects_stay_raw():
    mapper = EventMapper(stream=False)
    raws = ['[1, 2]', '{"x": NaN}', '{"a": Infinity}', '"text"', "[" * 100_000]
    calls = tuple(ToolCall(f"c{i}", "bash", raw) for i, raw in enumerate(raws))
    out = mapper.event(AssistantDone("", "", len(calls), tool_calls=calls))[1:]
    assert [p["arguments"] for p in out] == [None] * len(raws)
    assert [p["raw_arguments"] for p in out] == raws
    for payload in out:
        json.loads(encode_line(payload))  # still strict JSON


def test_encode_line_is_one_utf8_line_without_lone_surrogates():
    line = encode_line({"text": "a\nb\u2028c é \udce9 \x00"})
    assert line.endswith(b"\n") and line.count(b"\n") == 1
    assert json.loads(line) == {"text": "a\nb\u2028c é \ufffd \x00"}
    assert "é".encode() in line  # not escaped: smaller, still valid


@pytest.mark.parametrize("char", ["\u2028", "\u2029", "\x85", "\x7f", "\x80", "\x9f", "\x1c", "\x1e", "\x0b", "\x0c"])
def test_encode_line_escapes_every_character_a_reader_may_split_lines_at(char):
    """str.splitlines (and older JavaScript) also breaks at U+2028/U+2029, NEL, the C1 and
    some C0 controls: each travels escaped, so "\\n" is the only line break a line holds."""
    line = encode_line({"text": f"a{char}b", char: 1})
    assert line.decode().splitlines() == [line.decode()[:-1]] and line.count(b"\n") == 1
    assert json.loads(line) == {"text": f"a{char}b", char: 1}
    assert char not in line.decode()


def test_encode_line_leaves_other_non_ascii_text_alone():
    text = "é ☃ 日本 \U0001f600 \xa0 \u2027 \u202a"
    assert encode_line({"t": text}) == ('{"t":"' + text + '"}\n').encode()


def test_a_failed_command_counts_like_a_failed_task_from_then_on():
    """The exit code rule of pipe mode: a command that failed makes every later result (and
    command) say 1, whatever they themselves did; one that worked changes nothing."""
    mapper = EventMapper(stream=False)
    out = [mapper.opened(INFO)]
    out.append(mapper.command("/model", 0, ["model m (change it with /model NAME)"], None))
    out.append(mapper.command("/think bogus", 1, ["error: unknown thinking level 'bogus'"], "unknown thinking level 'bogus'"))
    out += mapper.event(TurnStarted("hello"))
    out += mapper.event(TurnFinished(TaskStatus.DONE, "fine", _stats()))
    out.append(mapper.command("/think high", 0, ["thinking high for the rest of this session"], None))
    events = check_stream(_lines(out), final=False)
    first, failed, _, result, later = events[1:]
    assert (first["command"], first["line"], first["status"], first["error"], first["exit_code"]) == (
        "/model", "/model", "done", None, 0)
    assert first["text"] == "model m (change it with /model NAME)"
    assert (failed["command"], failed["line"], failed["status"], failed["exit_code"]) == ("/think", "/think bogus", "failed", 1)
    assert failed["error"] == "unknown thinking level 'bogus'"
    assert (result["status"], result["exit_code"]) == ("done", 1)
    assert (later["status"], later["exit_code"]) == ("done", 1)
    closing = mapper.closing(1, None)  # the last line is no result: one more says why it is 1
    assert closing is not None and closing["error"] == "/think bogus: unknown thinking level 'bogus'"


def test_the_closing_result_names_the_failed_task_its_code_comes_from():
    """A task failed, then a command worked: the run ends 1 and the closing result says
    which task made it so instead of ``error: null``."""
    mapper = EventMapper(stream=False)
    mapper.opened(INFO)
    mapper.event(TurnStarted("hello"))
    mapper.event(TurnFinished(TaskStatus.TIMED_OUT, "", _stats(), error="timed out after 5s"))
    mapper.command("/model", 0, ["model m"], None)
    closing = mapper.closing(1, None)
    assert closing is not None and (closing["status"], closing["exit_code"]) == ("error", 1)
    assert closing["error"] == "task 1: timed out after 5s"


def test_the_task_list_and_the_mode_are_events_of_their_own():
    from minicode.agent.events import ModeChanged, TodoUpdated
    from minicode.tools.todo_list import TodoItem, TodoList

    todo = TodoList((TodoItem("read a.py", "done"), TodoItem("fix \x1b[2J it", "in_progress")))
    out = _run(EventMapper(stream=False), ModeChanged("plan", "entered"), TurnStarted("t"), TodoUpdated(todo),
               TodoUpdated(TodoList(), todo), TurnFinished(TaskStatus.DONE, "ok", _stats()))
    events = check_stream(_lines(out))  # valid under the schema, no undeclared field
    assert [e["type"] for e in events] == ["session", "mode", "user", "todo", "todo", "result"]
    assert events[1]["mode"] == "plan" and events[1]["why"] == "entered"
    assert events[3]["items"] == [{"text": "read a.py", "status": "done"},
                                  {"text": "fix \x1b[2J it", "status": "in_progress"}]  # JSON escapes it
    assert events[3]["summary"] == "1/2 done" and events[4] == {**events[4], "items": [], "summary": "empty"}


def test_a_sub_agents_events_carry_its_agent_call_and_id_and_leave_the_tasks_calls_open():
    from minicode.agent.events import SubAgentEvent

    mapper = EventMapper(stream=True)
    agent_call = ToolCall("c1", "agent", '{"task": "find x"}')

    def sub(event):
        return SubAgentEvent("c1", "agent-1", event)

    child_stats = TaskStats(wall_seconds=0.5, model_calls=2, tool_calls=1, calls_with_usage=2, total_tokens=30)
    out = _run(
        mapper,
        TurnStarted("go"),
        AssistantDone("", "", 1, tool_calls=(agent_call,), finish_reason="tool_calls"),
        sub(TurnStarted("find x")),
        sub(AssistantDone("", "", 1, tool_calls=(ToolCall("c1", "read", '{"path": "a"}'),))),  # the same id as the task's
        sub(ToolStarted("c1", "read", "a", "")),
        sub(ToolFinished("c1", "read", False, "1 line", None, 0.01, result_text="1\ta")),
        sub(Notice("careful")),
        sub(AssistantDone("x is in a", "", 0)),
        sub(TurnFinished(TaskStatus.DONE, "x is in a", child_stats)),
        TurnFinished(TaskStatus.INTERRUPTED, "", _stats(subagents=1)),
    )
    events = check_stream(_lines(out))
    kinds = [e["type"] for e in events]
    assert kinds == ["session", "user", "assistant", "tool_call", "subagent", "assistant", "tool_call", "tool_result",
                     "notice", "assistant", "subagent", "tool_result", "result"]
    nested = [e for e in events if "agent_id" in e]
    assert len(nested) == 7 and all(e["parent_call_id"] == "c1" and e["agent_id"] == "agent-1" for e in nested)
    assert events[4] == {**events[4], "phase": "started", "task": "find x"}
    assert events[9]["text"] == "x is in a"  # a sub-agent's text is never streamed as deltas: always sent
    assert events[10] == {**events[10], "phase": "finished", "status": "done", "answer": "x is in a",
                          "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 30, "partial": False}}
    # the task's own agent call is still open when it is interrupted: closed as such, once
    assert events[11] == {**events[11], "id": "c1", "name": "agent", "status": "interrupted"}
    assert events[12]["stats"]["subagents"] == 1

def test_hook_reports_are_hook_events():
    from minicode.agent.events import HookReport

    out = _run(
        EventMapper(stream=False),
        TurnStarted("t"),
        HookReport("PreToolUse", "check-call", True, "not on Fridays", "bash"),
        HookReport("Stop", "lint", False, "timed out after 1 s (stopped)"),
        TurnFinished(TaskStatus.DONE, "", _stats()),
    )
    hooks = [e for e in check_stream(_lines(out)) if e["type"] == "hook"]
    assert [{k: v for k, v in h.items() if k not in ("v", "session", "seq", "type")} for h in hooks] == [
        {"event": "PreToolUse", "hook": "check-call", "outcome": "blocked", "text": "not on Fridays", "tool": "bash"},
        {"event": "Stop", "hook": "lint", "outcome": "failed", "text": "timed out after 1 s (stopped)"},
    ]
