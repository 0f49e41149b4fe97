"""``minicode --acp``: the agent side of the Agent Client Protocol on stdin/stdout.

Owns the process around the SDK's connection: stdout is the protocol's alone (any print, a
library or a child process writes to stderr instead: ``cli.stdstreams.private_stdout``), the
SDK's log lines go to stderr as one line each, the stop signals cancel the run, and the end
— the editor closed stdin or vanished, SIGTERM — closes every session (a running task is
cancelled and saved first). Each stdin line is checked before the SDK sees it (``_checked``):
the SDK skips a line that is not JSON, and a line that is JSON but no message object would
end its receive loop; here both get JSON-RPC's error answer and the connection goes on.
"""

from __future__ import annotations

import asyncio
import json
import logging
import sys
from pathlib import Path
from typing import IO, Any, Callable, Mapping, cast

from minicode.cli.args import Options
from minicode.cli.stdstreams import private_stdout
from minicode.config import Config
from minicode.exitcodes import EXIT_FAILURE, EXIT_INTERRUPTED, EXIT_OK
from minicode.stop_signal import signals_cancel

__all__ = ["LINE_LIMIT", "main", "problem"]

LINE_LIMIT = 50 * 1024 * 1024
"""Bytes of one message (the SDK's own default: a prompt may embed whole files)."""

log = logging.getLogger("minicode.acp")


def main(options: Options, config: Config, start: Path, load: Callable[[Path], Config], env: Mapping[str, str]) -> int:
    _log_to_stderr()
    with private_stdout() as out:
        if out is None:
            print("minicode: error: --acp needs stdout (the protocol's channel); it is closed", file=sys.stderr)
            return EXIT_FAILURE
        return asyncio.run(_serve(options, config, start, load, env, out))


async def _serve(options: Options, config: Config, start: Path, load: Callable[[Path], Config],
                 env: Mapping[str, str], out: IO[bytes]) -> int:
    from acp import Agent, run_agent

    from minicode.cli.frontends.acp.agent import MinicodeAgent

    main_task = asyncio.current_task()
    assert main_task is not None
    agent = MinicodeAgent(options, config, start, load, env)
    code = EXIT_OK
    with signals_cancel(main_task):
        try:
            try:
                reader, writer = await _streams(out)
            except (OSError, ValueError) as e:
                log.error("stdin and stdout must be pipes (an editor starts minicode --acp): %s", e)
                return EXIT_FAILURE
            checked, pump = _checked(reader, writer)
            try:
                # the SDK's router answers "method not found" for the methods minicode leaves out
                await run_agent(cast("Agent", agent), writer, checked)
            finally:
                pump.cancel()
            if main_task.cancelling():  # the SDK's receive loop ends quietly when cancelled
                code = EXIT_INTERRUPTED
        except asyncio.CancelledError:
            code = EXIT_INTERRUPTED
        except Exception as e:  # noqa: BLE001 - the SDK's connection failed: said, and the sessions still close
            log.error("the connection failed: %s", e)
            code = EXIT_FAILURE
        finally:
            if await _close(agent):
                code = EXIT_INTERRUPTED
    return code  # the command guard server ends with the process (guardlife's exit hook)


async def _close(agent: Any) -> bool:
    """Close the sessions whatever arrives meanwhile; whether a stop signal came while closing."""
    closing = asyncio.ensure_future(agent.aclose())
    interrupted = False
    while True:
        try:
            await asyncio.shield(closing)
            return interrupted
        except asyncio.CancelledError:
            interrupted = True


async def _streams(out: IO[bytes]) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=LINE_LIMIT)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    transport, protocol = await loop.connect_write_pipe(asyncio.streams.FlowControlMixin, out)
    return reader, asyncio.StreamWriter(transport, protocol, None, loop)


def _checked(raw: asyncio.StreamReader, writer: asyncio.StreamWriter) -> tuple[asyncio.StreamReader, asyncio.Task[None]]:
    """The reader the SDK gets (only lines that are JSON-RPC message objects reach it) and
    the task that fills it."""
    checked = asyncio.StreamReader(limit=LINE_LIMIT)

    async def pump() -> None:
        try:
            while True:
                try:
                    line = await raw.readuntil(b"\n")
                except asyncio.IncompleteReadError as e:  # the last line without its newline, or the end
                    line = e.partial
                except asyncio.LimitOverrunError:
                    await _skip_line(raw)
                    _answer_error(writer, None, -32700, "Parse error: a message longer than 50 MiB")
                    continue
                if not line:
                    break
                why = problem(line)
                if why is None:
                    checked.feed_data(line if line.endswith(b"\n") else line + b"\n")
                elif why[1]:
                    log.warning("a line from the editor was refused: %s", why[1])
                    _answer_error(writer, why[0], -32700 if why[1].startswith("Parse") else -32600, why[1])
        finally:
            checked.feed_eof()

    return checked, asyncio.ensure_future(pump())


def problem(line: bytes) -> tuple[Any, str] | None:
    """Why a stdin line cannot go to the SDK, as (the id to answer, JSON-RPC's message), or
    None when it is a message object; ("", "") for a blank line (skipped, unanswered)."""
    from minicode import jsonsafe

    if not line.strip():
        return "", ""
    try:
        message = jsonsafe.loads(line)
    except (ValueError, RecursionError):
        return None, "Parse error"
    if not isinstance(message, dict):
        return None, "Invalid Request: a message is a JSON object"
    has_id = "id" in message
    ident = message.get("id")
    if has_id and (isinstance(ident, bool) or not isinstance(ident, (str, int, type(None)))):
        return None, "Invalid Request: an id is a string, a number or null"
    method = message.get("method")
    if "method" in message and not isinstance(method, str):
        return ident, "Invalid Request: the method is a string"
    if "method" not in message and not has_id:
        return None, "Invalid Request: neither a request, a notification nor a response"
    if "params" in message and not isinstance(message["params"], (dict, list, type(None))):
        return ident, "Invalid Request: params is an object or an array"
    return None


async def _skip_line(raw: asyncio.StreamReader) -> None:
    """Read past the rest of a line longer than the limit, a piece at a time."""
    while True:
        try:
            await raw.readuntil(b"\n")
            return
        except asyncio.LimitOverrunError as e:
            await raw.readexactly(e.consumed)
        except asyncio.IncompleteReadError:
            return


def _answer_error(writer: asyncio.StreamWriter, ident: Any, code: int, message: str) -> None:
    """JSON-RPC's error answer, one whole line (the SDK's lines are whole too: none interleave)."""
    if writer.is_closing():
        return
    writer.write((json.dumps({"jsonrpc": "2.0", "id": ident, "error": {"code": code, "message": message}}) + "\n")
                 .encode())


class _OneLine(logging.Formatter):
    """A log record as one stderr line; an exception as its type and message, no traceback."""

    def format(self, record: logging.LogRecord) -> str:
        text = f"minicode: acp: {record.getMessage()}"
        if record.exc_info and record.exc_info[1] is not None:
            error = record.exc_info[1]
            text += f" ({type(error).__name__}: {error})"
        return text.replace("\n", " ")


def _log_to_stderr() -> None:
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(_OneLine())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(logging.INFO)
