"""The Session: a thin coordinator of history, session file, model context, tools and turns.

Owns opening (new, ``--session ID``, ``-c``), the raw history (every message is appended to
the session file as it is added), "allow for the rest of the session", and the turn and
manual-compaction entry points frontends call. The loop (``agent.loop``), the context and
compaction (``agent.context``) and the file (``session.store``) do the work.
"""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import replace
from functools import partial
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Callable, Mapping, Sequence

from minicode.agent.assists import AssistState
from minicode.agent.approval import Approver
from minicode.agent.asking import Asker, UnattendedAsker
from minicode.agent.context import ModelContext
from minicode.agent.events import AgentEvent, ApprovalResolved, Notice, TurnFinished
from minicode.agent.hook_points import Hooks
from minicode.agent.deps import SubAgentSetup, ToolOutcome, ToolRunner, TurnDeps, TurnScope
from minicode.agent.plan_mode import PLAN_NOTE, PlanningTools
from minicode.agent.loop import run_turn
from minicode.agent.stats import TaskStats
from minicode.config import Config, SubagentConfig
from minicode.errors import SessionError
from minicode.memory import memory_write_validator
from minicode.permissions.store import PermissionStore
from minicode.provider.base import Provider
from minicode.provider.types import Message
from minicode.session.history import StoredHistory
from minicode.session.opening import (
    assist_state,
    RootAttributes,
    build_context,
    context_window,
    create_provider,
    effective_model,
    open_permissions,
    open_store,
    secrets_of,
    tool_env,
)
from minicode.session.notes import with_notes
from minicode.session.records import SessionSettings
from minicode.session.snapshots import SnapshotStore
from minicode.session.store import SessionStore
from minicode.session.switch import ModelSwitcher, ProviderFactory
from minicode.session.planning import Planning
from minicode.session.undoing import UndoAndRewind
from minicode.session.writer import OrderedWriter
from minicode.telemetry.base import NOOP_TRACER, NoopSpan, NoopTracer, Tracer
from minicode.tools.base import EditorFiles, Tool, ToolContext
from minicode.tools.registry import SMALL_MODEL_UNDECLARED, UNATTENDED_UNDECLARED, ToolRegistry, default_registry
from minicode.tools.skills.library import SkillLibrary, discover_skills

if TYPE_CHECKING:  # the SDK loads only when servers are configured
    from minicode.hooks.spec import HookSpec
    from minicode.mcp_client.manager import McpManager
from minicode.tools.tempfiles import TempJournal, clean_leftover_temps

__all__ = ["Session"]


