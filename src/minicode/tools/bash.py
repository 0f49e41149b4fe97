"""The ``bash`` tool: run one command in the workspace, in its own process group.

stdin is /dev/null and pagers/prompts are disabled so nothing waits for a person. Output
(stdout and stderr together) goes into a fixed-size head+tail buffer, so memory stays
constant whatever the volume. However the command ends — exit, timeout, cancellation —
``finally`` terminates the whole process group (SIGTERM, then SIGKILL), so background
children never outlive the call and a grandchild holding the pipe cannot hang it. The command
is started by minicode's command guard server (``tools.spawn``/``guardclient``/``guardserver``),
which kills the group if minicode itself dies, even by ``kill -9``.
While it runs, the output also goes to ``ctx.on_output`` (see ``tools.live``).
"""

from __future__ import annotations

import asyncio
import signal
from typing import Any, Mapping

from minicode.errors import ToolError
from minicode.tools.base import ToolContext, ToolPreview, ToolResult
from minicode.tools.live import LiveOutput
from minicode.tools.preview_body import command_body
from minicode.tools.spawn import RunningCommand, spawn_command, terminate_group
from minicode.tools.specs import BASH, MAX_TIMEOUT_S
from minicode.tools.truncate import HeadTailBuffer

__all__ = ["BashTool"]

DEFAULT_TIMEOUT_S = 120.0
_READ_CHUNK = 64 * 1024
# After the command itself exits, how long background children may keep the pipe open
# before we stop reading (they are killed with the group right after).
_PIPE_GRACE_S = 0.5
_POLL_S = 0.05
_QUIET_ENV = {"PAGER": "cat", "GIT_PAGER": "cat", "GIT_TERMINAL_PROMPT": "0"}


async def _pump(stream: asyncio.StreamReader, buffer: HeadTailBuffer, live: LiveOutput) -> None:
    while chunk := await stream.read(_READ_CHUNK):
        buffer.feed(chunk)
        live.feed(chunk)


async def _wait_for_exit(proc: RunningCommand, reader: asyncio.Task[None]) -> None:
    """Return once the command has exited and its output is read (or held by a straggler).

    ``proc.wait()`` alone is not enough: asyncio only wakes it when every pipe is closed,
    so a background grandchild holding stdout would keep it waiting until the timeout.
    """
    while True:
        done, _ = await asyncio.wait({reader}, timeout=_POLL_S)
        if done:
            await proc.wait()  # output closed; the command itself may still be running
            return
        if proc.finished:
            # The command exited but something it started still holds the pipe open.
            await asyncio.wait({reader}, timeout=_PIPE_GRACE_S)
            return


def _exit_line(code: int | None, timed_out: bool, timeout: float, lost: str | None) -> str:
    if timed_out:
        return f"[timed out after {timeout:g} s; the process group was killed]"
    if code is None:
        return f"[exit status unknown: {lost}; the process group was killed]" if lost else "[exit status unknown]"
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        return f"[killed by {name}]"
    return f"[exit code {code}]"


class BashTool:
    name = BASH.name
    description = BASH.description
    parameters: Mapping[str, Any] = BASH.parameters
    side_effects = BASH.side_effects

    def preview(self, args: Mapping[str, Any]) -> ToolPreview:
        command = str(args.get("command", ""))
        return ToolPreview(target=".", detail=command, body=command_body(command))

    async def run(self, args: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
        command: str = args["command"]
        if "\x00" in command:
            raise ToolError("the command contains a NUL byte, which no shell command can carry; remove it")
        timeout = min(float(args.get("timeout") or DEFAULT_TIMEOUT_S), MAX_TIMEOUT_S)
        env = {**ctx.env, **_QUIET_ENV}
        buffer = HeadTailBuffer()
        try:
            proc = await spawn_command(["bash", "-c", command], cwd=ctx.workspace, env=env)
        except (OSError, ValueError) as e:
            raise ToolError(f"cannot start bash: {getattr(e, 'strerror', None) or e}") from e
        live = LiveOutput(ctx.on_output, ctx.secrets)
        reader = asyncio.create_task(_pump(proc.stdout, buffer, live))
        timed_out = False
        stopped = False
        try:
            try:
                async with asyncio.timeout(timeout):
                    await _wait_for_exit(proc, reader)
            except TimeoutError:
                timed_out = True
        except asyncio.CancelledError:
            stopped = True  # the task was stopped: after the kill, say what ran so far
            raise
        finally:
            try:
                await terminate_group(proc)
            finally:
                # Even if the termination wait is cancelled (a second Ctrl+C): no reader
                # task may outlive the call.
                reader.cancel()
                try:
                    await asyncio.wait({reader})
                finally:
                    live.close()  # the end of the output, also of a cancelled command
                    if stopped and ctx.on_stopped is not None:
                        ctx.on_stopped(buffer.render())
        code = proc.returncode
        output = buffer.render() if buffer.total else "(no output)"
        text = f"{output.rstrip(chr(10))}\n{_exit_line(code, timed_out, timeout, proc.lost)}"
        failed = timed_out or code != 0
        vacuous = ""
        if ctx.read_before_write:  # the small-model assists (tools.assisted_checks)
            from minicode.tools.assisted_checks import ran_no_test, run_hint

            vacuous = "" if failed else ran_no_test(output)
            text += run_hint(output, ctx.workspace) if failed else vacuous
            failed = failed or bool(vacuous)  # a check that checked nothing does not verify a change
        summary = "timed out" if timed_out else f"exit {code}" + (", no test ran" if code == 0 and failed else "")
        return ToolResult(text=text, is_error=failed, exit_code=None if timed_out else code, summary=summary)
