"""The tool registry: declares tools to the model, validates calls, runs them safely.

``prepare`` turns a raw ``ToolCall`` into a ``PreparedCall`` (or an error result the model
can act on) by parsing its JSON and checking it against the tool's schema. ``describe``
gives it a preview against the workspace as it is (a write's diff) for the approval.
``execute`` runs a prepared call: ``ToolError`` and unexpected exceptions become error
results (a tool bug must not kill the task), cancellation always propagates, secret
values are redacted (a config file or ``env`` output must not carry the API key into
history) and the output is capped.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, replace
from typing import Any, Mapping, Sequence

from minicode.errors import ToolError
from minicode.provider.types import ToolCall, ToolSpec
from minicode.redact import redact
from minicode.tools.base import Tool, ToolContext, ToolPreview, ToolResult
from minicode.tools.bash import BashTool
from minicode.tools.edit import EditTool
from minicode.tools.read import ReadTool
from minicode.tools.scrub import scrub
from minicode.tools.grep import GrepTool
from minicode.tools.search import GlobTool, LsTool
from minicode.tools.truncate import cap_output
from minicode.tools.validate import validate_arguments
from minicode.tools.write import WriteTool

__all__ = ["PreparedCall", "ToolRegistry", "default_registry", "default_tools"]


@dataclass(frozen=True, slots=True)
class PreparedCall:
    """A validated call, ready for approval and execution."""

    call_id: str
    tool: Tool
    args: Mapping[str, Any]
    preview: ToolPreview

    @property
    def side_effects(self) -> bool:
        return self.tool.side_effects


class ToolRegistry:
    """The tools offered to the model, by name."""

    def __init__(self, tools: Sequence[Tool]) -> None:
        by_name: dict[str, Tool] = {}
        for tool in tools:
            if tool.name in by_name:
                raise ValueError(f"duplicate tool name {tool.name!r}")
            by_name[tool.name] = tool
        self._tools = by_name
        self._specs = tuple(ToolSpec(t.name, t.description, t.parameters) for t in tools)

    def specs(self) -> tuple[ToolSpec, ...]:
        """Declarations for the provider, in registration order."""
        return self._specs

    def get(self, name: str) -> Tool | None:
        return self._tools.get(name)

    def names(self) -> tuple[str, ...]:
        return tuple(self._tools)

    def prepare(self, call: ToolCall) -> PreparedCall | ToolResult:
        """Validate ``call``; an ``is_error`` result explains to the model what to fix."""
        tool = self._tools.get(call.name)
        if tool is None:
            return _error(f"unknown tool {call.name!r}; available tools: {', '.join(sorted(self._tools))}")
        raw = call.arguments.strip()
        try:
            args = json.loads(raw, parse_constant=_no_constant) if raw else {}
        except _NonFinite as e:
            return _error(f"the arguments of {call.name} are not valid JSON: {e}; send finite numbers")
        except json.JSONDecodeError as e:
            return _error(
                f"the arguments of {call.name} are not valid JSON ({e.msg} at line {e.lineno} "
                f"column {e.colno}, char {e.pos}); send one JSON object"
            )
        if not isinstance(args, dict):
            return _error(f"the arguments of {call.name} must be a JSON object, got {type(args).__name__}")
        problems, cleaned = validate_arguments(tool.parameters, args)
        if problems:
            return _error(f"invalid arguments for {call.name}: " + "; ".join(problems))
        return PreparedCall(call_id=call.id, tool=tool, args=cleaned, preview=tool.preview(cleaned))

    async def describe(self, prepared: PreparedCall, ctx: ToolContext) -> PreparedCall:
        """``prepared`` with the tool's context-aware preview, from its optional
        ``describe(args, ctx)`` (e.g. write's diff against the file on disk), redacted like
        results; unchanged when the tool has none or describing fails (the argument-only
        ``preview`` is still true, just less informative)."""
        describe = getattr(prepared.tool, "describe", None)
        if describe is None:
            return prepared
        try:
            preview: ToolPreview = await describe(prepared.args, ctx)
        except asyncio.CancelledError:
            raise
        except Exception:  # noqa: BLE001 - a preview that cannot be made must not stop the call
            return prepared
        safe = ToolPreview(preview.target, _safe(preview.detail, ctx), _safe(preview.body, ctx))
        return replace(prepared, preview=safe)

    async def check(self, prepared: PreparedCall, ctx: ToolContext) -> ToolResult | None:
        """The tool's optional ``precheck(args, ctx)`` before approval: an error result when
        the call is bound to fail (nothing worth asking the user about), else None.
        ``execute`` checks again: the file may change while the question waits."""
        precheck = getattr(prepared.tool, "precheck", None)
        if precheck is None:
            return None
        try:
            await precheck(prepared.args, ctx)
        except ToolError as e:
            return ToolResult(text=_clean(str(e), ctx), is_error=True, summary="error")
        return None

    async def execute(self, prepared: PreparedCall, ctx: ToolContext) -> ToolResult:
        """Run a prepared call. Never raises except ``asyncio.CancelledError``."""
        keep, secrets = ctx.on_stopped, ctx
        if keep is not None:  # what a stopped tool leaves goes to the model too: clean it the same way
            ctx = replace(ctx, on_stopped=lambda text: keep(_clean(text, secrets)))
        try:
            result = await prepared.tool.run(prepared.args, ctx)
        except asyncio.CancelledError:
            raise
        except ToolError as e:
            result = ToolResult(text=str(e), is_error=True, summary="error")
        except Exception as e:  # noqa: BLE001 - a tool bug becomes data, not a dead task
            result = ToolResult(
                text=f"the {prepared.tool.name} tool failed unexpectedly: {type(e).__name__}: {e}",
                is_error=True,
                summary="internal error",
            )
        capped = _clean(result.text, ctx)
        if capped == result.text:
            return result
        return ToolResult(text=capped, is_error=result.is_error, exit_code=result.exit_code, summary=result.summary)


class _NonFinite(ValueError):
    """NaN/Infinity in arguments: Python's json accepts them, JSON does not."""


def _no_constant(name: str) -> Any:
    raise _NonFinite(f"{name} is not a JSON number")


def _safe(text: str, ctx: ToolContext) -> str:
    """Text shown to a person (not the model): secrets redacted, valid Unicode."""
    return redact(scrub(text), ctx.secrets)


def _clean(text: str, ctx: ToolContext) -> str:
    """What of a tool's text may enter the history: secrets redacted, undecodable bytes
    replaced (they would poison the JSON of the session file and the request), capped."""
    # Redact before capping, so a cut cannot leave part of a secret behind.
    return cap_output(scrub(redact(text, ctx.secrets)))


def _error(text: str) -> ToolResult:
    return ToolResult(text=text, is_error=True, summary="invalid call")


def default_tools() -> list[Tool]:
    """The seven tools of SPEC 9, in the order they are offered."""
    return [ReadTool(), LsTool(), GlobTool(), GrepTool(), WriteTool(), EditTool(), BashTool()]


def default_registry() -> ToolRegistry:
    return ToolRegistry(default_tools())