class Session(UndoAndRewind, Planning):
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
        snapshots: SnapshotStore,
        switcher: ModelSwitcher,
        permissions: PermissionStore | None = None,
        is_new: bool = False,
        checks: Sequence[str] = (),
        check_timeout: float = 120.0,
        temps: TempJournal | None = None,
        assists: AssistState | None = None,
        mcp: McpManager | None = None,
        env: Mapping[str, str] | None = None,
        skills: SkillLibrary | None = None,
        subagents: SubagentConfig = SubagentConfig(),
        hooks: Sequence[HookSpec] = (),
    ) -> None:
        self.id = session_id
        self.skills = skills or SkillLibrary()
        """The skills found when the session opened (``/skills``; the ``skill`` tool serves them)."""
        self.mcp = mcp
        """The MCP servers (None: none configured); closed with the session."""
        self.assists = assists or AssistState("off")
        """The small-model assists (``[model].assists``; ``auto`` learns during the session)."""
        self._env: Mapping[str, str] = env or {}
        self._temps = temps
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
        self._snapshots = snapshots
        self._switcher = switcher
        self._planning_tools: PlanningTools | None = None
        self._notes: list[str] = []
        """What the next user message tells the model first (files changed by /undo, /rewind)."""
        self.checks: list[str] = list(checks)
        """The acceptance checks run at the end of each task (``/check`` changes them)."""
        self.check_timeout = check_timeout
        self.permissions = permissions or PermissionStore(workspace, ())
        """The permission rules in effect (``/permissions`` lists and removes them)."""
        self.subagents = subagents
        """The ``agent`` tool's limits (``[subagents]``); used when the registry offers it."""
        self._hooks = Hooks(hooks, workspace=workspace, env=tool_ctx.env, secrets=tool_ctx.secrets,
                            session_id=session_id, transcript=store.path) if hooks else None
        """The configured hooks (docs/hooks.md), run by the loop; None: none."""
        # a compaction keeps the task list verbatim (the todo calls that set it may be summarised)
        context.task_list = lambda: self.todo.as_text() if self.todo else ""

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
        pinned: SessionSettings = SessionSettings(),
        make_provider: ProviderFactory | None = None,
        mcp_attended: bool = False,
        questions: bool = True,
    ) -> "Session":
        """A new session, or the one named by ``resume`` (an id or a unique start of one), or
        the latest with ``continue_latest``.

        The model and thinking level: ``pinned`` (``--model``/``--think`` of this run) win over
        what ``/model``/``/think`` recorded in a resumed session, which wins over ``config``.
        ``make_provider`` builds a provider for other settings (``/model``, ``/think``); by
        default the configured adapter, unless ``provider`` is given (then there is none).
        ``mcp_attended``: a person can answer a remote MCP server's OAuth sign-in (the frontend
        shows the address through ``mcp.show_signin``); otherwise such a server needs sign-in.
        ``questions`` False: nobody can answer the model's questions in this run (JSON mode,
        ``--yes``, no terminal), so ``ask_user`` is not offered (a call by name is still answered).
        Raises SessionError (exit_code 2 for an unknown or malformed id, or nothing to continue).
        """
        workspace = workspace.resolve()
        if make_provider is None and provider is None:
            make_provider = partial(create_provider, env=env)
        async with contextlib.AsyncExitStack() as cleanup:
            # Undone in reverse order if anything below fails. The session owns the tracer it
            # was given, even when it fails to open.
            cleanup.push_async_callback(asyncio.to_thread, tracer.shutdown)
            resuming = resume is not None or continue_latest
            opened = open_store(workspace, resume, continue_latest) if resuming else None
            if opened is not None:
                cleanup.callback(opened[0].close)
            recorded = opened[1].settings if opened is not None else SessionSettings()
            model = effective_model(config.model, recorded, pinned)
            permissions = open_permissions(config, workspace, tool_env(config, env, secrets_of(config)))
            # What can fail on bad config comes before a new file: a failed start must not
            # leave an empty session file behind (``-c`` would pick it).
            if provider is None:
                assert make_provider is not None
                provider = make_provider(model)
                cleanup.push_async_callback(provider.aclose)
            assists = await asyncio.to_thread(assist_state, model, env)
            mcp = None
            # read once per session: the catalog is part of every request's cached prefix
            skills = await asyncio.to_thread(discover_skills, workspace, env)
            if registry is None and config.mcp:  # servers connect in the background from here on
                from minicode.session.mcp_setup import mcp_registry

                registry, mcp = mcp_registry(config, workspace, env, _skill_tools(skills), attended=mcp_attended)
                cleanup.push_async_callback(mcp.close)
            registry = registry or default_registry(_skill_tools(skills))
            if assists.on:  # fewer tools for a small model: not declared, still callable by name
                registry = registry.undeclaring(SMALL_MODEL_UNDECLARED)
            elif not questions:
                registry = registry.undeclaring(UNATTENDED_UNDECLARED)
            if opened is None:
                opened = open_store(workspace, None, False)
                cleanup.callback(opened[0].close)
            store, loaded = opened
            writer = OrderedWriter()
            cleanup.push_async_callback(writer.aclose)
            window = context_window(model, env)
            cleanup.callback(window.close)
            history, context, warnings = await build_context(config, workspace, registry, provider, store, writer,
                                                             loaded, window, small_model=assists.on)
            warnings = [*permissions.warnings, *warnings, *skills.notices]
            secrets = secrets_of(config)
            snapshots = SnapshotStore(workspace, loaded.session_id)
            warnings.extend(await _leftover_temps(workspace))
            temps = TempJournal(workspace)
            tool_ctx = ToolContext(
                workspace=workspace,
                env=tool_env(config, env, secrets),
                secrets=secrets,
                validate_write=memory_write_validator(workspace),
                before_replace=snapshots.before_replace,
                on_temp=temps.note,
            )
            session = cls(
                session_id=loaded.session_id, workspace=workspace, store=store, writer=writer, history=history,
                context=context, provider=provider, registry=registry, tool_ctx=tool_ctx, tracer=tracer,
                warnings=warnings, permissions=permissions, is_new=not resuming, snapshots=snapshots,
                switcher=ModelSwitcher(model, make_provider), env=env,
                checks=config.task.checks, check_timeout=config.task.check_timeout, temps=temps,
                assists=assists, mcp=mcp, skills=skills, subagents=config.subagents, hooks=config.hooks,
            )  # fmt: skip
            cleanup.pop_all()
        return session

    # --- the frontends' API --------------------------------------------------------------

    @property
    def messages(self) -> Sequence[Message]:
        """The raw history (read-only view for frontends and tests)."""
        return self._history.messages

    def use_editor_files(self, editor: EditorFiles | None) -> None:
        """The tools see files as the editor holds them (``minicode --acp`` with a client that
        offers its fs methods: unsaved buffers are what the model sees); None: the disk alone.
        The path checks stay the tools' own."""
        self._tool_ctx.editor = editor

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
        asker: Asker | None = None,
    ) -> TurnFinished:
        """Run one task; see ``agent.loop.run_turn``. The turn-end record is saved on every path.
        ``asker`` answers ``ask_user`` (``agent.asking``); None: nobody can be asked. In plan mode
        only the read-only tools are offered and run (``agent.plan_mode``)."""
        held: list[TurnFinished] = []
        planning = self.mode == "plan"
        tools = self._tools_for(planning)
        tool_ctx = replace(self._tool_ctx, on_todo=lambda todo: self.tool_changed_todo(todo, emit))
        deps = TurnDeps(
            provider=self._provider,
            tools=tools,
            tool_ctx=tool_ctx,
            approver=approver,
            history=self._history,
            context=self._context,
            tracer=self._tracer,
            session_allowed=self._allowed,
            permissions=self.permissions,
            span_attributes={"session.id": self.id, "model": self.model},
            checks=() if planning else tuple(self.checks),
            check_timeout=self.check_timeout,
            assists=self.assists,
            planning=planning,
            asker=asker or UnattendedAsker(),
            subagents=self._subagent_setup(),
            hooks=self._hooks,
        )
        task = self._history.messages.raw_count  # the raw id its user message will get
        self._snapshots.begin_task(task, user_text)
        ran_commands: list[bool] = []

        def record(event: AgentEvent) -> None:
            if isinstance(event, ApprovalResolved) and event.tool == "bash" and event.allowed:
                ran_commands.append(True)
            if isinstance(event, TurnFinished):
                held.append(event)  # emitted once its record is saved (below)
            else:
                emit(event)

        text = with_notes(user_text, [*self._notes, PLAN_NOTE] if planning else self._notes)
        if self.mcp is not None:  # a server's failure, said while the task runs (or waiting since)
            self.mcp.listen(lambda notice: emit(Notice(notice)))
        try:
            await run_turn(deps, text, record, max_turns=max_turns, timeout=timeout)
        finally:
            if self.mcp is not None:
                self.mcp.listen(None)
            if self._history.messages.raw_count > task:
                self._notes.clear()  # they went out with the user message
            if held:
                try:
                    await self._save_turn_end(held[0], emit, task if ran_commands else None)
                finally:
                    emit(held[0])
        return held[0]

    def _tools_for(self, planning: bool) -> ToolRunner:
        """The tools a turn offers: the read-only ones while planning (``agent.plan_mode``), made
        once (the same declarations keep the same estimate memo); else the registry's."""
        if not planning:
            return self._registry
        if self._planning_tools is None:
            self._planning_tools = PlanningTools(self._registry)
        return self._planning_tools

    def _subagent_setup(self) -> SubAgentSetup | None:
        """What an ``agent`` call's child loop gets; None when the registry has no agent tool."""
        if "agent" not in self._registry.names():
            return None
        limits = self.subagents
        return SubAgentSetup(limits.max_turns, float(limits.timeout), limits.per_task, self._context.window)

    async def _save_turn_end(self, event: TurnFinished, emit: Callable[[AgentEvent], None], commands: int | None) -> None:
        """The turn-end record and, when the task ran commands, the undo journal's note of it
        (/undo tells the user that commands' changes are not tracked): two files, each synced
        on its own thread at the same time; both landed (or failed, said) before this returns."""
        noting = None if commands is None else asyncio.ensure_future(
            asyncio.to_thread(self._snapshots.note_commands, commands))
        try:
            await self._history.save_turn_end(event.status.value, event.stats, event.checks)
        except SessionError as e:
            emit(Notice(f"could not save the session: {e}"))
        except BaseException:
            if noting is not None:  # stopped meanwhile: the note lands, but nobody awaits it
                noting.add_done_callback(_observed)
            raise
        if noting is not None:
            try:
                await noting
            except OSError as e:
                emit(Notice(f"could not note in the undo journal that commands ran: {e.strerror or e}"))

    # --- model and thinking (/model, /think) ---------------------------------------------

    @property
    def thinking(self) -> str | None:
        """The thinking level sent (None: no thinking fields are sent)."""
        return self._switcher.thinking

    async def set_model(self, name: str) -> None:
        """Use model ``name`` for the rest of the session (recorded: resume keeps it).
        SessionError (exit_code 2) for a name that cannot be one; nothing changes then."""
        await self._switch(name=name.strip())

    async def set_thinking(self, level: str) -> None:
        """Use thinking ``level`` (off|low|medium|high|max) for the rest of the session."""
        await self._switch(thinking=level.strip().lower())

    async def _switch(self, *, name: str | None = None, thinking: str | None = None) -> None:
        model, provider, settings = self._switcher.prepare(name=name, thinking=thinking)
        try:
            await self._history.save_settings(settings)
        except BaseException:
            await provider.aclose()
            raise
        old, self._provider = self._provider, provider
        self._context.provider = provider
        self._switcher.model = model
        self.model = provider.model
        if name is not None:  # another model: its own window (configured, remembered or to be asked)
            self._context.window.close()
            self._context.window = context_window(model, self._env)
        await old.aclose()

    async def compact(self, *, emit: Callable[[AgentEvent], None]) -> None:
        """Manual ``/compact``: reload memory, compact if there is anything, save at once.

        Says "nothing to compact" (no model call) or why it failed through ``emit``;
        raises MemoryFileError when MiniCode.md breaks the limits.
        """
        # No turn encloses a manual compaction: its ``minicode.compaction`` span (started by
        # the context, trigger=manual) is a root span, tagged with the session like a turn.
        tracer = RootAttributes(self._tracer, {"session.id": self.id, "model": self.model})
        self._context.reload_memory()
        scope = TurnScope(TaskStats(), emit, NoopSpan(), tracer)
        await self._context.compact("manual", self._registry.specs(), scope)

    def context_usage(self) -> tuple[int, int]:
        """(estimated tokens of the next request, context window)."""
        return self._context.estimate(self._registry.specs()), self._context.budget.context_window

    @property
    def context_window(self) -> int:
        """The context window in effect, in tokens (``context_source`` says where it came from)."""
        return self._context.budget.context_window

    @property
    def context_source(self) -> str:
        """Where the context window came from: ``config``, the server (``llama.cpp /props`` …),
        or ``default (unknown)``."""
        return self._context.window.source

    def learn_context_window(self, on_learned: Callable[[], None] | None = None) -> None:
        """Ask the server for its context window now, in the background (the full screen's
        status line shows it, redrawn through ``on_learned``); otherwise it is asked when the
        first compaction decision needs it."""
        self._context.window.start(on_learned)

    async def aclose(self) -> bool:
        """Finish the pending writes, close the file and the provider, flush the tracer.

        Returns whether the session file was kept (so a resume hint makes sense): a new
        session that got no message is removed, since ``-c`` would skip it and there is
        nothing to resume. The tracer's shutdown may wait on the network: off the loop."""
        async with contextlib.AsyncExitStack() as stack:
            if not isinstance(self._tracer, NoopTracer):  # nothing to flush: no thread hop for it
                stack.push_async_callback(asyncio.to_thread, self._tracer.shutdown)
            stack.push_async_callback(self._provider.aclose)
            if self.mcp is not None:
                stack.push_async_callback(self.mcp.close)
            stack.callback(self._context.window.close)
            stack.callback(self._store.close)
            if self._temps is not None and self._temps.noted:  # every write of this run ended: its journal is done
                stack.push_async_callback(asyncio.to_thread, self._temps.discard)
            await self._writer.aclose()
        if not (self.is_new and self.is_empty):
            return True
        try:
            self._store.path.unlink(missing_ok=True)
        except OSError:  # left behind; harmless (-c skips a session without messages)
            return True
        return False


def _skill_tools(skills: SkillLibrary) -> list[Tool]:
    """The ``skill`` tool when a skill exists (its module loaded only then)."""
    if not skills.skills:
        return []
    from minicode.tools.skills.tool import skill_tools

    return skill_tools(skills)


def _observed(future: asyncio.Future[None]) -> None:
    """Retrieve the outcome of a write nobody waits for any more (no "never retrieved" noise)."""
    if not future.cancelled():
        future.exception()


async def _leftover_temps(workspace: Path) -> list[str]:
    """Remove the write temp files a killed run left behind (see ``tools.tempfiles``); the
    warning that says so, if there were any."""
    removed = await asyncio.to_thread(clean_leftover_temps, workspace)
    if not removed:
        return []
    shown = ", ".join(removed[:3]) + (f" and {len(removed) - 3} more" if len(removed) > 3 else "")
    return [f"removed {len(removed)} temp file(s) an interrupted write left behind: {shown}"]
