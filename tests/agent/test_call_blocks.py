"""Where the call blocks of an answer are (agent/call_blocks.py): prose pieces, values, repairs."""

from __future__ import annotations

import pytest

from minicode.agent.call_blocks import MAX_VALUES, NotCalls, scan


def test_prose_pieces_surround_the_blocks() -> None:
    prose, values = scan('Let me look:\n{"a": 1}\nthen\n```json\n{"b": 2}\n{"c": 3}\n```\ndone')
    assert values == [{"a": 1}, {"b": 2}, {"c": 3}]
    assert [p.strip() for p in prose] == ["Let me look:", "then", "done"]  # one piece per block, and one after


def test_text_without_blocks_is_one_piece() -> None:
    assert scan("no blocks { here, nor [there]\n{ not json") == (["no blocks { here, nor [there]\n{ not json"], [])


@pytest.mark.parametrize("text", [
    "```python\nprint({'a': 1})\n```",  # code
    '```json\n{"a": 1}\nand words\n```',  # more than values in the fence
    "<tool_call>\nnot json\n</tool_call>",
    '<tool_call>{"a": 1}</tool_call> trailing <tools>',  # an element with nothing in it
    "\n".join(['{"a": 1}'] * (MAX_VALUES + 1)),
    "{ x\n" * 100,  # openers past the limit
])
def test_what_is_not_calls_raises(text: str) -> None:
    with pytest.raises(NotCalls):
        scan(text)


def test_elements_and_repairs() -> None:
    assert scan('<tools>\n<function name="ls" arguments=\'{"path": "it\'s"}\'/>\n</tools>')[1] == [
        {"name": "ls", "arguments": {"path": "it's"}}]  # the JSON is read first: its quote is inside
    assert scan('<function name="ls">{"path": "."}</function>')[1] == [{"name": "ls", "arguments": {"path": "."}}]
    assert scan('{{"a": 1}}}')[1] == [{"a": 1}]
    assert scan("```json\n{'a': 'say \"hi\"', \"b\": \"it's\"}\n```")[1] == [{"a": 'say "hi"', "b": "it's"}]
    assert scan('```\n{"a": "line\nbreak"}')[1] == [{"a": "line\nbreak"}]  # raw newline, fence left open
