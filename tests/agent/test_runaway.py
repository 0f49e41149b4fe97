"""The runaway guard (agent/runaway.py): exact repetition trips it, legitimate repetitive
output never does, and the loop cuts a runaway stream like a stop at the output limit."""

from __future__ import annotations

import json
import random

import pytest

from minicode.agent.approval import AutoApprover
from minicode.agent.events import Notice, TextChunk
from minicode.agent.runaway import MIN_REPEATED_CHARS, SMALL_MODEL_REPEATED_CHARS, WINDOW, RepetitionGuard
from tests.agent.conftest import Events
from tests.agent.scripted import text


def _feed(whole: str, step: int = 7, min_repeated: int = MIN_REPEATED_CHARS):
    guard = RepetitionGuard(min_repeated)
    for i in range(0, len(whole), step):
        found = guard.feed(whole[i : i + step])
        if found is not None:
            return found, guard.total
    return None, guard.total


# --- legitimate output that repeats itself in part: none of it may trip the guard -------------

def _code() -> str:
    return "".join(f"    self.assertEqual(parse(row_{i}), expected[{i}])  # row {i} must parse\n" for i in range(400))


def _table() -> str:
    head = "| name | size | kind |\n|------|------|------|\n"
    return head + "".join(f"| file_{i:03}.py | {i * 37 % 900} | module |\n" for i in range(300))


def _numbered() -> str:
    return "".join(f"{i}. Check the configuration and restart the service.\n" for i in range(1, 300))


def _rows() -> str:
    return "date,open,close\n" + "".join(f"2024-{d // 28 + 1:02}-{d % 28 + 1:02},100,{100 + d % 7}\n" for d in range(330))


def _rules() -> str:
    return ("=" * 80 + "\n" + "Section\n" + "=" * 80 + "\n" + "-" * 80 + "\n") * 6 + "Done.\n"


def _json_objects() -> str:
    return json.dumps([{"id": i, "name": "item", "enabled": True, "tags": ["a", "b"]} for i in range(200)], indent=2)


def _box() -> str:
    return "+" + "-" * 78 + "+\n" + ("|" + " " * 78 + "|\n") * 20 + "+" + "-" * 78 + "+\n"


def _log() -> str:
    return "".join(f"12:00:{s % 60:02}.{s * 7 % 1000:03} INFO worker-{s % 4} heartbeat ok\n" for s in range(400))


def _diff() -> str:
    return "".join(f"-    value_{i} = old_call({i})\n+    value_{i} = new_call({i})\n" for i in range(200))


def _prose() -> str:
    words = "the model reads the file then it edits the function and runs the tests again".split()
    pick = random.Random(25)  # few distinct words, never an exact period
    return " ".join(pick.choice(words) + ("." if pick.random() < 0.08 else "") for _ in range(3000))


def _hex() -> str:
    return "\n".join(f"{r * 16:08x}: " + " ".join(f"{(r * 16 + c) % 256:02x}" for c in range(16)) for r in range(200))


def _same_lines_then_prose() -> str:
    return "    pass\n" * 20 + _prose()


def _stars() -> str:
    return "".join("*" * n + "\n" for n in range(1, 60))  # a growing triangle: no words in it


def _paths() -> str:
    return "".join("/".join(f"dir{i}" for i in range(n)) + "\n" for n in range(1, 40))  # grows by a segment


def _fibonacci() -> str:
    a, b, lines = 0, 1, []
    for n in range(120):
        lines.append(f"fib({n}) = {a}")
        a, b = b, a + b
    return "\n".join(lines) + "\n"  # grows now and then, not one step every line


LEGIT = {
    "a triangle of stars": _stars,
    "paths a segment longer each": _paths,
    "a Fibonacci table": _fibonacci,
    "similar code lines": _code,
    "markdown table": _table,
    "numbered list": _numbered,
    "repeated-but-varying rows": _rows,
    "80-column rules": _rules,
    "JSON array of similar objects": _json_objects,
    "ASCII box": _box,
    "log lines": _log,
    "a diff": _diff,
    "long prose": _prose,
    "hex dump": _hex,
    "a few identical lines": _same_lines_then_prose,
}


@pytest.mark.parametrize("name", sorted(LEGIT))
@pytest.mark.parametrize("step", [1, 5, 64, 5000])
@pytest.mark.parametrize("min_repeated", [MIN_REPEATED_CHARS, SMALL_MODEL_REPEATED_CHARS])
def test_legitimate_repetitive_output_never_trips(name, step, min_repeated):
    found, total = _feed(LEGIT[name](), step, min_repeated)
    assert found is None, name
    assert total > 1000  # the corpus item is long enough to matter


# --- runaway output: cut early -----------------------------------------------------------------


def test_a_repeated_paragraph_is_found_after_a_few_copies():
    paragraph = "I apologize for the confusion. Let me correct the code above so that it works.\n"
    found, total = _feed("Here is the plan.\n" + paragraph * 500)
    assert found is not None and found.period == len(paragraph)
    assert found.copies >= 4 and total < MIN_REPEATED_CHARS + 200  # cut long before the 40,000


def test_one_character_and_a_short_phrase_repeated():
    assert _feed("x" * 10_000, 1)[0].period == 1
    found, _ = _feed("Answer: " + "the the " * 2000, 3)
    assert found is not None and found.period == 4


def test_a_long_block_repeated_needs_four_copies():
    block = "".join(f"def helper_{i}(value):\n    return value * {i}\n\n" for i in range(25))  # ~1,000 chars
    assert _feed(block * 3)[0] is None
    found, _ = _feed(block * 5)
    assert found is not None and found.period == len(block)


