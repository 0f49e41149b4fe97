"""The Session: a thin coordinator of history, session file, model context, tools and turns.

Owns opening (new, ``--session ID``, ``-c``), the raw history (every message is appended to
the session file as it is added), "allow for the rest of the session", and the turn and
manual-compaction entry points frontends call. The loop (``agent.loop``), the context and
compaction (``agent.context``) and the file (``session.store``) do the work.
"""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path
from types import MappingProxyType
from typing import Callable, Mapping, Sequence

from minicode.agent.approval import Approver
from minicode.agent.context import ModelContext
from minicode.agent.events import AgentEvent, CheckResult, Notice, TurnFinished
from minicode.agent.deps import ToolOutcome, TurnDeps, TurnScope
from minicode.agent.loop import run_turn
from minicode.agent.prompt import system_message
from minicode.agent.repair import missing_results
from minicode.agent.stats import TaskStats
from minicode.compaction.checkpoint import Checkpoint
from minicode.compaction.trigger import Budget
from minicode.config import Config
from minicode.errors import MemoryFileError, SessionError
from minicode.memory import memory_write_validator
from minicode.permissions.store import PermissionStore
from minicode.provider.base import Provider
from minicode.provider.types import Message
from minicode.session.catalog import resolve_session_id
from minicode.session.history import StoredHistory
from minicode.session.reader import LoadedSession
from minicode.session.store import SessionStore, latest_session_id
from minicode.session.writer import OrderedWriter
from minicode.telemetry.base import NOOP_TRACER, AttributeValue, NoopSpan, Span, Tracer
from minicode.tools.base import ToolContext
from minicode.tools.bash import child_environment
from minicode.tools.registry import ToolRegistry, default_registry

__all__ = ["Session"]


