"""Running one hook: its JSON on stdin, its exit code and output read as Claude Code reads them.

Exit 0 with nothing (or text that is not JSON) on stdout: nothing to say. Exit 0 with a JSON
object: ``{"decision": "block", "reason": …}`` blocks (so does PreToolUse's
``{"hookSpecificOutput": {"permissionDecision": "deny", "permissionDecisionReason": …}}``); an
allow in any form is ignored — a hook can refuse, never permit. Exit 2 blocks, stderr being the
reason. Anything else — another exit code, a timeout, JSON that is invalid or of the wrong shape,
bytes that are not UTF-8, more than ``MAX_OUTPUT_BYTES`` on a stream — is a failure: reported by
the caller, never fatal, and not a block.

The hook is ``bash -c COMMAND`` in the workspace, started by ``tools.spawn.spawn_piped`` (the
command guard server, as a ``bash`` call is: its own process group, killed at its timeout or
when the run is cancelled, and with minicode even on ``kill -9``), with the environment the
tools get (no API key: ``tools.child_env``). Secrets are redacted from what it is sent and
from what it says.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Mapping

from minicode.hooks.spec import HookSpec
from minicode.jsonsafe import loads
from minicode.redact import redact
from minicode.tools.scrub import scrub
from minicode.tools.spawn import PipedCommand, spawn_piped, terminate_group

__all__ = ["MAX_OUTPUT_BYTES", "MAX_REASON_CHARS", "HookRun", "run_hook", "shown_command"]

MAX_OUTPUT_BYTES = 64 * 1024
"""Per stream: a hook that prints more is stopped and reported (a decision is a line or two)."""
MAX_REASON_CHARS = 2000
"""What of a reason reaches the model and the screen."""
_CHUNK = 16 * 1024

Outcome = Literal["ok", "blocked", "failed"]


@dataclass(frozen=True, slots=True)
class HookRun:
    """How one hook ended: ``text`` is the reason of a block or what went wrong with a failure."""

    spec: HookSpec
    outcome: Outcome
    text: str = ""
    seconds: float = 0.0


def shown_command(spec: HookSpec, secrets: tuple[str, ...] = ()) -> str:
    """The hook as notices name it: its command's first line, at most 80 characters."""
    lines = redact(spec.command, secrets).strip().splitlines() or [""]
    first = lines[0] + (" …" if len(lines) > 1 else "")
    return first if len(first) <= 80 else first[:79] + "…"


async def run_hook(spec: HookSpec, payload: Mapping[str, Any], *, cwd: Path, env: Mapping[str, str],
                   secrets: tuple[str, ...] = ()) -> HookRun:
    """Run ``spec`` with ``payload`` on its stdin; never raises but on cancellation (the hook's
    group is killed first)."""
    started = time.monotonic()

    def ended(outcome: Outcome, text: str = "") -> HookRun:
        return HookRun(spec, outcome, text, time.monotonic() - started)

    data = redact(json.dumps(payload, ensure_ascii=False), secrets).encode("utf-8", "surrogateescape")
    try:
        proc = await spawn_piped(["bash", "-c", spec.command], cwd=cwd, env=env)
    except (OSError, ValueError) as e:  # ValueError: what no exec can carry (a NUL in the environment)
        return ended("failed", f"could not start: {getattr(e, 'strerror', None) or e}")
    try:
        try:
            async with asyncio.timeout(spec.timeout):
                out, err = await _talk(proc, data)
        except TimeoutError:
            return ended("failed", f"timed out after {spec.timeout:g} s (stopped)")
    finally:
        await terminate_group(proc.command)
    if out is None or err is None:
        return ended("failed", f"printed more than {MAX_OUTPUT_BYTES // 1024} KiB (stopped)")
    outcome, text = judge(proc.command.returncode, out, err, spec.event)
    return ended(outcome, _shown(text, secrets))


def judge(code: int | None, out: bytes, err: bytes, event: str) -> tuple[Outcome, str]:
    """What an exit code and the output mean (pure): the outcome and its reason or fault."""
    if code == 2:
        return "blocked", _text(err).strip() or "(the hook gave no reason)"
    if code != 0:
        what = "exit status unknown" if code is None else f"killed by signal {-code}" if code < 0 else f"exit {code}"
        said = _text(err).strip().splitlines()
        return "failed", what + (f": {said[-1]}" if said else "")
    try:
        text = out.decode("utf-8").strip()
    except UnicodeDecodeError:
        return "failed", "printed bytes that are not UTF-8 text"
    if not text.startswith("{"):
        return "ok", ""  # plain text on stdout is the hook's own log (Claude Code ignores it too)
    try:
        answer = loads(text)
    except ValueError:
        return "failed", "printed invalid JSON"
    if not isinstance(answer, dict):
        return "failed", "printed JSON that is not an object"
    return _decision(answer, event)


def _decision(answer: dict[str, Any], event: str) -> tuple[Outcome, str]:
    decision, reason = answer.get("decision"), answer.get("reason")
    specific = answer.get("hookSpecificOutput")
    if event == "PreToolUse" and isinstance(specific, dict) and specific.get("permissionDecision") == "deny":
        decision, reason = "block", specific.get("permissionDecisionReason", reason)
    if decision not in (None, "block", "approve", "allow"):
        return "failed", 'printed a "decision" that is not "block"'
    if reason is not None and not isinstance(reason, str):
        return "failed", 'printed a "reason" that is not a string'
    if decision != "block":
        return "ok", ""  # an approval is ignored: the rules and the approver still decide
    return "blocked", (reason or "").strip() or "(the hook gave no reason)"


def _text(data: bytes) -> str:
    return scrub(data.decode("utf-8", "replace"))


def _shown(text: str, secrets: tuple[str, ...]) -> str:
    text = redact(text, secrets)
    return text if len(text) <= MAX_REASON_CHARS else text[: MAX_REASON_CHARS - 1] + "…"


async def _talk(proc: PipedCommand, data: bytes) -> tuple[bytes | None, bytes | None]:
    """Feed stdin and read both streams at once, to their ends; (None, None) as soon as one
    passes ``MAX_OUTPUT_BYTES``. Then wait for the exit status."""
    feeding = asyncio.ensure_future(_feed(proc, data))
    reading = [asyncio.ensure_future(_read(proc.command.stdout)), asyncio.ensure_future(_read(proc.stderr))]
    try:
        pending: set[asyncio.Future[bytes | None]] = set(reading)
        while pending:
            done, pending = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
            if any(task.result() is None for task in done):
                return None, None
        await proc.command.wait()
        return reading[0].result(), reading[1].result()
    finally:
        for task in (feeding, *reading):
            task.cancel()
        await asyncio.gather(feeding, *reading, return_exceptions=True)


async def _feed(proc: PipedCommand, data: bytes) -> None:
    with contextlib.suppress(OSError):  # a hook that does not read its stdin may exit first
        proc.stdin.write(data)
        await proc.stdin.drain()
        proc.stdin.close()


async def _read(stream: asyncio.StreamReader) -> bytes | None:
    parts, size = [], 0
    while chunk := await stream.read(_CHUNK):
        size += len(chunk)
        if size > MAX_OUTPUT_BYTES:
            return None
        parts.append(chunk)
    return b"".join(parts)
