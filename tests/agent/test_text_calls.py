"""Tool calls written as text (agent/text_calls.py): the two corpora, the rule's edges, hostile text."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from minicode.agent.text_calls import MAX_CALLS, MAX_TEXT_CHARS, Recovered, TextCall, recover_calls, recovered_message
from minicode.provider.types import Message, ToolSpec
from minicode.tools.registry import default_registry

DATA = Path(__file__).parent / "data"
TOOLS: tuple[ToolSpec, ...] = default_registry().specs()


@dataclass
class Case:
    why: str
    text: str
    expect: list[Any]
    lead: str


def _cases(name: str) -> list[Case]:
    """The cases of a corpus file (format in the file's own header)."""
    cases: list[Case] = []
    lines = (DATA / name).read_text(encoding="utf-8").split("\n")
    starts = [i for i, line in enumerate(lines) if line.startswith("%%% ")]
    for n, start in enumerate(starts):
        end = starts[n + 1] if n + 1 < len(starts) else len(lines)
        body = lines[start + 1 : end]
        expect: list[Any] = []
        lead = ""
        if body and body[0].startswith("expect: "):
            expect = json.loads(body[0].removeprefix("expect: "))
            body = body[1:]
            if body[0].startswith("lead: "):
                lead = json.loads(body[0].removeprefix("lead: "))
                body = body[1:]
            assert body[0] == "---", f"{name}: case {lines[start]!r} lacks its --- line"
            body = body[1:]
        text = "\n".join(body)
        cases.append(Case(lines[start][4:], text.removesuffix("\n") if n + 1 == len(starts) else text, expect, lead))
    return cases


PROSE = _cases("text_calls_prose.txt")
CALLS = _cases("text_calls_calls.txt")


def test_the_corpora_are_large_enough() -> None:
    assert len(PROSE) >= 30 and len(CALLS) >= 15
    assert all(case.text.strip() for case in PROSE + CALLS)
    assert all(case.expect for case in CALLS) and not any(case.expect for case in PROSE)


@pytest.mark.parametrize("case", PROSE, ids=[c.why for c in PROSE])
def test_prose_that_shows_json_is_never_a_call(case: Case) -> None:
    assert recover_calls(case.text, TOOLS) is None


@pytest.mark.parametrize("case", CALLS, ids=[c.why for c in CALLS])
def test_calls_written_as_text_are_recovered(case: Case) -> None:
    found = recover_calls(case.text, TOOLS)
    assert found is not None
    assert [[c.name, json.loads(c.arguments)] for c in found.calls] == case.expect
    assert found.lead == case.lead


def test_only_declared_tools_count() -> None:
    text = '```json\n{"name": "read", "arguments": {"path": "a.py"}}\n```'
    assert recover_calls(text, TOOLS) is not None
    assert recover_calls(text, [spec for spec in TOOLS if spec.name != "read"]) is None
    assert recover_calls(text, ()) is None  # no tools offered (the final summary): nothing is a call


@pytest.mark.parametrize(
    "text",
    [
        '{"name": "nope", "arguments": {}}',  # unknown tool
        '{"name": "read", "arguments": {"path": 3}}',  # wrong type
        '{"name": "read", "arguments": {}}',  # a required field missing
        '{"name": "read", "arguments": {"path": "a", "bogus": 1}}',  # an unknown field
        '{"name": "read", "arguments": "{not json"}',  # arguments as broken JSON text
        '{"name": "read", "arguments": "[1, 2]"}',  # arguments as JSON text, not an object
        '{"name": "read", "arguments": {"path": "a"}, "note": "x"}',  # a key calls do not have
        '{"name": "read", "tool": "ls", "arguments": {"path": "a"}}',  # two names
        '{"name": "read", "arguments": {"path": "a"}, "input": {"path": "b"}}',  # two argument sets
        '{"name": "read"}',  # no arguments at all
        '{"name": "bash", "arguments": {"command": "ls", "timeout": NaN}}',  # not JSON
        '{"name": "read", "arguments": {"path": "a"},}',  # a trailing comma
        "{'name': 'read', 'arguments': {'path': 'a'}}",  # single quotes only inside a fence or tag
        "```json\n{'name': 'read', 'arguments': {'path': 'a', 'limit': None}}\n```",  # None is Python, not JSON
        "```json\n{'name': 'read', 'arguments': {'path': 'a}}\n```",  # a quote that never closes
        '[]',  # an empty list of calls
        '{{"name": "read", "arguments": {"path": "a"}}',  # extra braces that do not close
        '{{"name": "read", "arguments": {"path": "a"}}}\n{"x": 1}',  # and JSON that is no call after it
        '```json\n{"name": "read", "arguments": {"path": "a"}}\n{"name": "nope", "arguments": {}}\n```',  # one bad of two
        '```json\n{"name": "read", "arguments": {"path": "a"}}\nand more\n```',  # more than calls in the fence
        '<tool_call>\n{"name": "read", "arguments": {"path": "a"}}\nplus words\n</tool_call>',
        '<tool_call>{"name": "read", "arguments": {"path": "a"}}</tool_call> and <tool_call>oops</tool_call>',
        '<function name="read" arguments=\'{"path": "a"}\'',  # an element never closed
        '<function name="read" arguments=\'{"path": "a"}\' arguments=\'{"path": "b"}\'/>',  # a repeated attribute
        '<function name="read" arguments=\'{"path": "a"}\'>{"path": "b"}</function>',  # arguments twice
        '<function name="read">{"path": "a"}',  # a body never closed
    ],
)
def test_malformed_or_invalid_calls_are_text(text: str) -> None:
    assert recover_calls(text, TOOLS) is None


def test_two_objects_each_a_call_are_two_calls() -> None:
    text = '{"name": "read", "arguments": {"path": "a"}}\n{"name": "read", "arguments": {"path": "b"}}'
    found = recover_calls(text, TOOLS)
    assert found == Recovered("", (TextCall("read", '{"path": "a"}'), TextCall("read", '{"path": "b"}')))


def test_json_in_the_middle_of_prose_is_text() -> None:
    call = '{"name": "read", "arguments": {"path": "a.py"}}'
    assert recover_calls(f"Let me read it.\n{call}", TOOLS) is not None
    assert recover_calls(f"Let me read it.\n{call}\nThen I'll fix it.", TOOLS) is not None  # short remarks
    middle = "The reader is told where the file is. " * 6
    assert recover_calls(f"{middle}\n{call}\n{middle}", TOOLS) is None  # long prose on both sides, no intent
    assert recover_calls(f"For example:\n{call}", TOOLS) is None


def test_long_prose_needs_first_person_intent() -> None:
    call = '```json\n{"name": "bash", "arguments": {"command": "pytest -q"}}\n```'
    lead = "The tests live in tests/ and use pytest; the failing one checks the parser's handling of empty input. " * 3
    assert len(lead) > 200
    assert recover_calls(lead + "\n" + call, TOOLS) is None
    assert recover_calls(lead + "I'll run them now:\n" + call, TOOLS) is not None
    assert recover_calls(lead * 5 + "I'll run them now:\n" + call, TOOLS) is None  # beyond the prose limit


def test_arguments_are_kept_as_the_model_gave_them() -> None:
    text = '{"name": "read", "arguments": {"path": "a.py", "limit": 2.0, "offset": null}}'
    found = recover_calls(text, TOOLS)
    assert found is not None and json.loads(found.calls[0].arguments) == {"path": "a.py", "limit": 2.0, "offset": None}


def test_unicode_in_arguments_survives() -> None:
    found = recover_calls('{"name": "write", "arguments": {"path": "é.txt", "content": "naïve ☃\\n"}}', TOOLS)
    assert found is not None and found.calls[0].arguments == '{"path": "é.txt", "content": "naïve ☃\\n"}'


def test_recovered_message_has_deterministic_ids_and_keeps_the_lead() -> None:
    message = Message(role="assistant", content='Let me look:\n{"name": "ls", "arguments": {}}', reasoning="hm")
    first = recovered_message(message, TOOLS, "text_call_4")
    assert first == recovered_message(message, TOOLS, "text_call_4")
    assert first is not None and first.content == "Let me look:" and first.reasoning == "hm"
    assert [(c.id, c.name, c.arguments, c.from_text) for c in first.tool_calls] == [("text_call_4_1", "ls", "{}", True)]
    bare = recovered_message(Message(role="assistant", content='{"name": "ls", "arguments": {}}'), TOOLS, "p")
    assert bare is not None and bare.content is None  # nothing but the call: no text is sent back
    assert recovered_message(Message(role="assistant", content="The answer is {42}."), TOOLS, "p") is None


# --- hostile text --------------------------------------------------------------------


def test_deep_nesting_is_text_not_an_error() -> None:
    deep = '{"name": "read", "arguments": {"path": "a", "x": ' + "[" * 100_000 + "]" * 100_000 + "}}"
    assert recover_calls(deep, TOOLS) is None
    assert recover_calls("```json\n" + "{" * 50_000 + "\n```", TOOLS) is None


def test_huge_text_is_not_scanned() -> None:
    content = "x" * MAX_TEXT_CHARS
    assert recover_calls(json.dumps({"name": "write", "arguments": {"path": "a", "content": content}}), TOOLS) is None
    big = "y" * 100_000  # a large file written in one call is still a call
    found = recover_calls(json.dumps({"name": "write", "arguments": {"path": "a", "content": big}}), TOOLS)
    assert found is not None and len(found.calls[0].arguments) > 100_000


def test_many_openers_stay_linear_and_are_text() -> None:
    text = "{ not json\n" * 15_000 + '{"name": "ls", "arguments": {}}'
    started = time.perf_counter()
    assert recover_calls(text, TOOLS) is None  # past the openers tried: text
    assert time.perf_counter() - started < 2.0


def test_too_many_calls_are_text() -> None:
    one = '{"name": "ls", "arguments": {}}'
    assert recover_calls("\n".join([one] * MAX_CALLS), TOOLS) is not None
    assert recover_calls("\n".join([one] * (MAX_CALLS + 1)), TOOLS) is None
    assert recover_calls("[" + ", ".join([one] * (MAX_CALLS + 1)) + "]", TOOLS) is None


def test_lone_surrogates_in_arguments_are_refused() -> None:
    assert recover_calls('{"name": "write", "arguments": {"path": "a", "content": "\\ud800"}}', TOOLS) is None


def test_control_characters_and_tags_in_prose_are_harmless() -> None:
    assert recover_calls("\x1b[2J<tools> are listed in the <function> docs {", TOOLS) is None
    assert recover_calls("<tool_call>", TOOLS) is None
    assert recover_calls("```json\n```", TOOLS) is None