class Session:
    """One conversation in one workspace (SPEC 4 and 5)."""

    def __init__(
        self,
        *,
        session_id: str,
        workspace: Path,
        store: SessionStore,
        writer: OrderedWriter,
        history: StoredHistory,
        context: ModelContext,
        provider: Provider,
        registry: ToolRegistry,
        tool_ctx: ToolContext,
        tracer: Tracer,
        warnings: list[str],
        permissions: PermissionStore | None = None,
        is_new: bool = False,
        checks: Sequence[str] = (),
        check_timeout: float = 120.0,
    ) -> None:
        self.id = session_id
        self.is_new = is_new
        """Created by this run (not ``--session``/``-c``): if it stays empty, ``aclose`` removes it."""
        self.workspace = workspace
        self.model = provider.model
        self.warnings = warnings
        self._store = store
        self._writer = writer
        self._history = history
        self._context = context
        self._provider = provider
        self._registry = registry
        self._tool_ctx = tool_ctx
        self._tracer = tracer
        self._allowed: set[str] = set()
        self.checks: list[str] = list(checks)
        """The acceptance checks run at the end of each task (``/check`` changes them)."""
        self.check_timeout = check_timeout
        self.permissions = permissions or PermissionStore(workspace, ())
        """The permission rules in effect (``/permissions`` lists and removes them)."""

    @classmethod
    async def open(
        cls,
        *,
        config: Config,
        workspace: Path,
        env: Mapping[str, str],
        resume: str | None = None,
        continue_latest: bool = False,
        provider: Provider | None = None,
        tracer: Tracer = NOOP_TRACER,
        registry: ToolRegistry | None = None,
    ) -> "Session":
        """A new session, or the one named by ``resume``, or the latest with ``continue_latest``.

        Raises SessionError (exit_code 2 for an unknown or malformed id, or nothing to continue).
        """
        workspace = workspace.resolve()
        async with contextlib.AsyncExitStack() as cleanup:
            # Undone in reverse order if anything below fails. The session owns the tracer it
            # was given, even when it fails to open.
            cleanup.push_async_callback(asyncio.to_thread, tracer.shutdown)
            # What can fail on bad config comes first: a failed start must not leave an
            # empty session file behind (``-c`` would pick it).
            permissions = PermissionStore(workspace, config.permissions, config.rule_files)
            if provider is None:
                provider = _create_provider(config, env)
                cleanup.push_async_callback(provider.aclose)
            registry = registry or default_registry()
            store, loaded = _open_store(workspace, resume, continue_latest)
            cleanup.callback(store.close)
            writer = OrderedWriter()
            cleanup.push_async_callback(writer.aclose)
            history, context, warnings = await _build_context(config, workspace, registry, provider, store, writer, loaded)
            secrets = _secrets(config)
            tool_ctx = ToolContext(
                workspace=workspace,
                env=_tool_env(config, env, secrets),
                secrets=secrets,
                validate_write=memory_write_validator(workspace),
            )
            session = cls(
                session_id=loaded.session_id, workspace=workspace, store=store, writer=writer, history=history,
                context=context, provider=provider, registry=registry, tool_ctx=tool_ctx, tracer=tracer,
                warnings=warnings, permissions=permissions, is_new=resume is None and not continue_latest,
                checks=config.task.checks, check_timeout=config.task.check_timeout,
            )  # fmt: skip
            cleanup.pop_all()
        return session

    # --- the frontends' API --------------------------------------------------------------

    @property
    def messages(self) -> Sequence[Message]:
        """The raw history (read-only view for frontends and tests)."""
        return self._history.messages

    def tool_outcomes(self) -> Mapping[str, ToolOutcome]:
        """How each recorded tool result ended, by tool_call_id (``is_error``, ``exit_code``).
        A resumed message is read when first needed: its entry appears once it was read
        (``messages[i]``, iteration). Results saved by older versions have no entry."""
        return MappingProxyType(self._history.outcomes)

    @property
    def tool_names(self) -> tuple[str, ...]:
        """The tools offered to the model, in the order they are declared."""
        return tuple(spec.name for spec in self._registry.specs())

    @property
    def is_empty(self) -> bool:
        """No message was ever recorded: there is nothing to resume."""
        return not self._history.messages

    @property
    def resume_command(self) -> str:
        return f"minicode --session {self.id}"

    @property
    def project_files(self) -> tuple[str, ...]:
        """The project files the model is given now: ``AGENTS.md (instructions)`` (or
        CLAUDE.md) and ``MiniCode.md (memory)``, for the start-up line."""
        return self._context.loaded_files()

    async def turn(
        self,
        user_text: str,
        *,
        approver: Approver,
        emit: Callable[[AgentEvent], None],
        max_turns: int = 500,
        timeout: float | None = None,
    ) -> TurnFinished:
        """Run one task; see ``agent.loop.run_turn``. The turn-end record is saved on every path."""
        deps = TurnDeps(
            provider=self._provider,
            tools=self._registry,
            tool_ctx=self._tool_ctx,
            approver=approver,
            history=self._history,
            context=self._context,
            tracer=self._tracer,
            session_allowed=self._allowed,
            permissions=self.permissions,
            span_attributes={"session.id": self.id, "model": self.model},
            checks=tuple(self.checks),
            check_timeout=self.check_timeout,
        )
        held: list[TurnFinished] = []

        def record(event: AgentEvent) -> None:
            if isinstance(event, TurnFinished):
                held.append(event)  # emitted once its record is saved (below)
            else:
                emit(event)

        try:
            await run_turn(deps, user_text, record, max_turns=max_turns, timeout=timeout)
        finally:
            if held:
                try:
                    await self._save_turn_end(held[0], emit)
                finally:
                    emit(held[0])
        return held[0]

    async def _save_turn_end(self, event: TurnFinished, emit: Callable[[AgentEvent], None]) -> None:
        try:
            await self._history.save_turn_end(event.status.value, event.stats, event.checks)
        except SessionError as e:
            emit(Notice(f"could not save the session: {e}"))

    async def compact(self, *, emit: Callable[[AgentEvent], None]) -> None:
        """Manual ``/compact``: reload memory, compact if there is anything, save at once.

        Says "nothing to compact" (no model call) or why it failed through ``emit``;
        raises MemoryFileError when MiniCode.md breaks the limits.
        """
        # No turn encloses a manual compaction: its ``minicode.compaction`` span (started by
        # the context, trigger=manual) is a root span, tagged with the session like a turn.
        tracer = _RootAttributes(self._tracer, {"session.id": self.id, "model": self.model})
        self._context.reload_memory()
        scope = TurnScope(TaskStats(), emit, NoopSpan(), tracer)
        await self._context.compact("manual", self._registry.specs(), scope)

    def context_usage(self) -> tuple[int, int]:
        """(estimated tokens of the next request, context window)."""
        return self._context.estimate(self._registry.specs()), self._context.budget.context_window

    async def aclose(self) -> bool:
        """Finish the pending writes, close the file and the provider, flush the tracer.

        Returns whether the session file was kept (so a resume hint makes sense): a new
        session that got no message is removed, since ``-c`` would skip it and there is
        nothing to resume. The tracer's shutdown may wait on the network: off the loop."""
        async with contextlib.AsyncExitStack() as stack:
            stack.push_async_callback(asyncio.to_thread, self._tracer.shutdown)
            stack.push_async_callback(self._provider.aclose)
            stack.callback(self._store.close)
            await self._writer.aclose()
        if not (self.is_new and self.is_empty):
            return True
        try:
            self._store.path.unlink(missing_ok=True)
        except OSError:  # left behind; harmless (-c skips a session without messages)
            return True
        return False


