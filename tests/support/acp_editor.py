"""An editor for `minicode --acp` tests: the ACP SDK's client side over the real executable's pipes.

``Editor`` is the SDK ``Client`` (it records every session update, answers permission
requests with a chosen option and reads files from its own "buffers"); ``running_agent``
starts ``minicode --acp``, keeps every raw stdout line (a test checks that each one is a
JSON-RPC message) and stderr, and connects the SDK's ``ClientSideConnection`` to it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, AsyncIterator

from acp import RequestError
from acp.client.connection import ClientSideConnection
from acp.schema import (
    AllowedOutcome,
    ClientCapabilities,
    DeniedOutcome,
    FileSystemCapabilities,
    PermissionOption,
    ReadTextFileResponse,
    RequestPermissionResponse,
    ToolCallUpdate,
    WriteTextFileResponse,
)

__all__ = ["Editor", "RunningAgent", "running_agent", "text_of"]


class Editor:
    """The client. ``answer``: the option id chosen for a permission request (None: cancelled;
    "hang": never answered — ``asked`` is set);
    ``buffers``: absolute path -> unsaved text offered through fs/read_text_file; ``takes_writes``:
    fs/write_text_file is declared too (each write is kept in ``written`` and in the buffers)."""

    def __init__(self, answer: str | None = "allow_once", buffers: dict[str, str] | None = None,
                 takes_writes: bool = False) -> None:
        self.answer = answer
        self.buffers = buffers
        self.takes_writes = takes_writes
        self.written: list[tuple[str, str]] = []
        self.updates: list[Any] = []
        self.permissions: list[tuple[ToolCallUpdate, list[PermissionOption]]] = []
        self.reads: list[str] = []
        self.asked = asyncio.Event()

    def capabilities(self) -> ClientCapabilities:
        return ClientCapabilities(fs=FileSystemCapabilities(read_text_file=self.buffers is not None,
                                                            write_text_file=self.takes_writes))

    async def request_permission(self, session_id: str, tool_call: ToolCallUpdate, options: list[PermissionOption],
                                 **kwargs: Any) -> RequestPermissionResponse:
        self.permissions.append((tool_call, options))
        self.asked.set()
        if self.answer == "hang":
            await asyncio.Event().wait()
        if self.answer is None:
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        return RequestPermissionResponse(outcome=AllowedOutcome(outcome="selected", option_id=self.answer))

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.updates.append(update)

    async def read_text_file(self, session_id: str, path: str, line: int | None = None, limit: int | None = None,
                             **kwargs: Any) -> ReadTextFileResponse:
        self.reads.append(path)
        if self.buffers is None or path not in self.buffers:
            raise RequestError.resource_not_found(path)
        return ReadTextFileResponse(content=self.buffers[path])

    async def write_text_file(self, session_id: str, path: str, content: str, **kwargs: Any) -> WriteTextFileResponse:
        if not self.takes_writes:
            raise RequestError.method_not_found("fs/write_text_file")
        self.written.append((path, content))
        if self.buffers is not None:
            self.buffers[path] = content
        return WriteTextFileResponse()

    def of_kind(self, kind: str) -> list[Any]:
        return [u for u in self.updates if u.session_update == kind]

    def on_connect(self, conn: Any) -> None:
        pass


def text_of(updates: list[Any]) -> str:
    return "".join(u.content.text for u in updates)


@dataclass
class RunningAgent:
    conn: ClientSideConnection
    process: asyncio.subprocess.Process
    stdout_lines: list[bytes] = field(default_factory=list)
    stderr: bytearray = field(default_factory=bytearray)

    def write_raw(self, data: bytes) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(data)

    def stdout_messages(self) -> list[dict[str, Any]]:
        """Every stdout line as a JSON-RPC 2.0 message; fails on any line that is not one."""
        messages = []
        for line in self.stdout_lines:
            message = json.loads(line)
            assert isinstance(message, dict) and message.get("jsonrpc") == "2.0", line
            messages.append(message)
        return messages


@contextlib.asynccontextmanager
async def running_agent(argv: list[str], cwd: Path, env: dict[str, str], editor: Editor) -> AsyncIterator[RunningAgent]:
    process = await asyncio.create_subprocess_exec(
        *argv, cwd=cwd, env=env, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE, start_new_session=True, limit=64 * 1024 * 1024,
    )  # fmt: skip
    assert process.stdin is not None and process.stdout is not None and process.stderr is not None
    seen = asyncio.StreamReader(limit=64 * 1024 * 1024)
    agent = RunningAgent(ClientSideConnection(editor, process.stdin, seen), process)

    async def tee(source: asyncio.StreamReader) -> None:
        while line := await source.readline():
            agent.stdout_lines.append(line)
            seen.feed_data(line)
        seen.feed_eof()

    async def drain(source: asyncio.StreamReader) -> None:
        while chunk := await source.read(65536):
            agent.stderr.extend(chunk)

    pumps = [asyncio.ensure_future(tee(process.stdout)), asyncio.ensure_future(drain(process.stderr))]
    try:
        yield agent
    finally:
        with contextlib.suppress(Exception):
            process.stdin.close()
        try:
            await asyncio.wait_for(process.wait(), 20)
        except TimeoutError:
            process.kill()
            await process.wait()
        await asyncio.wait_for(asyncio.gather(*pumps, return_exceptions=True), 5)
        await agent.conn.close()
