"""One MCP server: its connection, kept in the background and retried, and its calls.

``ServerLink.start`` begins a supervisor task: it connects through the SDK's ``Client`` (a
stdio server under the command guard, ``stdio.py``; a remote one over Streamable HTTP), lists
the tools, and is ``ready`` until a call finds the connection gone. A server that fails to
start, hangs past its ``startup_timeout`` or exits is ``failed`` with the reason, one notice
(``on_notice``) per failure, and is tried again after 1 s, 2 s, … up to 60 s; nothing of it
reaches another server or the task. Connecting holds one of the manager's slots (at most 4
servers start at once). The client lives in a task of its own (``_hold``): its cancel scopes
and task groups begin and end there, so a time-out or ``close`` cancels that task whole.

Calls of one server run one at a time (``_calls``); a call while the server is connecting
waits for it, up to its start-up time-out; cancelling a call (Esc) cancels the request — the
SDK sends the protocol's ``notifications/cancelled``.

A remote server that asks for an OAuth sign-in (``signin``) gets one while a person is there to
answer (``SignInSettings.attended``); the time that person takes is off the start-up clock. When
nobody is there, or the sign-in fails (refused, timed out, a token endpoint error), the server
is ``needs sign-in`` with the reason and one notice, and is not tried again until ``sign_in``
(``/mcp login NAME``, ``minicode --mcp-login NAME``): retrying would reopen the browser, or
present a revoked grant, every minute.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import enum
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Callable, Mapping, TextIO

from minicode.config import McpServerConfig
from minicode.errors import ToolError
from minicode.mcp_client.callback import SignInFailed
from minicode.mcp_client.signin_settings import SignInSettings

__all__ = ["BACKOFF_MAX_S", "BACKOFF_START_S", "RemoteTool", "ServerLink", "State"]

BACKOFF_START_S = 1.0
BACKOFF_MAX_S = 60.0
_ERROR_CHARS = 300


class State(enum.Enum):
    CONNECTING = "connecting"
    READY = "ready"
    FAILED = "failed"
    SIGNIN = "needs sign-in"
    DISABLED = "disabled"


@dataclass(frozen=True, slots=True)
class RemoteTool:
    """One tool as the server listed it (untrusted text: shown and sent only as data)."""

    name: str
    description: str
    schema: Mapping[str, Any]


Progress = Callable[[str], None]


class ServerLink:
    def __init__(self, config: McpServerConfig, workspace: Path, *, slots: asyncio.Semaphore,
                 on_notice: Callable[[str], None], on_change: Callable[[], None] = lambda: None,
                 signin: SignInSettings = SignInSettings(),
                 show_signin: Callable[[str], None] = lambda line: None) -> None:
        self.config = config
        self.name = config.name
        self.state = State.DISABLED if config.disabled else State.CONNECTING
        self.error = ""
        """Why the last attempt failed ("" once connected)."""
        self.tools: tuple[RemoteTool, ...] = ()
        self._workspace = workspace
        self._slots = slots
        self._on_notice = on_notice
        self._on_change = on_change
        self._client: Any = None
        self._settled = asyncio.Event()
        self._lost = asyncio.Event()
        self._calls = asyncio.Lock()
        self._task: asyncio.Task[None] | None = None
        self._holder: asyncio.Task[None] | None = None
        self._delay = BACKOFF_START_S
        self._noticed = ""
        self.signin = signin
        self._show_signin = show_signin
        self._signin: Any = None
        """This attempt's ``signin.SignIn`` (a remote server without an Authorization header)."""
        self._person_waiting = False
        self._person_toggled: asyncio.Future[None] | None = None
        self._retry = asyncio.Event()
        self._slot_held = False

    # --- life ------------------------------------------------------------------------------

    def start(self) -> None:
        if self.state is not State.DISABLED and self._task is None:
            self._task = asyncio.create_task(self._supervise(), name=f"mcp-{self.name}")

    async def close(self) -> None:
        """End the connection (and a stdio server's process group); never raises."""
        task, self._task = self._task, None
        if task is None:
            return
        task.cancel()
        await asyncio.wait({task})  # (its outcome is its own: never raised here)
        holder = self._holder
        if holder is not None and not holder.done():  # the supervisor was stopped while it waited for it
            await asyncio.wait({holder})

    def sign_in(self) -> bool:
        """Try a server that needs sign-in again now, waiting for the person who asked (even in
        a ``--yes`` run); False when it does not need one."""
        if self.state is not State.SIGNIN:
            return False
        self.signin = dataclasses.replace(self.signin, attended=True)
        self._settled = asyncio.Event()  # callers from now on wait for the new attempt
        self._set(State.CONNECTING)
        self._retry.set()
        return True

    async def _supervise(self) -> None:
        while True:
            self._lost = asyncio.Event()
            self._retry = asyncio.Event()  # (before the attempt: a sign_in during its clean-up counts)
            await self._attempt()
            self._settled.set()
            if self.state is State.SIGNIN or self._retry.is_set():  # until someone signs in: never a retry loop
                await self._retry.wait()  # sign_in made it connecting, with a new _settled
                self._delay = BACKOFF_START_S
                continue
            await asyncio.sleep(self._delay)
            self._delay = min(self._delay * 2, BACKOFF_MAX_S)
            self._settled = asyncio.Event()  # a new attempt: callers wait for this one
            self._set(State.CONNECTING)

    async def _attempt(self) -> None:
        published: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        stop = asyncio.Event()
        stderr = tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace")
        holder = asyncio.create_task(self._hold(published, stderr, stop), name=f"mcp-{self.name}-client")
        self._holder = holder
        try:
            await self._slots.acquire()
            self._slot_held = True
            try:
                await self._wait_started(published, holder)
            finally:
                self._release_slot()
            if not published.done() or published.exception() is not None:
                error = published.exception() if published.done() else None
                if isinstance(error, BaseExceptionGroup):
                    error = _first(error)
                why = _why(error) if error is not None else (
                    "exited during start-up" if holder.done() else
                    f"did not start within {self.config.startup_timeout:g} s (startup_timeout)")
                if isinstance(error, SignInFailed) or (self._signin is not None and self._signin.started):
                    self._needs_signin(getattr(self._signin, "failure", "") or why)
                else:
                    self._fail(why, stderr)
                return
            self._client, self.tools = published.result()
            self._delay = BACKOFF_START_S
            self.error = self._noticed = ""
            if self._signin is not None:
                if self._signin.shown:  # the person who signed in sees it worked, where they saw the address
                    self._show_signin(f"MCP server {self.name}: signed in ({len(self.tools)} "
                                      f"tool{'s' if len(self.tools) != 1 else ''})")
                self._signin.started = self._signin.shown = False  # from here on, a sign-in is one a call asked for
            self._set(State.READY)
            self._settled.set()
            lost = asyncio.create_task(self._lost.wait())
            try:
                await asyncio.wait({holder, lost}, return_when=asyncio.FIRST_COMPLETED)
            finally:  # (also when closed: no pending task left for the loop to destroy)
                lost.cancel()
            if self._signin is not None and self._signin.started:  # signed in again during a call, and failed
                self._needs_signin(self._signin.failure or "the server asked for a new sign-in, which did not complete")
            else:
                self._fail("the connection ended", stderr)
        finally:
            self._client = None
            self._person_waiting = False
            if published.done() and not published.cancelled() and published.exception() is None:
                stop.set()  # leave the client's context: the SDK ends the server its own way (stdin closed, TERM, KILL)
            else:
                holder.cancel()  # once: a second cancellation could break the SDK's shielded shutdown
                published.cancel()
            await asyncio.wait({holder})  # bounded (the SDK's shutdown waits ~4 s at most)
            stderr.close()

    async def _wait_started(self, published: asyncio.Future[Any], holder: asyncio.Task[None]) -> None:
        """Until the client is published or its task ends, at most ``startup_timeout`` seconds
        of the server's own time: a person signing in is waited for (up to ``signin_timeout``)."""
        loop = asyncio.get_running_loop()
        budget = self.config.startup_timeout
        while True:
            waiting = self._person_waiting
            toggled = self._person_toggled = loop.create_future()
            began = loop.time()
            done, _ = await asyncio.wait({published, holder, toggled}, timeout=None if waiting else max(budget, 0),
                                         return_when=asyncio.FIRST_COMPLETED)  # fmt: skip
            toggled.cancel()
            if published in done or holder in done or toggled not in done:
                return
            if not waiting:
                budget -= loop.time() - began

    def _release_slot(self) -> None:
        if self._slot_held:
            self._slot_held = False
            self._slots.release()

    def _on_person(self, waiting: bool) -> None:
        if waiting:  # a person signing in does not hold up the other servers' start
            self._release_slot()
        self._person_waiting = waiting
        if self._person_toggled is not None and not self._person_toggled.done():
            self._person_toggled.set_result(None)

    def _needs_signin(self, why: str) -> None:
        self.error = _short(why)
        self.tools = ()
        self._set(State.SIGNIN)
        if self.error != self._noticed:
            self._noticed = self.error
            again = "" if "--mcp-login" in why else (
                f"; sign in with: /mcp login {self.name} (or minicode --mcp-login {self.name})")
            said = f"MCP server {self.name} needs sign-in: {self.error}{again}"
            if self._signin is not None and self._signin.shown:
                self._show_signin(said)  # where the person saw the address, at once (not with the next task)
            else:
                self._on_notice(said)

    async def _hold(self, published: asyncio.Future[Any], stderr: TextIO, stop: asyncio.Event) -> None:
        """Connect, list the tools, publish them, and keep the client open until ``stop``."""
        self._signin = None
        # a given Authorization header is the user's token: no sign-in over it
        may_sign_in = bool(self.config.url) and not any(k.lower() == "authorization" for k, _ in self.config.headers)
        try:
            await _load_sdk(_SIGNIN_MODULES if may_sign_in else _SDK_MODULES)
            from minicode.mcp_client.connect import open_client

            auth = None
            if may_sign_in:
                from minicode.mcp_client.signin import SignIn

                self._signin = SignIn(self.config, self.signin, self._show_signin, self._on_person)
                auth = await self._signin.auth()
            async with open_client(self.config, self._workspace, stderr, auth) as client:
                tools = await _list_tools(client, self.config.tools)
                if not published.done():
                    published.set_result((client, tools))
                await stop.wait()
        except Exception as e:  # noqa: BLE001 - any failure of any server is this server's state, not the task's
            if not published.done():
                published.set_exception(e)
        except BaseExceptionGroup as group:  # anyio task groups wrap what failed inside them
            if not published.done():
                published.set_exception(_first(group))
        finally:
            if self._signin is not None:
                await self._signin.close()

    def _fail(self, why: str, stderr: IO[str]) -> None:
        said = _stderr_tail(stderr)
        self.error = _short(f"{why}: {said}" if said and said not in why else why)
        self.tools = ()
        self._set(State.FAILED)
        if self.error != self._noticed:  # one notice per reason, not one per retry
            self._noticed = self.error
            self._on_notice(f"MCP server {self.name} failed: {self.error} (retrying in {self._delay:g} s, "
                            "backing off to 60 s)")

    def _set(self, state: State) -> None:
        self.state = state
        self._on_change()

    # --- calls -----------------------------------------------------------------------------

    async def wait_settled(self) -> None:
        """Until the server is ready or an attempt failed, at most its start-up time-out (and
        a remote server's sign-in time-out: a person may be signing in)."""
        if self.state is State.CONNECTING:
            signing_in = self.config.signin_timeout if self.config.url else 0
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(self.config.startup_timeout + signing_in):
                    await self._settled.wait()

    async def call(self, tool: str, args: Mapping[str, Any], progress: Progress | None = None) -> tuple[str, bool]:
        """(the result's text, whether the server called it an error); ``ToolError`` when the
        call cannot be made or the server does not answer in ``call_timeout``."""
        from minicode.mcp_client.content import result_text

        await self.wait_settled()
        if self.state is not State.READY or self._client is None:
            state = self.state.value if self.state is State.SIGNIN else f"is {self.state.value}"
            raise ToolError(f"MCP server {self.name} {state}" + (f": {self.error}" if self.error else ""))
        async with self._calls:
            client = self._client
            if client is None:
                raise ToolError(f"MCP server {self.name} disconnected; it is reconnecting")
            try:
                async with asyncio.timeout(self.config.call_timeout):
                    result = await client.call_tool(tool, dict(args), progress_callback=_progress(progress))
            except TimeoutError:
                raise ToolError(f"MCP server {self.name} did not answer {tool} within "
                                f"{self.config.call_timeout:g} s (call_timeout); the call was cancelled") from None
            except asyncio.CancelledError:
                raise
            except Exception as e:  # noqa: BLE001 - sorted into a lost connection or a refused call below
                if _is_protocol_error(e):
                    raise ToolError(f"MCP server {self.name} refused {tool}: {_why(e)}") from None
                self._lost.set()
                raise ToolError(f"MCP server {self.name} lost its connection ({_why(e)}); it is reconnecting") from None
        return result_text(result.content, result.structured_content), bool(result.is_error)


