"""What a /models answer says: ids in every server shape, context windows, near names."""

from __future__ import annotations

import pytest

from minicode.provider.catalog import ModelInfo, near_names, parse_models


def test_openai_shape_in_order_each_id_once() -> None:
    data = {"object": "list", "data": [{"id": "b"}, {"id": "a"}, {"id": "b"}, {"object": "model"}]}
    assert parse_models(data) == (ModelInfo("b"), ModelInfo("a"))


@pytest.mark.parametrize("data", [
    [{"id": "m"}],  # a bare list
    {"models": [{"name": "m"}]},  # Ollama's /api/tags-like gateways
    {"data": ["m"]},  # ids as plain strings
    {"data": [{"model": "m"}]},
])
def test_other_list_shapes(data: object) -> None:
    assert [m.id for m in parse_models(data) or ()] == ["m"]


@pytest.mark.parametrize("data", [{"error": "nope"}, "text", None, 3, {"data": "m"}])
def test_not_a_model_list_is_none(data: object) -> None:
    assert parse_models(data) is None


@pytest.mark.parametrize(("entry", "window", "source"), [
    ({"context_length": 131072}, 131072, "context_length"),  # OpenRouter, Together
    ({"context_window": 8192}, 8192, "context_window"),  # Groq
    ({"max_model_len": 32768}, 32768, "max_model_len"),  # vLLM
    ({"max_context_length": "4096"}, 4096, "max_context_length"),  # a number sent as text
    ({"top_provider": {"context_length": 200000}}, 200000, "top_provider.context_length"),
    ({"meta": {"n_ctx_train": 4096}}, 4096, "meta.n_ctx_train"),  # llama.cpp
    ({"context_length": 0}, None, None),
    ({"context_length": True}, None, None),
    ({"context_length": -5}, None, None),
    ({"context_length": 1.5}, None, None),
    ({}, None, None),
])
def test_context_window_from_metadata(entry: dict[str, object], window: int | None, source: str | None) -> None:
    models = parse_models({"data": [{"id": "m", **entry}]})
    assert models == (ModelInfo("m", window, source),)


def test_near_names_prefers_case_and_vendor_prefix_then_spelling() -> None:
    ids = ["openai/gpt-4.1", "openai/gpt-4.1-mini", "GPT-4O", "llama3"]
    assert near_names("gpt-4.1", ids) == ["openai/gpt-4.1"]
    assert near_names("gpt-4o", ids) == ["GPT-4O"]
    assert near_names("lama3", ids) == ["llama3"]
    assert near_names("gpt4.1-mini", ids)[0] == "openai/gpt-4.1-mini"
    assert near_names("claude", ids) == []
    assert near_names("x", []) == []
