"""One hook run: exit codes and output read as Claude Code reads them; faults never raise."""

from __future__ import annotations

import asyncio
import json
import os
import time
from pathlib import Path

import pytest

from minicode.hooks.run import MAX_REASON_CHARS, judge, run_hook, shown_command
from minicode.hooks.spec import HookSpec
from minicode.tools import guardlife
from tests.tools.test_spawn import group_members

SECRET = "sk-hook-secret-0123456789"


@pytest.fixture(params=["server", "own"])
def guard(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch, fresh_guard: None) -> str:
    """Every run both ways: by the command guard server, and under a guard of its own (the fallback)."""
    if request.param == "own":
        monkeypatch.setattr(guardlife, "current", lambda: None)
    return str(request.param)
GROUP_TO = "read -r _ _ _ _ group _ < /proc/$$/stat; echo $group >"
"""Writes the hook's process group id (its guard leads it) to the file named after it."""


@pytest.mark.parametrize(("code", "out", "err", "expected"), [
    (0, b"", b"", ("ok", "")),
    (0, b"formatted 3 files\n", b"", ("ok", "")),  # plain text is the hook's log
    (0, b'{"decision": "block", "reason": "no"}', b"", ("blocked", "no")),
    (0, b'{"decision": "block"}', b"", ("blocked", "(the hook gave no reason)")),
    (0, b'{"decision": "approve"}', b"", ("ok", "")),  # an allow is ignored: the rules still decide
    (0, b'{"hookSpecificOutput": {"permissionDecision": "deny", "permissionDecisionReason": "r"}}', b"", ("blocked", "r")),
    (0, b'{"hookSpecificOutput": {"permissionDecision": "allow"}}', b"", ("ok", "")),
    (0, b'{"decision": "maybe"}', b"", ("failed", 'printed a "decision" that is not "block"')),
    (0, b'{"decision": "block", "reason": 3}', b"", ("failed", 'printed a "reason" that is not a string')),
    (0, b"{oops", b"", ("failed", "printed invalid JSON")),
    (0, b"[" * 100 + b"]" * 100, b"", ("ok", "")),  # not an object, and not starting with {: a log line
    (0, b"{" + b'"a":' * 100 + b"1" + b"}" * 100, b"", ("failed", "printed invalid JSON")),  # too deep
    (0, b"\xff\xfe", b"", ("failed", "printed bytes that are not UTF-8 text")),
    (2, b'{"decision": "approve"}', b"stop that\n", ("blocked", "stop that")),  # exit 2: stderr, stdout ignored
    (2, b"", b"", ("blocked", "(the hook gave no reason)")),
    (1, b"", b"line 1\nTraceback: boom\n", ("failed", "exit 1: Traceback: boom")),
    (-9, b"", b"", ("failed", "killed by signal 9")),
    (None, b"", b"", ("failed", "exit status unknown")),
])
def test_judge(code: int | None, out: bytes, err: bytes, expected: tuple[str, str]) -> None:
    assert judge(code, out, err, "PreToolUse") == expected


def test_permission_decision_counts_for_pre_tool_use_only() -> None:
    out = b'{"hookSpecificOutput": {"permissionDecision": "deny"}}'
    assert judge(0, out, b"", "PostToolUse") == ("ok", "")


def _run(spec: HookSpec, tmp_path: Path, payload: dict | None = None, **kw) -> object:
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(tmp_path)}
    return asyncio.run(run_hook(spec, payload or {"tool_name": "bash"}, cwd=tmp_path, env=env, **kw))


@pytest.mark.usefixtures("guard")
def test_the_payload_arrives_on_stdin_with_secrets_redacted(tmp_path: Path) -> None:
    spec = HookSpec("PreToolUse", "cat > got.json")
    ran = _run(spec, tmp_path, {"tool_name": "bash", "tool_input": {"command": f"echo {SECRET}"}}, secrets=(SECRET,))
    assert ran.outcome == "ok"
    got = json.loads((tmp_path / "got.json").read_text())
    assert got == {"tool_name": "bash", "tool_input": {"command": "echo [redacted]"}}


