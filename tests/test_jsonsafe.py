"""jsonsafe: JSON from untrusted sources — nesting bounded before the parser recurses, lone
surrogates repaired to U+FFFD on request (stored data that must stay usable)."""

from __future__ import annotations

import pytest

from minicode import jsonsafe


def test_nesting_past_the_limit_is_refused_before_parsing() -> None:
    with pytest.raises(jsonsafe.TooDeep):
        jsonsafe.loads("[" * 100_000 + "]" * 100_000)
    with pytest.raises(ValueError):  # what callers catch as "not valid JSON"
        jsonsafe.loads(b'{"a":' + b"{" * 65 + b"}" * 66)
    assert jsonsafe.loads('{"a": "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["}')["a"][0] == "["


def test_bytes_are_measured_like_their_text() -> None:
    """Bytes are counted undecoded on the common path (few openers) and decoded only to walk
    a document with many: the verdict and the position are the text's."""
    shallow = '{"a": "é[{"}'.encode()
    assert jsonsafe.loads(shallow) == {"a": "é[{"}
    inside = ('{"a": "é' + "[" * 100 + '", "b": [[1]]}').encode()  # openers in a string do not nest
    assert jsonsafe.loads(inside)["b"] == [[1]]
    deep = ('{"é": ' + "[" * 70 + "]" * 70 + "}").encode()
    with pytest.raises(jsonsafe.TooDeep) as from_bytes:
        jsonsafe.loads(deep)
    with pytest.raises(jsonsafe.TooDeep) as from_text:
        jsonsafe.loads(deep.decode())
    assert str(from_bytes.value) == str(from_text.value)


def test_lone_surrogates_are_kept_unless_repair_is_asked_for() -> None:
    assert jsonsafe.loads(r'"x\ud800"') == "x\ud800"  # tool arguments: the registry refuses them with a message
    assert jsonsafe.loads(r'"x\ud800"', repair_surrogates=True) == "x\ufffd"


@pytest.mark.parametrize("text", [
    rb'{"a":"x\ud800y"}', r'{"a":"x\uDBFFy"}', rb'{"a":"x\udc00y"}', r'{"a":"x' + "\ud800" + 'y"}',
])
def test_repair_replaces_every_lone_half_in_bytes_and_text(text: str | bytes) -> None:
    assert jsonsafe.loads(text, repair_surrogates=True) == {"a": "x\ufffdy"}


def test_repair_keeps_pairs_and_reaches_keys_and_nested_values() -> None:
    value = jsonsafe.loads(r'{"\ud800k":[{"v":"\ud83d\ude00\ude00"}],"n":1,"t":true,"z":null}', repair_surrogates=True)
    assert value == {"\ufffdk": [{"v": "\U0001f600\ufffd"}], "n": 1, "t": True, "z": None}


def test_an_escaped_backslash_before_u_is_not_a_surrogate() -> None:
    assert jsonsafe.loads(r'"\\ud800"', repair_surrogates=True) == "\\ud800"


def test_without_lone_surrogates_leaves_clean_values_alone() -> None:
    body = {"messages": [{"role": "user", "content": "ok \U0001f600"}], "n": 2}
    assert jsonsafe.without_lone_surrogates(body) == body
    assert jsonsafe.without_lone_surrogates({"m": ["a\udc80"]}) == {"m": ["a\ufffd"]}


def test_a_value_inside_other_text_is_read_up_to_its_end() -> None:
    text = 'Let me read: {"path": "a.py", "note": "}"} and more'
    value, end = jsonsafe.loads_prefix(text, text.index("{"))
    assert value == {"path": "a.py", "note": "}"} and text[end:] == " and more"
    assert jsonsafe.loads_prefix('{"a": "line\nbreak"}', 0, strict=False)[0] == {"a": "line\nbreak"}


def test_a_value_inside_other_text_is_bounded_and_errors_are_value_errors() -> None:
    with pytest.raises(jsonsafe.TooDeep):
        jsonsafe.loads_prefix("x " + "[" * 100_000, 2)
    with pytest.raises(ValueError):
        jsonsafe.loads_prefix("x {not json", 2)
    with pytest.raises(ValueError):  # raw control characters are refused unless strict=False
        jsonsafe.loads_prefix('{"a": "line\nbreak"}', 0)
