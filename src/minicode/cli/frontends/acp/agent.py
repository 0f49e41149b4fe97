"""minicode as an ACP agent: the SDK's ``Agent`` methods over minicode's sessions.

Each editor session is a minicode ``Session`` of the editor's directory (its config loaded
the way the command line loads it), so its file is the one the terminal writes: a session
started in the terminal loads here, and one started here continues with ``minicode
--session ID``. A prompt is one task (``Session.turn``) whose events reach the editor as
updates (``updates``); ``session/cancel`` cancels that task — the loop's Esc path: tools
killed, the history saved, the prompt answered "cancelled".
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Coroutine, Mapping

from acp import PROTOCOL_VERSION, Client, RequestError, update_agent_message_text
from acp.helpers import update_available_commands, update_current_mode
from acp.schema import (
    AgentCapabilities,
    ClientCapabilities,
    Implementation,
    InitializeResponse,
    ListSessionsResponse,
    LoadSessionResponse,
    McpCapabilities,
    NewSessionResponse,
    PermissionOption,
    PromptCapabilities,
    PromptResponse,
    SessionCapabilities,
    SessionInfo,
    SessionListCapabilities,
    SetSessionConfigOptionResponse,
    SetSessionModeResponse,
    StopReason,
    ToolCallUpdate,
)

from minicode import __version__
from minicode.agent.events import AgentEvent, Retrying, TaskStatus, TurnFinished
from minicode.cli.args import Options
from minicode.cli.frontends.acp.approver import EditorApprover
from minicode.cli.frontends.acp.client_files import ClientFiles
from minicode.cli.frontends.acp.commands import available_commands, is_command, run_command
from minicode.cli.frontends.acp.editor_mcp import with_editor_servers
from minicode.cli.frontends.acp.prompt import Prompt, prompt_text
from minicode.cli.frontends.acp.replay import replay
from minicode.cli.frontends.acp.sender import UpdateSender
from minicode.cli.frontends.acp.session_options import MODES, config_options, modes_state, set_option
from minicode.cli.frontends.acp.updates import UpdateMapper
from minicode.config import Config
from minicode.errors import MinicodeError
from minicode.session.session import Session

__all__ = ["MinicodeAgent"]

log = logging.getLogger("minicode.acp")

LIST_PAGE = 100
"""Sessions per session/list answer."""

Loader = Callable[[Path], Config]


@dataclass(eq=False)
class _Open:
    """One editor session: minicode's session and what reports its turns."""

    session: Session
    sender: UpdateSender
    mapper: UpdateMapper
    mode: str
    configured_model: str
    running: asyncio.Future[Any] | None = field(default=None)
    busy: bool = False  # a prompt (a task or a command) is being answered
    accepted: str = ""  # the plan just accepted (leaving plan mode): the next prompt carries it out
    def emit(self, event: AgentEvent) -> None:
        for update in self.mapper.updates(event):
            self.sender.send(update)
        if isinstance(event, Retrying):
            log.info("%s", event.describe())


