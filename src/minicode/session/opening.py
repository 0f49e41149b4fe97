"""Opening a session: the store, the history and its model context, the provider, tools' context.

Helpers of ``Session.open`` (and of ``/model``, ``/think``: a provider for other settings).
"""

from __future__ import annotations

import asyncio
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Mapping

from minicode.agent.assists import AssistState, small_model_reason
from minicode.agent.context import ModelContext
from minicode.agent.deps import ToolOutcome
from minicode.agent.prompt import system_message
from minicode.agent.repair import missing_results
from minicode.agent.window import ContextWindow
from minicode.config import DEFAULT_CONTEXT_WINDOW, Config, ModelConfig, user_config_path
from minicode.errors import MemoryFileError, SessionError
from minicode.permissions.store import PermissionStore
from minicode.provider import factory
from minicode.provider.base import Provider
from minicode.provider.deferred import DeferredProvider
from minicode.provider.wire import WireProfileCache, default_cache_path, host_key
from minicode.session.history import StoredHistory
from minicode.session.log import MessageLog
from minicode.session.reader import LoadedSession
from minicode.session.records import SessionSettings
from minicode.session.store import SessionStore, latest_session_id
from minicode.session.writer import OrderedWriter
from minicode.telemetry.base import AttributeValue, Span, Tracer
from minicode.tools.child_env import child_environment
from minicode.tools.registry import ToolRegistry

__all__ = [
    "open_permissions",
    "RootAttributes",
    "build_context",
    "context_window",
    "create_provider",
    "deferred_provider",
    "effective_model",
    "open_store",
    "secrets_of",
    "tool_env",
]


class RootAttributes:
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


async def build_context(
    config: Config,
    workspace: Path,
    registry: ToolRegistry,
    provider: Provider,
    store: SessionStore,
    writer: OrderedWriter,
    loaded: LoadedSession,
    window: ContextWindow,
    small_model: bool = False,
) -> tuple[StoredHistory, ModelContext, list[str]]:
    """The loaded history (its batch cut by a crash repaired) and the model context over it."""
    history = StoredHistory(store, writer, loaded)
    for result in missing_results(loaded.messages):  # self-repair of a batch cut by a crash
        await history.append(result, ToolOutcome(is_error=True, status="interrupted"))
    context = ModelContext(
        workspace=workspace,
        system=system_message(workspace, registry.specs(), small_model=small_model),
        history=history,
        provider=provider,
        window=window,
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


def open_store(workspace: Path, resume: str | None, continue_latest: bool) -> tuple[SessionStore, LoadedSession]:
    if resume is None and continue_latest:
        resume = latest_session_id(workspace)
        if resume is None:
            raise SessionError(f"no session to continue in this workspace ({workspace})", exit_code=2)
    if resume is None:
        store, session_id = SessionStore.create(workspace)
        # messages are read back from the file once a compaction lets them go (MessageLog.release)
        log = MessageLog(store.file_reader(), f"session file {store.path}")
        return store, LoadedSession(session_id=session_id, created="", messages=log)
    from minicode.session.catalog import resolve_session_id  # only a resume looks sessions up

    return SessionStore.open(workspace, resolve_session_id(workspace, resume))


def context_window(model: ModelConfig, env: Mapping[str, str]) -> ContextWindow:
    """The window of ``model``: configured, else what its server reported (remembered in the
    wire-profile cache), else the default with the server still to be asked."""
    if model.context_window is not None:
        return ContextWindow(model.context_window, "config")
    from minicode.provider.server_window import DEFAULT_SOURCE, ask_server_window  # a window not configured

    home = env.get("HOME")
    cache = WireProfileCache(default_cache_path(Path(home))) if home else None
    host = host_key(model.base_url)
    cached = cache.get_window(host, model.name) if cache is not None else None
    if cached is not None:
        tokens, source, _ = cached
        return ContextWindow(tokens, source) if tokens is not None else ContextWindow(DEFAULT_CONTEXT_WINDOW, DEFAULT_SOURCE)

    async def ask() -> tuple[int, str] | None:
        found = await ask_server_window(model.base_url, model.name, model.api_key, env=env)
        if found.lasting and cache is not None:
            await asyncio.to_thread(cache.put_window, host, model.name, found.tokens, found.source, found.note)
        return (found.tokens, found.source) if found.tokens is not None else None

    return ContextWindow(DEFAULT_CONTEXT_WINDOW, DEFAULT_SOURCE, ask)


def assist_state(model: ModelConfig, env: Mapping[str, str]) -> AssistState:
    """The small-model assists for ``model``: its ``[model].assists`` mode; in ``auto`` on from
    the start when the model's name says it is small or an earlier run learned it needs them
    (remembered in the wire-profile cache per endpoint and model, like the window)."""
    state = AssistState(model.assists)
    if state.mode != "auto":
        return state
    home = env.get("HOME")
    if home:
        cache, host = WireProfileCache(default_cache_path(Path(home))), host_key(model.base_url)
        state.remember = lambda reason: cache.put_assists(host, model.name, reason)
        remembered = cache.get_assists(host, model.name)
        if remembered is not None:
            state.learn(remembered)
            return state
    reason = small_model_reason(model.name)
    if reason is not None:
        state.learn(reason)
    return state


def create_provider(model: ModelConfig, env: Mapping[str, str]) -> Provider:
    home = env.get("HOME")
    return factory.create_provider(model, wire_cache=default_cache_path(Path(home)) if home else None, env=env)


def deferred_provider(model: ModelConfig, env: Mapping[str, str]) -> DeferredProvider:
    """Like ``create_provider``, built on first use or ``DeferredProvider.warm`` (the full
    screen draws first); what ``create_provider`` would refuse is refused now."""
    factory.check_model(model, env)
    return DeferredProvider(model.name, partial(create_provider, model, env))


def secrets_of(config: Config) -> tuple[str, ...]:
    """The values no tool output may carry into the history (redacted by the registry)."""
    secrets = [config.model.api_key]
    if config.langfuse is not None:
        secrets.append(config.langfuse.secret_key)
    return tuple(s for s in secrets if s)


def tool_env(config: Config, env: Mapping[str, str], secrets: tuple[str, ...]) -> dict[str, str]:
    names = [config.model.api_key_env] if config.model.api_key_env else []
    return child_environment(env, names, secrets)


def effective_model(configured: ModelConfig, recorded: SessionSettings, pinned: SessionSettings) -> ModelConfig:
    """The model settings a session runs with: ``--model``/``--think`` of this run (``pinned``)
    win, then what ``/model``/``/think`` recorded in the session, then the configuration."""
    name = pinned.model or recorded.model or configured.name
    thinking = pinned.thinking or recorded.thinking or configured.thinking
    return replace(configured, name=name, thinking=thinking)


def open_permissions(config: Config, workspace: Path, env: Mapping[str, str]) -> PermissionStore:
    """The rules in effect for a session: the configuration's, the workspace's saved ones (when
    minicode wrote them), with the per-user configuration directory protected too."""
    user = user_config_path(env)
    return PermissionStore(workspace, config.permissions, config.rule_files, env=env,
                           user_dirs=(user.parent,) if user is not None else ())