_SDK_MODULES = ("mcp", "mcp.client.stdio", "mcp.client.streamable_http", "mcp_types")
_SIGNIN_MODULES = (*_SDK_MODULES, "minicode.mcp_client.signin")
"""With the SDK's OAuth client and ``webbrowser`` (~30 ms more), for a server that may sign in."""


async def _load_sdk(modules: tuple[str, ...] = _SDK_MODULES) -> None:
    """Import the SDK (~0.5 s of CPU here) on a thread, not on the event loop: the session's
    first frame and first request go on meanwhile. Imported once; a second call costs nothing."""
    import importlib
    import sys

    if all(name in sys.modules for name in modules):
        return
    await asyncio.to_thread(lambda: [importlib.import_module(name) for name in modules])


async def _list_tools(client: Any, allowed: tuple[str, ...] | None) -> tuple[RemoteTool, ...]:
    tools: list[RemoteTool] = []
    cursor: str | None = None
    for _ in range(100):  # a paginator that never ends cannot hang the start-up
        listed = await client.list_tools(cursor=cursor)
        for tool in listed.tools:
            if allowed is None or tool.name in allowed:
                tools.append(RemoteTool(tool.name, tool.description or "", tool.input_schema or {"type": "object"}))
        cursor = listed.next_cursor
        if not cursor:
            break
    return tuple(tools)


