"""The compaction trigger takes the larger of the server's count and minicode's own estimate:
a server that under-reports ``usage.prompt_tokens`` (or reports nothing) cannot let the context
grow past the window; and the messages a compaction replaced leave memory (issue 16 item 4).

Through the real Session and loop, with the small window of test_compaction_memory
(40,000 → limit 30,000, keep-recent 15,000).
"""

from __future__ import annotations

import pytest

from minicode.agent.events import CompactionDone, Notice, TaskStatus
from minicode.errors import APIError
from minicode.provider.types import Usage
from minicode.tokens import estimate_messages, estimate_tools
from tests.agent.scripted import text
from tests.compaction.fakes import reply
from tests.support.filler import prose
from tests.integration.test_compaction_memory import open_session, provider, records, run  # noqa: F401

ANSWER = prose(8_000)  # ~2,000 tokens, like the benches' answers (a run of one letter would be cut as a runaway)
TINY = Usage(100, 20, 120)  # what the scripted fake servers report for every request


@pytest.mark.parametrize("usage", [TINY, None], ids=["under-reported", "not-reported"])
async def test_a_server_that_under_reports_cannot_grow_the_context_past_the_budget(open_session, provider, usage):
    session = await open_session()
    limit = session._context.budget.limit
    compactions = 0
    for task in range(40):  # ~80,000 tokens of conversation: two to three compactions' worth
        provider.summaries.append(reply(f"SUMMARY {task}"))
        provider.script(text(ANSWER, usage=usage))
        finished, events = await run(session, f"task {task}")
        assert finished.status is TaskStatus.DONE
        compactions += len(events.of(CompactionDone))
        sent = provider.requests[-1]
        assert estimate_messages(sent.messages) + estimate_tools(sent.tools) <= limit
    assert compactions >= 2
    assert len(records(session, "checkpoint")) == compactions  # the file records each one
    assert len(session.messages) == 2 * 40  # the raw history is all there
    provider.summaries.clear()


async def test_the_server_count_still_wins_when_it_is_the_larger(open_session, provider):
    session = await open_session()
    limit = session._context.budget.limit
    provider.script(text("a1", usage=Usage(limit + 1, 1, limit + 2)))
    await run(session, "t1")  # our estimate: a few hundred tokens; the server's: over the limit
    provider.summaries.append(reply("SUMMARY"))
    provider.script(text("a2", usage=TINY))
    finished, _ = await run(session, "t2")
    assert finished.status is TaskStatus.DONE
    # nothing older than the kept part to summarise: no summary call, the request goes out
    assert not provider.chat_requests
    assert session.context_usage()[0] < limit  # the newest, tiny count calibrates now


async def test_a_failed_compaction_by_estimate_keeps_a_valid_state_and_says_why(open_session, provider):
    session = await open_session()
    for task in range(14):  # close to the limit by our estimate, the server says 100
        provider.script(text(ANSWER, usage=TINY))
        await run(session, f"task {task}")
    assert not records(session, "checkpoint")
    provider.summaries.append(APIError("upstream broke", status=500))
    provider.script(text("answer after the failed compaction", usage=TINY))
    finished, events = await run(session, "one more " + "z" * 8_000)
    assert finished.status is TaskStatus.DONE  # within the window: sent with the old context
    notices = [e.text for e in events.of(Notice)]
    assert any("compaction failed" in t and "summary request failed" in t for t in notices), notices
    assert session._context.checkpoint is None and not records(session, "checkpoint")
    assert provider.requests[-1].messages[1].content == "task 0"  # the whole history went out
    # the next task tries again and succeeds
    provider.summaries.append(reply("SUMMARY"))
    provider.script(text("fine", usage=TINY))
    finished, events = await run(session, "again")
    assert finished.status is TaskStatus.DONE and len(events.of(CompactionDone)) == 1
    assert len(records(session, "checkpoint")) == 1
