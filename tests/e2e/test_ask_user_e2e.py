"""ask_user end to end (the real executable, the scripted server): nobody can be asked in JSON
mode, without a terminal or with --yes, so the tool is not offered and a call by name is told
"no answer available" at once."""

from __future__ import annotations

import json
import subprocess
import time

from tests.support.events import check_stream, of_type
from tests.support.fake_openai import Reply

QUESTION = {"question": "Which database should the app use?", "options": ["Postgres", "SQLite"]}


def _tool_result(request) -> str:
    return next(m["content"] for m in request.messages if m["role"] == "tool")


def test_json_mode_answers_no_answer_at_once_and_says_so_in_a_question_event(e2e):
    e2e.server.script(Reply.tool("ask_user", **QUESTION), Reply.text("Chose SQLite; said so."))
    started = time.monotonic()
    proc = subprocess.Popen(e2e.argv("--output", "json", "set up the app"), cwd=e2e.workspace, env=e2e.environ(),
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    out, err = proc.communicate(timeout=30)  # stdin is a pipe left empty: nobody could type an answer
    assert proc.returncode == 0, err
    assert time.monotonic() - started < 20
    events = check_stream(out)
    [question] = of_type(events, "question")
    assert question == {**question, "question": QUESTION["question"], "options": ["Postgres", "SQLite"],
                        "status": "unavailable", "answer": ""}
    kinds = [e["type"] for e in events]
    assert kinds.index("tool_call") < kinds.index("question") < kinds.index("tool_result")
    assert "approval" not in kinds  # a question is no side effect
    told = _tool_result(e2e.server.requests[1])
    assert told.startswith("No answer available: nobody can answer with --output json.")
    assert of_type(events, "tool_result")[0]["text"] == told
    assert events[-1]["stats"]["questions"] == 1
    assert "ask_user" not in events[0]["tools"]  # not offered: nobody could answer
    assert "ask_user" not in {t["function"]["name"] for t in e2e.server.requests[0].body["tools"]}


def test_pipe_mode_without_a_terminal_is_told_no_answer_and_the_question_is_in_the_record(e2e):
    e2e.server.script(Reply.tool("ask_user", **QUESTION), Reply.text("Went with SQLite."))
    r = e2e.run("set up the app")  # a new session: no controlling terminal, no /dev/tty
    assert r.code == 0, r.stderr
    assert "minicode: the model asked (no answer available): Which database should the app use?" in r.stderr
    assert "· 1 question" in r.stderr
    assert _tool_result(e2e.server.requests[1]).startswith(
        "No answer available: nobody can be asked here (no terminal).")
    records = [json.loads(line) for line in e2e.session_file(r.session_id).read_text().splitlines()]
    [end] = [rec for rec in records if rec.get("type") == "turn_end"]
    assert end["stats"]["questions"] == 1 and "1 question" in end["shown"]
    assert "ask_user" not in {t["function"]["name"] for t in e2e.server.requests[0].body["tools"]}


def test_yes_is_unattended_and_a_bad_question_is_the_models_to_fix(e2e):
    e2e.server.script(Reply.tool("ask_user", question="\x1b]0;PWNED\x07" + "why? " * 1000),
                      Reply.tool("ask_user", question="\x1b[2JWhich one?"), Reply.text("done"))
    r = e2e.run("--yes", "decide")
    assert r.code == 0, r.stderr
    assert "at most 2,000" in _tool_result(e2e.server.requests[1])
    told = [m["content"] for m in e2e.server.requests[2].messages if m["role"] == "tool"][-1]
    assert told.startswith("No answer available: the run is unattended (--yes).")
    assert "\x1b" not in r.stderr and "(no answer available): ␛[2JWhich one?" in r.stderr  # shown, not obeyed
