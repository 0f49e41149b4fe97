"""Maps minicode's span attributes onto the OpenTelemetry GenAI conventions and Langfuse's.

The agent loop speaks one small vocabulary (``model``, ``usage.prompt_tokens``, ``tool.name``,
...). Backends understand others: OpenTelemetry's ``gen_ai.*`` semantic conventions, and
Langfuse's ``langfuse.observation.*`` attributes, which decide whether a span shows as a
generation with a model and token usage. This module derives those extra attributes. It is
pure: no SDK imports, no I/O. Only non-secret values go in, so only non-secret values come out;
it never copies message contents or tool arguments (the loop does not pass them at all).
"""

from __future__ import annotations

import json
from collections.abc import Mapping

# Re-exported: the names are defined at the Tracer seam, the mapping below is keyed by them.
from minicode.telemetry.base import SPAN_COMPACTION, SPAN_MODEL_CALL, SPAN_TOOL, SPAN_TURN

__all__ = [
    "SPAN_COMPACTION",
    "SPAN_MODEL_CALL",
    "SPAN_TOOL",
    "SPAN_TURN",
    "ExportValue",
    "derived_attributes",
    "error_attributes",
    "start_attributes",
]


ExportValue = str | int | float | bool | tuple[str, ...]
"""What an exported attribute may hold (OpenTelemetry also allows homogeneous sequences)."""

_LF_TYPE = "langfuse.observation.type"
_LF_LEVEL = "langfuse.observation.level"
_LF_STATUS_MESSAGE = "langfuse.observation.status_message"
_LF_MODEL = "langfuse.observation.model.name"
_LF_USAGE = "langfuse.observation.usage_details"

# Fixed attributes per span kind: what the span *is* in GenAI and Langfuse terms.
_START: dict[str, dict[str, ExportValue]] = {
    SPAN_TURN: {
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.agent.name": "minicode",
        _LF_TYPE: "agent",
    },
    SPAN_MODEL_CALL: {"gen_ai.operation.name": "chat", _LF_TYPE: "generation"},
    SPAN_TOOL: {"gen_ai.operation.name": "execute_tool", _LF_TYPE: "tool"},
    SPAN_COMPACTION: {_LF_TYPE: "span"},
}

# One-to-one renames, valid on every span kind.
_RENAMES = {
    "model": "gen_ai.request.model",
    "session.id": "gen_ai.conversation.id",
    "usage.prompt_tokens": "gen_ai.usage.input_tokens",
    "usage.completion_tokens": "gen_ai.usage.output_tokens",
    "tool.name": "gen_ai.tool.name",
    "tool.call_id": "gen_ai.tool.call.id",
}

# minicode usage key -> Langfuse usage_details key.
_USAGE_KEYS = {
    "usage.prompt_tokens": "input",
    "usage.completion_tokens": "output",
    "usage.total_tokens": "total",
}


def start_attributes(span_name: str) -> dict[str, ExportValue]:
    """The fixed attributes a span of this kind carries from its start (empty if unknown)."""
    return dict(_START.get(span_name, {}))


def derived_attributes(
    span_name: str, attributes: Mapping[str, ExportValue]
) -> dict[str, ExportValue]:
    """The extra GenAI/Langfuse attributes implied by one batch of minicode attributes."""
    derived: dict[str, ExportValue] = {
        _RENAMES[key]: value for key, value in attributes.items() if key in _RENAMES
    }
    finish_reason = attributes.get("finish_reason")
    if isinstance(finish_reason, str):
        derived["gen_ai.response.finish_reasons"] = (finish_reason,)
    if span_name == SPAN_MODEL_CALL:
        model = attributes.get("model")
        if isinstance(model, str):
            derived[_LF_MODEL] = model
        usage = {
            name: value
            for key, name in _USAGE_KEYS.items()
            if isinstance(value := attributes.get(key), int) and not isinstance(value, bool)
        }
        if usage:
            derived[_LF_USAGE] = json.dumps(usage, sort_keys=True)
    level = _level(span_name, attributes)
    if level is not None:
        derived[_LF_LEVEL] = level
    return derived


def error_attributes(error_type: str, message: str) -> dict[str, ExportValue]:
    """Attributes marking a span as failed; ``message`` must already be scrubbed."""
    return {"error.type": error_type, _LF_LEVEL: "ERROR", _LF_STATUS_MESSAGE: message}


def _level(span_name: str, attributes: Mapping[str, ExportValue]) -> str | None:
    """A Langfuse level for outcomes worth a glance: failed tools, turns that did not finish."""
    if span_name == SPAN_TOOL and attributes.get("outcome") in ("error", "denied"):
        return "WARNING"
    if span_name == SPAN_TURN:
        status = attributes.get("status")
        if status == "error":
            return "ERROR"
        if isinstance(status, str) and status != "done":
            return "WARNING"
    return None
