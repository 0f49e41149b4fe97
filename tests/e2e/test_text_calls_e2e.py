"""Tool calls written as text (issue 25), end to end: the real executable against the scripted
server, whose reply is a call in a JSON block instead of a native tool call."""

from __future__ import annotations

import json
import re

from minicode.session.store import SessionStore
from tests.support.events import check_stream, of_type
from tests.support.fake_openai import Reply

CONTENT = "print('Hello, world!')\n"
AS_TEXT = (
    "I'll create the file:\n\n```json\n"
    + json.dumps({"name": "write", "arguments": {"path": "hello.py", "content": CONTENT}}, indent=2)
    + "\n```\n\nThis will create `hello.py`."
)


def test_a_call_written_as_text_runs_and_goes_back_as_a_real_call(e2e):
    e2e.server.script(Reply.text(AS_TEXT))
    r = e2e.run("--yes", "create hello.py printing Hello, world!")
    assert r.code == 0, r.stderr
    assert (e2e.workspace / "hello.py").read_text() == CONTENT
    # a call written as text turns the small-model assists on (auto): the change is checked at
    # once and, green, reported by minicode; the next run of this endpoint and model starts with them
    assert re.fullmatch(r"Created hello\.py; `python3? hello\.py` printed: Hello, world!\n", r.stdout)
    assert "minicode: write hello.py (recovered from text)" in r.stderr
    assert re.search(r"minicode: checking the change: python3? hello\.py", r.stderr)
    assert "minicode writes the report" in r.stderr
    assert "1 model call · 2 tool calls" in r.stderr
    e2e.server.script(Reply.text("One print call."))
    again = e2e.run("--yes", "--session", r.session_id, "What is in hello.py?")
    assert again.code == 0, again.stderr
    first = e2e.server.requests[1].messages
    assert "Fix the code the tests test" in first[0]["content"] and "Project memory" not in first[0]["content"]
    assert '<file path="hello.py">' in first[-1]["content"] and "Hello, world!" in first[-1]["content"]
    # the next request: the call as a real tool call (no JSON as text), then its result
    sent = e2e.server.requests[1].messages  # the resumed run's request carries the first run's history
    at = next(i for i, m in enumerate(sent) if m.get("tool_calls"))
    assistant, result = sent[at], sent[at + 1]
    assert assistant == {
        "role": "assistant", "content": "I'll create the file:",
        "tool_calls": [{"id": "text_call_1_1", "type": "function",
                        "function": {"name": "write", "arguments": json.dumps({"path": "hello.py", "content": CONTENT})}}],
    }  # fmt: skip
    assert result["role"] == "tool" and result["tool_call_id"] == "text_call_1_1"
    # the session file says it was recovered
    records = [json.loads(line) for line in e2e.session_file(r.session_id).read_text().splitlines()]
    (call,) = [c for rec in records if rec.get("role") == "assistant" for c in rec.get("tool_calls", [])]
    assert call["from_text"] is True and call["id"] == "text_call_1_1"  # the check is in its result, not a call
    store, loaded = SessionStore.open(e2e.workspace, r.session_id)
    store.close()
    assert [c.from_text for m in loaded.messages for c in m.tool_calls] == [True]


def test_a_call_written_as_text_is_asked_for_without_yes(e2e):
    e2e.server.script(Reply.text(AS_TEXT), Reply.text("I could not write it."))
    r = e2e.run("--output", "json", "create hello.py")
    assert r.code == 0, r.stderr
    assert not (e2e.workspace / "hello.py").exists()
    events = check_stream(r.stdout)
    (call,) = of_type(events, "tool_call")
    assert call["from_text"] is True and call["name"] == "write" and call["arguments"]["path"] == "hello.py"
    assert of_type(events, "assistant")[0]["text"] == "I'll create the file:"
    asked, answered = of_type(events, "approval")
    assert asked["phase"] == "asked" and asked["tool"] == "write"
    assert answered["allowed"] is False and answered["by"] == "policy"  # nobody to ask: denied, as any call
    told = e2e.server.requests[1].messages[-1]
    assert told["tool_call_id"] == "text_call_1_1" and told["content"].startswith("denied")


def test_prose_that_quotes_json_is_the_answer_and_native_requests_carry_nothing_new(e2e):
    answer = 'Your `package.json` now reads:\n\n```json\n{"name": "app", "scripts": {"test": "jest"}}\n```'
    e2e.server.script(Reply.tool("ls"), Reply.text(answer))
    r = e2e.run("--yes", "show the package file")
    assert r.code == 0, r.stderr
    assert r.stdout == answer + "\n" and "recovered" not in r.stderr
    assert len(e2e.server.requests) == 2
    assert all(b"from_text" not in q.raw and b"text_call" not in q.raw for q in e2e.server.requests)
    native = e2e.server.requests[1].messages[-2]["tool_calls"][0]
    assert native["function"] == {"name": "ls", "arguments": "{}"} and native["id"].startswith("call_")
