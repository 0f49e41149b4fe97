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
import importlib
from typing import Any, Mapping, Protocol, Sequence

from minicode.errors import ToolError
from dataclasses import dataclass, replace
from minicode.provider.types import ToolCall, ToolSpec
from minicode.redact import redact
from minicode.tools.arguments import parse_arguments, unknown_tool_message
from minicode.tools.base import Tool, ToolContext, ToolPreview, ToolResult
from minicode.tools.scrub import scrub
from minicode.tools.path_args import FILE_TOOLS, path_problem, settled_path
from minicode.tools.specs import DECLARED, Declared
from minicode.tools.truncate import cap_output
from minicode.tools.validate import validate_arguments

__all__ = ["SMALL_MODEL_UNDECLARED", "UNATTENDED_UNDECLARED", "DeferredTool", "NamedTools", "PreparedCall", "ToolRegistry", "default_registry",
           "default_tools"]

_ERROR_CHARS = 300
SMALL_MODEL_UNDECLARED = frozenset({"agent", "ask_user", "todo"})
"""Tools not declared to a model that gets the small-model assists from its first request
(docs/small-models.md): fewer tools to choose from help a 1.5B model; its sub-agent would be
the same small model, and a question it asks in an unattended run only costs a turn. A call
by name still works. ``todo`` is declared again while planning (``agent.plan_mode``): there
the list is what the model is asked for."""
UNATTENDED_UNDECLARED = frozenset({"ask_user"})
"""Tools not declared where nobody can answer (JSON mode, --yes, no terminal); callable by name."""


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


class NamedTools(Protocol):
    """Tools callable by name without being declared (MCP's ``server__tool``, ``mcp_client.tools``)."""

    def resolve(self, name: str) -> Tool | None: ...


class ToolRegistry:
    """The tools offered to the model, by name; ``named`` resolves names none of them has
    (their tools are not declared: the declarations, and so every request's start, stay the same)."""

    def __init__(self, tools: Sequence[Tool], named: NamedTools | None = None,
                 undeclared: frozenset[str] = frozenset()) -> None:
        by_name: dict[str, Tool] = {}
        for tool in tools:
            if tool.name in by_name:
                raise ValueError(f"duplicate tool name {tool.name!r}")
            by_name[tool.name] = tool
        self._tools = by_name
        self._named = named
        self._undeclared = undeclared
        self._specs = tuple(ToolSpec(t.name, t.description, t.parameters) for t in tools if t.name not in undeclared)

    def undeclaring(self, names: frozenset[str]) -> ToolRegistry:
        """The same tools with ``names`` left out of the declarations (a call by name still
        works): fewer tools for a small model (``SMALL_MODEL_UNDECLARED``)."""
        return ToolRegistry(list(self._tools.values()), self._named, self._undeclared | names)

    def specs(self) -> tuple[ToolSpec, ...]:
        """Declarations for the provider, in registration order."""
        return self._specs

    def get(self, name: str) -> Tool | None:
        tool = self._tools.get(name)
        if tool is None and self._named is not None:
            tool = self._named.resolve(name)
        return tool

    def names(self) -> tuple[str, ...]:
        return tuple(name for name in self._tools if name not in self._undeclared)

    def prepare(self, call: ToolCall) -> PreparedCall | ToolResult:
        """Validate ``call``; an ``is_error`` result explains to the model what to fix.
        Never raises: whatever the model sent (any name, any argument text) ends in one."""
        tool = self.get(call.name) if isinstance(call.name, str) else None
        if tool is None:
            return _error(unknown_tool_message(call.name, self.names()))
        args = parse_arguments(tool.name, call.arguments)
        if isinstance(args, str):
            return _error(args)
        try:
            # a remote tool's schema is the server's to check (ours knows the subset our tools use)
            raw = getattr(tool, "raw_arguments", False)
            problems, cleaned = ([], dict(args)) if raw else validate_arguments(tool.parameters, args)
            if problems:
                return _error(f"invalid arguments for {tool.name}: " + "; ".join(problems))
            if (bad_path := path_problem(cleaned)) is not None:
                return _error(f"invalid path for {tool.name}: {bad_path}")
            preview = tool.preview(cleaned)
        except Exception as e:  # noqa: BLE001 - a validation bug must not end the task
            return _error(f"the arguments of {tool.name} could not be checked: {_short(e)}")
        return PreparedCall(call_id=call.id, tool=tool, args=cleaned, preview=_scrubbed(preview))

    async def describe(self, prepared: PreparedCall, ctx: ToolContext) -> PreparedCall:
        """``prepared`` with its file path settled (``tools.path_args``: ``a/../b`` → ``b``) and
        the tool's context-aware preview, from its optional
        ``describe(args, ctx)`` (e.g. write's diff against the file on disk), redacted like
        results; the argument-only ``preview`` (redacted too) when the tool has none or
        describing fails — it is still true, just less informative. Never raises except
        ``asyncio.CancelledError``."""
        prepared = await _settle_path(prepared, ctx)
        describe = getattr(prepared.tool, "describe", None)
        preview = prepared.preview
        if describe is not None:
            try:
                preview = await describe(prepared.args, ctx)
            except asyncio.CancelledError:
                raise
            except Exception:  # noqa: BLE001 - a preview that cannot be made must not stop the call
                preview = prepared.preview
        safe = ToolPreview(_safe(preview.target, ctx), _safe(preview.detail, ctx), _safe(preview.body, ctx))
        return replace(prepared, preview=safe)

    async def check(self, prepared: PreparedCall, ctx: ToolContext) -> ToolResult | None:
        """The tool's optional ``precheck(args, ctx)`` before approval: an error result when
        the call is bound to fail (nothing worth asking the user about), else None.
        ``execute`` checks again: the file may change while the question waits. Any failure
        of the check itself is a result too; never raises except ``asyncio.CancelledError``."""
        precheck = getattr(prepared.tool, "precheck", None)
        if precheck is None:
            return None
        try:
            await precheck(prepared.args, ctx)
        except asyncio.CancelledError:
            raise
        except Exception as e:  # noqa: BLE001 - ToolError or a bug: either way a result, not a dead task
            return _failure(prepared.tool.name, e, ctx)
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
        except Exception as e:  # noqa: BLE001 - a tool bug becomes data, not a dead task
            return _failure(prepared.tool.name, e, ctx)
        capped = _clean(result.text, ctx)
        return result if capped == result.text else replace(result, text=capped)