class MinicodeAgent:
    def __init__(self, options: Options, config: Config, start: Path, load: Loader, env: Mapping[str, str]) -> None:
        self._options = options
        self._configs: dict[Path, Config] = {start: config}
        self._start = start
        self._load = load
        self._env = env
        self._conn: Client | None = None
        self._client_reads = False
        self._client_writes = False
        self._sessions: dict[str, _Open] = {}

    def on_connect(self, conn: Client) -> None:
        self._conn = conn

    # --- the protocol's requests ----------------------------------------------------------

    async def initialize(self, protocol_version: int, client_capabilities: ClientCapabilities | None = None,
                         client_info: Implementation | None = None, **kwargs: Any) -> InitializeResponse:
        fs = client_capabilities.fs if client_capabilities is not None else None
        self._client_reads = bool(fs is not None and fs.read_text_file)
        self._client_writes = bool(fs is not None and fs.write_text_file)
        return InitializeResponse(
            protocol_version=PROTOCOL_VERSION,  # the one version there is; a client asking another decides
            agent_capabilities=AgentCapabilities(
                load_session=True,
                prompt_capabilities=PromptCapabilities(image=False, audio=False, embedded_context=True),
                mcp_capabilities=McpCapabilities(http=False, sse=False),
                session_capabilities=SessionCapabilities(list=SessionListCapabilities()),
            ),
            agent_info=Implementation(name="minicode", title="minicode", version=__version__),
            auth_methods=[],
        )

    async def new_session(self, cwd: str, additional_directories: list[str] | None = None,
                          mcp_servers: list[Any] | None = None, **kwargs: Any) -> NewSessionResponse:
        state = await self._open(cwd, None, mcp_servers)
        return NewSessionResponse(session_id=state.session.id, modes=modes_state(state.mode),
                                  config_options=config_options(state.session, state.configured_model))

    async def load_session(self, cwd: str, session_id: str, mcp_servers: list[Any] | None = None,
                           additional_directories: list[str] | None = None, **kwargs: Any) -> LoadSessionResponse:
        if (old := self._sessions.pop(session_id, None)) is not None:  # the editor opens it again
            await self._close(old)
        state = await self._open(cwd, session_id, mcp_servers)
        session = state.session
        for update in replay(session.workspace, session.messages, session.tool_outcomes()):
            state.sender.send(update)
        await state.sender.flush()  # the whole conversation before the answer (ACP: load replays first)
        return LoadSessionResponse(modes=modes_state(state.mode), config_options=config_options(state.session, state.configured_model))

    async def list_sessions(self, cwd: str | None = None, cursor: str | None = None,
                            **kwargs: Any) -> ListSessionsResponse:
        """The sessions of a directory that hold messages, newest first, a page at a time
        (the cursor is where the next page starts)."""
        from minicode.session.catalog import list_sessions

        workspace = Path(cwd).resolve() if cwd else self._start
        start = int(cursor) if cursor is not None and cursor.isdigit() else 0
        try:
            found, _skipped = await asyncio.to_thread(list_sessions, workspace)
        except MinicodeError as e:
            raise _error(str(e)) from e
        page = found[start:start + LIST_PAGE]
        more = start + LIST_PAGE < len(found)
        return ListSessionsResponse(
            sessions=[SessionInfo(session_id=info.id, cwd=str(workspace), title=info.first_message or None,
                                  updated_at=_iso(info.modified_ns)) for info in page],
            next_cursor=str(start + LIST_PAGE) if more else None,
        )

    async def set_session_mode(self, session_id: str, mode_id: str, **kwargs: Any) -> SetSessionModeResponse:
        state = self._get(session_id)
        if mode_id not in MODES:
            raise _error(f"unknown mode {mode_id!r}: use one of {', '.join(MODES)}")
        if state.busy:
            raise RequestError(-32600, "minicode: the mode changes between prompts, not during one")
        if mode_id == "plan":
            await state.session.enter_plan(state.emit)
        elif state.session.mode == "plan":  # leaving plan mode: the proposed list is accepted, or none is left
            if state.session.todo:
                state.accepted = await state.session.accept_plan(state.emit)  # sent with the next prompt
            else:
                await state.session.reject_plan(state.emit)
        state.mode = mode_id
        state.sender.send(update_current_mode(mode_id))
        return SetSessionModeResponse()

    async def set_config_option(self, config_id: str, session_id: str, value: str | bool,
                                **kwargs: Any) -> SetSessionConfigOptionResponse:
        state = self._get(session_id)
        try:
            await set_option(state.session, config_id, value)
        except (MinicodeError, ValueError) as e:
            raise _error(str(e)) from e
        return SetSessionConfigOptionResponse(config_options=config_options(state.session, state.configured_model))

    async def prompt(self, session_id: str, prompt: Prompt, **kwargs: Any) -> PromptResponse:
        state = self._get(session_id)
        if state.busy:
            raise RequestError(-32600, "minicode: a prompt is already running in this session")
        state.busy = True
        try:
            return await self._answer_prompt(state, prompt_text(prompt))
        finally:
            state.busy = False

    async def _answer_prompt(self, state: _Open, text: str) -> PromptResponse:
        if not text.strip():
            return PromptResponse(stop_reason="end_turn")
        if is_command(text):
            if await self._cancellable(state, self._command(state, text)) is _CANCELLED:
                return PromptResponse(stop_reason="cancelled")
            return PromptResponse(stop_reason="end_turn")
        assert self._conn is not None
        if state.accepted:
            text, state.accepted = f"{state.accepted}\n\n{text}", ""
        approver = EditorApprover(self._conn, state.session.id, state.sender, state.mapper.view,
                                  acting=lambda: state.mode == "act")
        finished = await self._cancellable(state, state.session.turn(
            text, approver=approver, emit=state.emit, max_turns=self._options.max_turns, timeout=self._options.timeout))
        if finished is _CANCELLED:
            return PromptResponse(stop_reason="cancelled")  # session/cancel: stopped and saved
        assert isinstance(finished, TurnFinished)
        if finished.status not in (TaskStatus.DONE, TaskStatus.ERROR, TaskStatus.INTERRUPTED):
            state.sender.send(update_agent_message_text(f"\n\n*minicode: the task ended: {finished.status_text}*\n"))
        await state.sender.flush()
        return _answer(finished)

    async def _cancellable(self, state: _Open, work: Coroutine[Any, Any, Any]) -> Any:
        """Run a task or a command as the session's one running thing, which session/cancel
        cancels (Esc's path: a task stops, saves and reports); ``_CANCELLED`` when it did."""
        running = state.running = asyncio.ensure_future(work)
        try:
            return await running
        except asyncio.CancelledError:
            current = asyncio.current_task()
            if current is not None and current.cancelling():  # the connection closes: the work stopped with us
                raise
            await state.sender.flush()
            return _CANCELLED
        finally:
            state.running = None

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        state = self._sessions.get(session_id)
        if state is not None and state.running is not None:
            state.running.cancel()

    # --- the sessions ---------------------------------------------------------------------

    async def aclose(self) -> None:
        """Close every session (a running turn is cancelled and saved first); for the exit."""
        states, self._sessions = list(self._sessions.values()), {}
        for state in states:
            await self._close(state)

    async def _close(self, state: _Open) -> None:
        if state.running is not None:
            state.running.cancel()
            await asyncio.gather(state.running, return_exceptions=True)
        state.sender.close()
        kept = await state.session.aclose()
        if kept:
            log.info("session %s saved: continue it with %s", state.session.id, state.session.resume_command)

    async def _open(self, cwd: str, resume: str | None, mcp_servers: list[Any] | None) -> _Open:
        from minicode.session.records import SessionSettings
        from minicode.telemetry import create_tracer

        workspace = Path(cwd)
        if not workspace.is_absolute() or not workspace.is_dir():
            raise _error(f"the session directory {cwd!r} is not an existing absolute directory")
        workspace = workspace.resolve()
        try:
            config = self._configs.get(workspace)
            if config is None:
                config = self._configs[workspace] = await asyncio.to_thread(self._load, workspace)
            config = with_editor_servers(config, mcp_servers)
            tracer = create_tracer(config.langfuse, warn=lambda line: log.warning("%s", line.removeprefix("minicode: ")),
                                   secrets=[config.model.api_key])
            session = await Session.open(config=config, workspace=workspace, env=self._env, resume=resume,
                                         tracer=tracer, pinned=SessionSettings(self._options.model, self._options.think))
        except MinicodeError as e:
            raise _error(str(e)) from e
        for warning in session.warnings:
            log.warning("%s", warning)
        assert self._conn is not None
        sender = UpdateSender(self._conn, session.id)
        if self._client_reads:  # writes only with reads: an edit changes the text the model read
            session.use_editor_files(ClientFiles(self._conn, session.id, writes=self._client_writes))
        mode = "plan" if session.mode == "plan" else "act" if self._options.yes else "ask"  # a session still planning
        state = _Open(session, sender, UpdateMapper(workspace), mode, config.model.name)
        self._sessions[session.id] = state
        # after the answer that names the session (the response is queued before this runs)
        asyncio.get_running_loop().call_soon(sender.send, update_available_commands(available_commands()))
        return state

    def _get(self, session_id: str) -> _Open:
        state = self._sessions.get(session_id)
        if state is None:
            raise _error(f"no open session {session_id!r}: create one (session/new) or load it (session/load)")
        return state

    async def _command(self, state: _Open, text: str) -> None:
        assert self._conn is not None
        conn = self._conn

        async def confirm(question: str) -> bool:
            await state.sender.flush()
            call = ToolCallUpdate(tool_call_id=f"command-{id(text)}", title=question, kind="edit", status="pending")
            options = [PermissionOption(option_id="yes", name="Yes", kind="allow_once"),
                       PermissionOption(option_id="no", name="No", kind="reject_once")]
            try:
                answer = await conn.request_permission(state.session.id, call, options)
            except Exception:  # noqa: BLE001 - gone or an error answer: no is the answer
                return False
            return getattr(answer.outcome, "option_id", None) == "yes"

        def say(line: str) -> None:
            state.sender.send(update_agent_message_text(line + "\n"))

        await run_command(text, state.session, say, confirm, state.emit, self._options.yes)
        await state.sender.flush()


_CANCELLED = object()
"""What ``_cancellable`` returns for work that session/cancel stopped."""

_STOPS: dict[TaskStatus, StopReason] = {TaskStatus.INTERRUPTED: "cancelled", TaskStatus.MAX_TURNS: "max_turn_requests"}


def _answer(finished: TurnFinished) -> PromptResponse:
    """The prompt's answer; a task that failed is an error answer saying why (the history is saved)."""
    if finished.status is TaskStatus.ERROR:
        raise RequestError(-32603, f"minicode: {finished.error or 'the task failed'}")
    return PromptResponse(stop_reason=_STOPS.get(finished.status, "end_turn"))


def _iso(ns: int) -> str:
    from datetime import datetime, timezone

    return datetime.fromtimestamp(ns / 1e9, tz=timezone.utc).isoformat(timespec="seconds").replace("+00:00", "Z")


def _error(message: str) -> RequestError:
    return RequestError(-32602, f"minicode: {message}")
