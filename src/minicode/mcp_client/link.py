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
"""

from __future__ import annotations

import asyncio
import contextlib
import enum
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Callable, Mapping, TextIO

from minicode.config import McpServerConfig
from minicode.errors import ToolError

__all__ = ["BACKOFF_MAX_S", "BACKOFF_START_S", "RemoteTool", "ServerLink", "State"]

BACKOFF_START_S = 1.0
BACKOFF_MAX_S = 60.0
_ERROR_CHARS = 300


class State(enum.Enum):
    CONNECTING = "connecting"
    READY = "ready"
    FAILED = "failed"
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
                 on_notice: Callable[[str], None], on_change: Callable[[], None] = lambda: None) -> None:
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

    async def _supervise(self) -> None:
        while True:
            self._lost = asyncio.Event()
            await self._attempt()
            self._settled.set()
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
            async with self._slots:
                done, _ = await asyncio.wait({published, holder}, timeout=self.config.startup_timeout,
                                             return_when=asyncio.FIRST_COMPLETED)  # fmt: skip
            if published not in done or published.exception() is not None:
                error = published.exception() if published.done() else None
                why = _why(error) if error is not None else (
                    "exited during start-up" if holder.done() else
                    f"did not start within {self.config.startup_timeout:g} s (startup_timeout)")
                self._fail(why, stderr)
                return
            self._client, self.tools = published.result()
            self._delay = BACKOFF_START_S
            self.error = self._noticed = ""
            self._set(State.READY)
            self._settled.set()
            lost = asyncio.create_task(self._lost.wait())
            await asyncio.wait({holder, lost}, return_when=asyncio.FIRST_COMPLETED)
            lost.cancel()
            self._fail("the connection ended", stderr)
        finally:
            self._client = None
            if published.done() and not published.cancelled() and published.exception() is None:
                stop.set()  # leave the client's context: the SDK ends the server its own way (stdin closed, TERM, KILL)
            else:
                holder.cancel()  # once: a second cancellation could break the SDK's shielded shutdown
                published.cancel()
            await asyncio.wait({holder})  # bounded (the SDK's shutdown waits ~4 s at most)
            stderr.close()

    async def _hold(self, published: asyncio.Future[Any], stderr: TextIO, stop: asyncio.Event) -> None:
        """Connect, list the tools, publish them, and keep the client open until ``stop``."""
        try:
            await _load_sdk()
            from minicode.mcp_client.connect import open_client

            async with open_client(self.config, self._workspace, stderr) as client:
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
        """Until the server is ready or an attempt failed, at most its start-up time-out."""
        if self.state is State.CONNECTING:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(self.config.startup_timeout):
                    await self._settled.wait()

    async def call(self, tool: str, args: Mapping[str, Any], progress: Progress | None = None) -> tuple[str, bool]:
        """(the result's text, whether the server called it an error); ``ToolError`` when the
        call cannot be made or the server does not answer in ``call_timeout``."""
        from minicode.mcp_client.content import result_text

        await self.wait_settled()
        if self.state is not State.READY or self._client is None:
            raise ToolError(f"MCP server {self.name} is {self.state.value}" + (f": {self.error}" if self.error else ""))
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


async def _load_sdk() -> None:
    """Import the SDK (~0.5 s of CPU here) on a thread, not on the event loop: the session's
    first frame and first request go on meanwhile. Imported once; a second call costs nothing."""
    import importlib
    import sys

    if all(name in sys.modules for name in _SDK_MODULES):
        return
    await asyncio.to_thread(lambda: [importlib.import_module(name) for name in _SDK_MODULES])


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
