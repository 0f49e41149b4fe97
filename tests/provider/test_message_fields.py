"""Tests for the JSON-edge field readers of ``provider/messages.py`` (object_field, arguments_text)."""

from __future__ import annotations

import pytest

from minicode.provider.messages import arguments_text, object_field


def test_object_field_returns_a_nested_object() -> None:
    assert object_field({"function": {"name": "read"}}, "function") == {"name": "read"}


@pytest.mark.parametrize("raw", [{}, {"function": None}, {"function": "read"}, {"function": ["read"]}])
def test_object_field_is_empty_when_absent_null_or_not_an_object(raw: dict[str, object]) -> None:
    assert object_field(raw, "function") == {}


def test_arguments_text_keeps_a_string_verbatim_and_serialises_an_object() -> None:
    assert arguments_text('{"path": "a"}') == '{"path": "a"}'
    assert arguments_text({"path": "a"}) == '{"path": "a"}'
    assert arguments_text([1, 2]) == "[1, 2]"


@pytest.mark.parametrize("raw", [None, 3, 2.5, True])
def test_arguments_text_is_empty_for_anything_else(raw: object) -> None:
    assert arguments_text(raw) == ""