class _RootAttributes:
    """A tracer that adds the session's attributes to every span started through it."""

    def __init__(self, tracer: Tracer, attributes: Mapping[str, AttributeValue]) -> None:
        self._tracer = tracer
        self._attributes = dict(attributes)

    def start_span(
        self, name: str, attributes: Mapping[str, AttributeValue | None] | None = None, parent: Span | None = None
    ) -> Span:
        return self._tracer.start_span(name, {**self._attributes, **(attributes or {})}, parent)

    def shutdown(self) -> None:
        """Not this wrapper's to do: the session shuts its tracer down in ``aclose``."""


async def _build_context(
    config: Config,
    workspace: Path,
    registry: ToolRegistry,
    provider: Provider,
    store: SessionStore,
    writer: OrderedWriter,
    loaded: LoadedSession,
) -> tuple[StoredHistory, ModelContext, list[str]]:
    """The loaded history (its batch cut by a crash repaired) and the model context over it."""
    history = StoredHistory(store, writer, loaded)
    for result in missing_results(loaded.messages):  # self-repair of a batch cut by a crash
        await history.append(result, ToolOutcome(is_error=True, status="interrupted"))
    context = ModelContext(
        workspace=workspace,
        system=system_message(workspace, registry.specs()),
        history=history,
        provider=provider,
        budget=Budget.for_window(config.model.context_window),
        checkpoint=loaded.checkpoint,
        save_checkpoint=history.save_checkpoint,
    )
    warnings = list(loaded.warnings)
    try:
        context.reload_memory()
    except MemoryFileError as e:
        # Not fatal here: every turn reloads it and stops before any request while
        # it is broken, so the user can fix the file and retry in this session.
        warnings.append(str(e))
    if context.instructions.warning is not None:
        warnings.append(context.instructions.warning)
    return history, context, warnings


def _open_store(workspace: Path, resume: str | None, continue_latest: bool) -> tuple[SessionStore, LoadedSession]:
    if resume is None and continue_latest:
        resume = latest_session_id(workspace)
        if resume is None:
            raise SessionError(f"no session to continue in this workspace ({workspace})", exit_code=2)
    if resume is None:
        store, session_id = SessionStore.create(workspace)
        return store, LoadedSession(session_id=session_id, created="")
    return SessionStore.open(workspace, resolve_session_id(workspace, resume))


def _create_provider(config: Config, env: Mapping[str, str]) -> Provider:
    from minicode.provider.factory import create_provider
    from minicode.provider.wire import default_cache_path

    home = env.get("HOME")
    return create_provider(config.model, wire_cache=default_cache_path(Path(home)) if home else None)


def _secrets(config: Config) -> tuple[str, ...]:
    """The values no tool output may carry into the history (redacted by the registry)."""
    secrets = [config.model.api_key]
    if config.langfuse is not None:
        secrets.append(config.langfuse.secret_key)
    return tuple(s for s in secrets if s)


def _tool_env(config: Config, env: Mapping[str, str], secrets: tuple[str, ...]) -> dict[str, str]:
    names = [config.model.api_key_env] if config.model.api_key_env else []
    return child_environment(env, names, secrets)