async def _settle_path(prepared: PreparedCall, ctx: ToolContext) -> PreparedCall:
    """``prepared`` with its file path replaced by what it names (see ``tools.path_args``),
    so the preview, the rule check, the approval and the run all see the same file."""
    path = prepared.args.get("path")
    if prepared.tool.name not in FILE_TOOLS or not isinstance(path, str):
        return prepared
    try:
        settled = await asyncio.to_thread(settled_path, ctx.workspace, path)
        if settled == path:
            return prepared
        args = {**prepared.args, "path": settled}
        return replace(prepared, args=args, preview=_scrubbed(prepared.tool.preview(args)))
    except asyncio.CancelledError:
        raise
    except Exception:  # noqa: BLE001 - unresolvable here: the tool's own checks say why
        return prepared


def _failure(tool: str, error: Exception, ctx: ToolContext) -> ToolResult:
    """An exception as the error result the model sees: a ``ToolError`` says itself; anything
    else is named as unexpected, with its type and a short message."""
    if isinstance(error, ToolError):
        return ToolResult(text=_clean(str(error), ctx), is_error=True, summary="error")
    text = f"the {tool} tool failed unexpectedly: {_short(error)}"
    return ToolResult(text=_clean(text, ctx), is_error=True, summary="internal error")


def _short(error: BaseException) -> str:
    """``Type: message`` cut to a few hundred characters (some messages carry whole inputs)."""
    text = f"{type(error).__name__}: {error}"
    return text if len(text) <= _ERROR_CHARS else text[: _ERROR_CHARS - 1] + "…"


def _safe(text: str, ctx: ToolContext) -> str:
    """Text shown to a person (not the model): secrets redacted, valid Unicode."""
    return redact(scrub(text), ctx.secrets)


def _clean(text: str, ctx: ToolContext) -> str:
    """What of a tool's text may enter the history: secrets redacted, undecodable bytes
    replaced (they would poison the JSON of the session file and the request), capped."""
    # Redact before capping, so a cut cannot leave part of a secret behind.
    return cap_output(scrub(redact(text, ctx.secrets)))


def _error(text: str) -> ToolResult:
    return ToolResult(text=scrub(text), is_error=True, summary="invalid call")


def _scrubbed(preview: ToolPreview) -> ToolPreview:
    """A preview in valid Unicode (it is shown and recorded before ``describe`` redacts it)."""
    return ToolPreview(scrub(preview.target), scrub(preview.detail), scrub(preview.body))


class DeferredTool:
    """A tool declared from its spec (``tools/specs.py``) whose module is imported at its
    first use: ``preview`` (every call is prepared first), ``run``, or the optional
    ``describe``/``precheck`` the registry looks up. Declaring the tools in a first
    request then costs no tool module, and a task that never calls grep never loads it."""

    def __init__(self, declared: Declared) -> None:
        self.name = declared.name
        self.description = declared.description
        self.parameters: Mapping[str, Any] = declared.parameters
        self.side_effects = declared.side_effects
        self._home = declared.home
        self._tool: Tool | None = None

    def loaded(self) -> Tool:
        """The implementation (imported and created once)."""
        if self._tool is None:
            module, _, name = self._home.partition(":")
            self._tool = getattr(importlib.import_module(module), name)()
        return self._tool

    def preview(self, args: Mapping[str, Any]) -> ToolPreview:
        return self.loaded().preview(args)

    async def run(self, args: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
        return await self.loaded().run(args, ctx)

    def __getattr__(self, name: str) -> Any:
        """``describe``, ``precheck``: the implementation's, if it has them (AttributeError if not)."""
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self.loaded(), name)


def default_tools(extra: Sequence[Tool] = ()) -> list[Tool]:
    """The seven tools of SPEC 9, ``agent``, ``ask_user`` and ``todo``, in the order they are offered
    (each loaded when first used), then ``extra``: the tools a session offers only when it has
    something for them (``skill`` when a skill exists, ``tools.skills.tool.skill_tools``)."""
    return [*(DeferredTool(declared) for declared in DECLARED), *extra]


def default_registry(extra: Sequence[Tool] = ()) -> ToolRegistry:
    return ToolRegistry(default_tools(extra))
