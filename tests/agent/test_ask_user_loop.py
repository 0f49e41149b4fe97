"""ask_user through the Session and the loop: the asker is asked, the model told, the question counted."""

from __future__ import annotations

import asyncio
import json
import time

import pytest

from minicode.agent.approval import AutoApprover
from minicode.agent.asking import Answer, AnswerKind, Question, UnattendedAsker
from minicode.agent.events import ApprovalResolved, QuestionResolved, TaskStatus, ToolFinished
from minicode.session.records import turn_end_record
from minicode.session.turn_ends import turn_end_from_record
from tests.agent.conftest import Events
from tests.agent.scripted import text, tools


class ScriptedAsker:
    """Answers from a list and records the questions; an empty list hangs (nobody answers)."""

    def __init__(self, *answers: Answer) -> None:
        self.answers = list(answers)
        self.questions: list[Question] = []

    async def ask(self, question: Question) -> Answer:
        self.questions.append(question)
        if not self.answers:
            await asyncio.Event().wait()
        return self.answers.pop(0)


async def _turn(session, asker, task="set it up"):
    events = Events()
    finished = await session.turn(task, approver=AutoApprover(), emit=events.append, asker=asker)
    return finished, events


def _result(session) -> str:
    return next(m.content for m in session.messages if m.role == "tool")


async def test_a_chosen_option_goes_back_marked_and_the_question_is_counted(open_session, provider):
    provider.script(tools(("ask_user", {"question": "Which database?", "options": ["Postgres", " SQLite "]})),
                    text("Using SQLite."))
    session = await open_session()
    asker = ScriptedAsker(Answer(AnswerKind.CHOSE, "SQLite"))
    finished, events = await _turn(session, asker)
    assert finished.status is TaskStatus.DONE
    assert asker.questions[0].text == "Which database?" and asker.questions[0].options == ("Postgres", "SQLite")
    assert _result(session) == "The user chose option 2:\n<answer>\nSQLite\n</answer>"
    [resolved] = events.of(QuestionResolved)
    assert (resolved.how, resolved.answer, resolved.options) == ("chose", "SQLite", ("Postgres", "SQLite"))
    assert not events.of(ApprovalResolved)  # no side effect: nobody approves a question
    assert [e.summary for e in events.of(ToolFinished)] == ["chose option 2"]
    assert finished.stats.questions == 1 and "1 question" in finished.stats.format()
    record = turn_end_record("done", finished.stats)
    assert record["stats"]["questions"] == 1
    assert turn_end_from_record(json.loads(json.dumps(record))).stats.questions == 1


async def test_a_typed_answer_and_a_declined_question(open_session, provider):
    provider.script(tools(("ask_user", {"question": "Port?"})), tools(("ask_user", {"question": "Host?"})), text("ok"))
    session = await open_session()
    finished, events = await _turn(session, ScriptedAsker(Answer(AnswerKind.ANSWERED, "8080"), Answer(AnswerKind.DECLINED)))
    results = [m.content for m in session.messages if m.role == "tool"]
    assert results[0] == "The user answered:\n<answer>\n8080\n</answer>"
    assert results[1].startswith("The user declined to answer.")
    assert [e.how for e in events.of(QuestionResolved)] == ["answered", "declined"]
    assert finished.stats.questions == 2


async def test_without_an_asker_the_answer_is_no_answer_at_once(open_session, provider):
    provider.script(tools(("ask_user", {"question": "Which?", "options": ["a", "b"]})), text("decided"))
    session = await open_session()
    started = time.monotonic()
    events = Events()
    finished = await session.turn("go", approver=AutoApprover(), emit=events.append)  # no asker given
    assert time.monotonic() - started < 5
    assert finished.status is TaskStatus.DONE
    assert _result(session).startswith("No answer available: nobody can be asked here (no terminal).")
    [done] = [e for e in events.of(ToolFinished) if e.name == "ask_user"]
    assert not done.is_error and done.summary == "no answer"


@pytest.mark.parametrize("arguments, said", [
    ({"question": "x" * 1_000_000}, "1,000,000 characters; ask it in at most 2,000"),
    ({"question": "q", "options": [str(i) for i in range(500)]}, "500 options; offer at most 9"),
])
async def test_what_cannot_be_asked_is_refused_before_anyone_is_asked(open_session, provider, arguments, said):
    provider.script(tools(("ask_user", arguments)), text("ok"), text("ok"))  # (a 1 MB call may be compacted first)
    session = await open_session()
    asker = ScriptedAsker()  # it would hang: asking it fails the test
    finished, _events = await _turn(session, asker)
    assert finished.status is TaskStatus.DONE and asker.questions == []
    assert said in _result(session)
    assert finished.stats.questions == 0


async def test_a_question_waiting_is_stopped_by_the_task_timeout(open_session, provider):
    provider.script(tools(("ask_user", {"question": "Still there?"})))
    session = await open_session()
    events = Events()
    finished = await session.turn("go", approver=AutoApprover(), emit=events.append, asker=ScriptedAsker(), timeout=0.3)
    assert finished.status is TaskStatus.TIMED_OUT
    assert [m.role for m in session.messages][-1] == "tool"  # the call is answered in the history


@pytest.mark.parametrize("reason", ["nobody can answer with --output json", "the run is unattended (--yes)"])
async def test_the_unattended_asker_answers_at_once_with_its_reason(reason):
    answer = await asyncio.wait_for(UnattendedAsker(reason).ask(Question("c1", "q?")), 1)
    assert answer == Answer(AnswerKind.UNAVAILABLE, reason) and not answer.answered



async def test_a_small_model_is_not_offered_ask_user_but_a_call_by_name_still_works(open_session, provider):
    from dataclasses import replace

    from tests.agent.conftest import make_config

    config = make_config()
    provider.script(tools(("ask_user", {"question": "Which?"})), text("ok"), text("ok"))  # (the assists may nudge once)
    session = await open_session(config=replace(config, model=replace(config.model, assists="on")))
    finished, events = await _turn(session, ScriptedAsker(Answer(AnswerKind.ANSWERED, "this one")))
    assert "ask_user" not in {t.name for t in provider.requests[0].tools}
    assert "ask_user" not in session.tool_names
    assert finished.status is TaskStatus.DONE and "this one" in _result(session)


async def test_a_run_where_nobody_can_answer_does_not_offer_ask_user(open_session, provider):
    provider.script(text("ok"))
    session = await open_session(questions=False)
    await _turn(session, UnattendedAsker())
    assert "ask_user" not in {t.name for t in provider.requests[0].tools}
    offered = await open_session()
    assert "ask_user" in offered.tool_names  # by default a person may be there to ask
