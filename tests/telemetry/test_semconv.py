"""The pure mapping from minicode's span attributes to GenAI and Langfuse attributes."""

from __future__ import annotations

import json

from minicode.telemetry.semconv import (
    derived_attributes,
    error_attributes,
    start_attributes,
)


def test_each_span_kind_has_its_langfuse_type() -> None:
    assert start_attributes("minicode.model_call")["langfuse.observation.type"] == "generation"
    assert start_attributes("minicode.tool")["gen_ai.operation.name"] == "execute_tool"
    assert start_attributes("minicode.turn")["langfuse.observation.type"] == "agent"
    assert start_attributes("minicode.compaction") == {"langfuse.observation.type": "span"}


def test_unknown_span_kind_gets_nothing_fixed() -> None:
    assert start_attributes("something.else") == {}


def test_model_call_usage_becomes_gen_ai_usage_and_langfuse_usage_details() -> None:
    derived = derived_attributes(
        "minicode.model_call",
        {"model": "m", "usage.prompt_tokens": 10, "usage.completion_tokens": 2,
         "usage.total_tokens": 12, "finish_reason": "stop"},
    )
    assert derived["gen_ai.request.model"] == "m"
    assert derived["langfuse.observation.model.name"] == "m"
    assert derived["gen_ai.usage.input_tokens"] == 10
    assert derived["gen_ai.usage.output_tokens"] == 2
    assert derived["gen_ai.response.finish_reasons"] == ("stop",)
    assert json.loads(str(derived["langfuse.observation.usage_details"])) == {
        "input": 10, "output": 2, "total": 12}


def test_usage_details_skip_non_integer_values_and_other_span_kinds() -> None:
    derived = derived_attributes("minicode.model_call", {"usage.prompt_tokens": "lots"})
    assert "langfuse.observation.usage_details" not in derived
    # The turn's model is a request model, but not a Langfuse generation's model.
    turn = derived_attributes("minicode.turn", {"model": "m", "usage.total_tokens": 5})
    assert turn == {"gen_ai.request.model": "m"}


def test_failed_outcomes_get_a_langfuse_level() -> None:
    assert derived_attributes("minicode.tool", {"outcome": "denied"})[
        "langfuse.observation.level"] == "WARNING"
    assert "langfuse.observation.level" not in derived_attributes("minicode.tool", {"outcome": "ok"})
    assert derived_attributes("minicode.turn", {"status": "error"})[
        "langfuse.observation.level"] == "ERROR"
    assert derived_attributes("minicode.turn", {"status": "timed out"})[
        "langfuse.observation.level"] == "WARNING"
    assert "langfuse.observation.level" not in derived_attributes("minicode.turn", {"status": "done"})


def test_error_attributes() -> None:
    assert error_attributes("APIError", "APIError: boom") == {
        "error.type": "APIError",
        "langfuse.observation.level": "ERROR",
        "langfuse.observation.status_message": "APIError: boom",
    }