def _progress(report: Progress | None) -> Any:
    if report is None:
        return None

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        amount = f"{progress:g}/{total:g}" if total else f"{progress:g}"
        report(f"progress {amount}" + (f": {message}" if message else ""))

    return on_progress


def _is_protocol_error(error: BaseException) -> bool:
    """An error the server answered (bad arguments, unknown tool), not a connection that ended."""
    from mcp.shared.exceptions import MCPError
    from mcp_types.jsonrpc import CONNECTION_CLOSED

    return isinstance(error, MCPError) and error.code != CONNECTION_CLOSED


def _first(group: BaseExceptionGroup) -> Exception:
    for error in group.exceptions:
        if isinstance(error, BaseExceptionGroup):
            return _first(error)
        if isinstance(error, Exception):
            return error
    return RuntimeError("the connection was cancelled")


def _why(error: BaseException | None) -> str:
    if isinstance(error, BaseExceptionGroup):
        error = _first(error)
    if error is None:
        return "unknown error"
    if isinstance(error, FileNotFoundError):
        return f"program not found ({error.filename or error})"
    text = str(getattr(getattr(error, "error", None), "message", "") or error).strip() or type(error).__name__
    return _short(text)


def _stderr_tail(stderr: IO[str]) -> str:
    """The last line the server wrote on stderr (often what went wrong)."""
    try:
        stderr.seek(0)
        lines = [line.strip() for line in stderr.read()[-4096:].splitlines() if line.strip()]
    except (OSError, ValueError):
        return ""
    return lines[-1] if lines else ""


def _short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= _ERROR_CHARS else text[: _ERROR_CHARS - 1] + "…"