@pytest.mark.usefixtures("guard")
def test_a_reason_is_redacted_and_capped(tmp_path: Path) -> None:
    spec = HookSpec("PreToolUse", f"echo {SECRET} >&2; head -c 10000 /dev/zero | tr '\\0' x >&2; exit 2")
    ran = _run(spec, tmp_path, secrets=(SECRET,))
    assert ran.outcome == "blocked" and ran.text.startswith("[redacted]\nxxx")
    assert len(ran.text) == MAX_REASON_CHARS and ran.text.endswith("…")


@pytest.mark.usefixtures("guard")
def test_a_big_payload_to_a_hook_that_never_reads_it_does_not_hang(tmp_path: Path) -> None:
    ran = _run(HookSpec("PreToolUse", "exit 0", timeout=10), tmp_path, {"tool_input": {"content": "x" * 5_000_000}})
    assert ran.outcome == "ok" and ran.seconds < 5


@pytest.mark.usefixtures("guard")
def test_a_hook_past_its_timeout_is_killed_with_its_children(tmp_path: Path) -> None:
    group_file = tmp_path / "pid"
    spec = HookSpec("PreToolUse", f"sleep 60 & {GROUP_TO} {group_file}; wait", timeout=1)
    started = time.monotonic()
    ran = _run(spec, tmp_path)
    assert ran.outcome == "failed" and ran.text == "timed out after 1 s (stopped)"
    assert time.monotonic() - started < 5
    assert group_members(int(group_file.read_text())) == []


@pytest.mark.usefixtures("guard")
def test_a_cancelled_hook_is_killed_before_the_cancellation_propagates(tmp_path: Path) -> None:
    group_file = tmp_path / "pid"
    spec = HookSpec("PreToolUse", f"{GROUP_TO} {group_file}; sleep 60")
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}

    async def main() -> int:
        task = asyncio.ensure_future(run_hook(spec, {}, cwd=tmp_path, env=env))
        while not (group_file.exists() and group_file.read_text().strip()):
            await asyncio.sleep(0.02)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return int(group_file.read_text())

    assert group_members(asyncio.run(main())) == []


@pytest.mark.usefixtures("guard")
def test_a_hook_that_cannot_start_is_a_failure(tmp_path: Path) -> None:
    ran = asyncio.run(run_hook(HookSpec("Stop", "true"), {}, cwd=tmp_path / "gone", env={}))
    assert ran.outcome == "failed" and ran.text.startswith("could not start")


def test_the_hook_is_named_by_its_first_line_redacted_and_short() -> None:
    assert shown_command(HookSpec("Stop", f"check {SECRET}\nmore"), (SECRET,)) == "check [redacted] …"
    assert len(shown_command(HookSpec("Stop", "x" * 200))) == 80


@pytest.mark.usefixtures("guard")
def test_a_tilde_command_runs_from_home_as_in_a_shell(tmp_path: Path) -> None:
    script = tmp_path / "bin" / "check-call"
    script.parent.mkdir()
    script.write_text("#!/bin/sh\necho \"from $HOME\" >&2\nexit 2\n")
    script.chmod(0o755)
    ran = _run(HookSpec("PreToolUse", "~/bin/check-call"), tmp_path)
    assert (ran.outcome, ran.text) == ("blocked", f"from {tmp_path}")


@pytest.mark.usefixtures("guard")
def test_an_environment_no_exec_can_carry_is_a_failure_not_a_crash(tmp_path: Path) -> None:
    ran = asyncio.run(run_hook(HookSpec("Stop", "true"), {}, cwd=tmp_path, env={"A=B": "x"}))
    assert ran.outcome == "failed" and ran.text.startswith("could not start")