def test_one_huge_delta_is_checked_once():
    guard = RepetitionGuard()
    assert guard.feed("") is None
    found = guard.feed("abc" * 100_000)
    assert found is not None and found.period == 3 and found.repeated <= WINDOW


def _counting(cases: int) -> str:
    """The live runaway: test cases of a forced write, one word longer each, in a JSON string."""
    letters = "abcdefghijklmnopqrstuvwxyz"
    rows = "".join(f"    ('{' '.join(letters[:n])}', '{' '.join(reversed(letters[:n]))}'),\\n" for n in range(3, 3 + cases))
    return '{"name": "write", "arguments": {"path": "t.py", "content": "import pytest\\n\\ncases = [\\n' + rows


def test_a_small_models_counting_loop_is_cut_after_a_dozen_lines():
    from minicode.agent.runaway import GROWING_LINES, one_copy

    whole = _counting(23)
    found, total = _feed(whole, 5, SMALL_MODEL_REPEATED_CHARS)
    assert found is not None and found.growing and total < len(whole)
    kept = one_copy(whole[:total], found)
    assert kept.endswith("cases = [\\n    ('a b c', 'c b a'),")  # the run's first line is kept
    assert _feed(_counting(GROWING_LINES - 2), 5, SMALL_MODEL_REPEATED_CHARS)[0] is None  # a short list is fine
    assert _feed(whole, 5, MIN_REPEATED_CHARS)[0] is None  # a capable model's is never judged so


# --- the loop ----------------------------------------------------------------------------------


async def test_the_loop_cuts_a_runaway_answer_like_a_length_stop(open_session, provider):
    paragraph = "I will now fix the bug in calc.py by changing the operator.\n"
    provider.script(text("Plan:\n" + paragraph * 400), text("next"))
    session = await open_session()
    events = Events()
    finished = await session.turn("fix it", approver=AutoApprover(), emit=events.append)
    notices = [n.text for n in events.of(Notice)]
    assert len(notices) == 1 and notices[0].startswith(
        f"the answer was cut off: the model repeated the same {len(paragraph)} characters ")
    assert notices[0].endswith(" times (the copies were dropped)")
    streamed = "".join(c.text for c in events.of(TextChunk))
    assert len(streamed) < MIN_REPEATED_CHARS + 100  # the rest of the stream was never read
    assert provider.closed_streams == 1
    kept = finished.final_text  # one copy of the span is kept (cut where the copies were counted)
    assert kept.startswith("Plan:\n" + paragraph.strip()) and len(kept) < len("Plan:\n") + 2 * len(paragraph)
    assert session.messages[-1].content == kept
    # the next task goes out normally
    again = Events()
    await session.turn("again", approver=AutoApprover(), emit=again.append)
    assert again.of(Notice) == []


async def test_the_loop_cuts_runaway_reasoning(open_session, provider):
    provider.script(text("ok", reasoning="Wait, let me think. " * 500))
    session = await open_session()
    events = Events()
    await session.turn("x", approver=AutoApprover(), emit=events.append)
    assert [n.text.split(":")[0] for n in events.of(Notice)] == ["the reasoning was cut off"]
    assert session.messages[-1].reasoning == "Wait, let me think. "
    assert session.messages[-1].content is None or session.messages[-1].content == ""


async def test_a_legitimate_long_answer_is_not_cut(open_session, provider):
    provider.script(text(_table()))
    session = await open_session()
    events = Events()
    finished = await session.turn("x", approver=AutoApprover(), emit=events.append)
    assert events.of(Notice) == [] and finished.final_text == _table()


async def test_with_the_assists_on_a_short_line_looping_is_cut_sooner(open_session, provider):
    from dataclasses import replace

    from tests.agent.conftest import make_config

    line = "- No changes were made to textkit/slug.py\n"  # live, after a fix that passed its tests
    provider.script(text("Files changed:\n- textkit/slug.py\n" + line * 300))
    config = make_config()
    session = await open_session(config=replace(config, model=replace(config.model, assists="on")))
    events = Events()
    await session.turn("What changed?", approver=AutoApprover(), emit=events.append)
    streamed = "".join(c.text for c in events.of(TextChunk))
    assert SMALL_MODEL_REPEATED_CHARS <= len(streamed) < SMALL_MODEL_REPEATED_CHARS + 200
    assert any(n.text.startswith("the answer was cut off: the model repeated") for n in events.of(Notice))


async def test_with_the_assists_on_a_counting_loop_is_cut_and_said_so(open_session, provider):
    from dataclasses import replace

    from tests.agent.conftest import make_config

    provider.script(text(_counting(40)), text("Sorry."), text("Sorry."), text("Sorry."))
    config = make_config()
    session = await open_session(config=replace(config, model=replace(config.model, assists="on")))
    events = Events()
    await session.turn("Write tests for reverse_words in text/test_words.py", approver=AutoApprover(),
                       emit=events.append)
    assert any("line after line of one shape, each longer than the last" in n.text for n in events.of(Notice))
    assert "('a b c d e f g h i j k l m n o', " not in (session.messages[2].content or "")  # the run dropped
    again = provider.requests[1]  # asked again, short, and hotter: at 0.2 the same loop comes back
    assert (again.messages[-1].content or "").startswith("Your last answer was cut off: it went on and on")
    assert again.temperature is not None and again.temperature > 0.5
