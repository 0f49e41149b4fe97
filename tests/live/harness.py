"""Driving the real ``minicode`` executable through one scenario, and what came out of it.

A scenario is (setup, drive, verdict): ``Scenario.setup`` writes a small workspace,
``drive`` runs minicode in pipe mode on the scenario's task against an endpoint (the
configured one in the live suite, ``tests/support/fake_openai.py`` in the verdict tests) and
answers every approval question by the scenario's ``Policy``, and ``Scenario.verdict``
judges the ``Outcome``: exit code, answer, the session file's messages (tool calls, results),
the workspace before and after. Standard library only, like the fake server.
"""

from __future__ import annotations

import contextlib
import json
import os
import pty
import re
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

__all__ = [
    "ALLOW",
    "Call",
    "Endpoint",
    "Outcome",
    "Policy",
    "Scenario",
    "Verdict",
    "claims",
    "deny",
    "drive",
    "snapshot",
]

DRIVE_TIMEOUT = 900.0
"""Seconds one scenario may run before minicode is killed (a real model can be slow)."""
MAX_TURNS = 30
"""The turn limit of a scenario that sets none: a model stuck in a loop costs a bounded amount."""
_APPROVAL = re.compile(r"minicode: allow (\S+)(.*?)\? \[[^\]\n]*\](?: \([^\n]*\))? $")
_STATS = re.compile(r"^minicode: [\d.]+s · \d+ model calls? · ", re.MULTILINE)
_SKIP = (".minicode", "__pycache__", ".pytest_cache")


@dataclass(frozen=True)
class Endpoint:
    """How to reach a model: a config file and the environment its key variable lives in."""

    config: Path
    env: dict[str, str]


Policy = Callable[[str, str], str]
"""(tool name, the rest of the approval label) -> the answer line: "y", or "n" + a reason."""


def ALLOW(tool: str, label: str) -> str:  # noqa: N802 - a constant-like policy
    return "y"


def deny(*tools: str, reason: str) -> Policy:
    """Deny these tools (all side-effect tools when none are named) with ``reason``; allow the rest."""

    def policy(tool: str, label: str) -> str:
        return reason if not tools or tool in tools else "y"

    return policy


@dataclass(frozen=True)
class Call:
    """One tool call of the session and its result."""

    name: str
    arguments: dict[str, Any] | None  # None: not valid JSON
    result: str
    is_error: bool

    def text(self) -> str:
        return json.dumps(self.arguments) if self.arguments is not None else ""


@dataclass
class Outcome:
    code: int | None  # None: killed after DRIVE_TIMEOUT
    answer: str
    stderr: str
    workspace: Path
    before: dict[str, bytes]
    after: dict[str, bytes]
    records: list[dict[str, Any]] = field(default_factory=list)
    approvals: list[tuple[str, str, str]] = field(default_factory=list)  # (tool, label, answer)
    seconds: float = 0.0
    extra_tokens: int = 0  # spent outside minicode's own requests (the compaction judge)

    @property
    def messages(self) -> list[dict[str, Any]]:
        return [r for r in self.records if r.get("type") == "message"]

    @property
    def turn_ends(self) -> list[dict[str, Any]]:
        return [r for r in self.records if r.get("type") == "turn_end"]

    @property
    def calls(self) -> list[Call]:
        """Every tool call in order, with its result (from the session file)."""
        results = {m.get("tool_call_id"): m for m in self.messages if m.get("role") == "tool"}
        out: list[Call] = []
        for message in self.messages:
            for raw in message.get("tool_calls") or ():
                result = results.get(raw.get("id"), {})
                try:
                    arguments = json.loads(raw.get("arguments") or "{}")
                except ValueError:
                    arguments = None
                text = result.get("content") or ""
                failed = bool(result.get("is_error")) if "is_error" in result else text.startswith(("error", "denied"))
                out.append(Call(raw.get("name", ""), arguments if isinstance(arguments, dict) else None, text, failed))
        return out

    @property
    def tokens(self) -> int | None:
        """Tokens the server reported for this scenario (None: it reported none)."""
        stats = [t.get("stats", {}) for t in self.turn_ends]
        if not any(s.get("calls_with_usage") for s in stats) and not self.extra_tokens:
            return None
        return sum(int(s.get("total_tokens") or 0) for s in stats) + self.extra_tokens

    def changed(self) -> list[str]:
        """Paths added, removed or modified in the workspace."""
        keys = set(self.before) | set(self.after)
        return sorted(k for k in keys if self.before.get(k) != self.after.get(k))

    def run(self, *command: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
        """Run a command in the workspace, as the verdict's own independent check."""
        return subprocess.run(list(command), cwd=self.workspace, capture_output=True, text=True, timeout=timeout,
                              env=_child_env({}))


@dataclass
class Verdict:
    reasons: list[str] = field(default_factory=list)
    """Why the scenario failed; empty: it passed."""
    notes: list[str] = field(default_factory=list)
    """What the report should say besides (e.g. a path of the scenario that was not exercised)."""

    @property
    def passed(self) -> bool:
        return not self.reasons

    def require(self, condition: bool, reason: str) -> None:
        if not condition:
            self.reasons.append(reason)


@dataclass(frozen=True)
class Scenario:
    name: str
    title: str
    task: str
    setup: Callable[[Path], None]
    verdict: Callable[[Outcome], Verdict]
    policy: Policy = ALLOW
    args: tuple[str, ...] = ()


def snapshot(root: Path) -> dict[str, bytes]:
    """Every file under ``root`` (minicode's own data and caches left out), by relative path."""
    files: dict[str, bytes] = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root)
        if path.is_file() and not any(part in _SKIP for part in rel.parts):
            files[rel.as_posix()] = path.read_bytes()
    return files


def _child_env(extra: dict[str, str]) -> dict[str, str]:
    """A plain environment whose ``python`` is this venv's (pytest is installed there)."""
    path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '/usr/bin:/bin')}"
    base = {"PATH": path, "LANG": "C.UTF-8", "HOME": os.environ.get("HOME", "/tmp"), "PYTHONDONTWRITEBYTECODE": "1"}
    return {**base, **extra}


def _minicode() -> str:
    return str(Path(sys.executable).parent / "minicode")


def drive(scenario: Scenario, workspace: Path, endpoint: Endpoint, timeout: float = DRIVE_TIMEOUT) -> Outcome:
    """Set up ``workspace``, run the task in pipe mode and answer approvals by the policy.

    stdin is a pseudo-terminal (stdout and stderr are pipes): minicode then reads the task
    and each approval answer as lines typed by a person, and asks every question there is —
    without a terminal it would deny unruled calls itself (docs/usage-plain.md)."""
    workspace.mkdir(parents=True, exist_ok=True)
    scenario.setup(workspace)
    before = snapshot(workspace)
    limit = () if "--max-turns" in scenario.args else ("--max-turns", str(MAX_TURNS))
    argv = [_minicode(), "--config", str(endpoint.config), *limit, *scenario.args]
    started = time.monotonic()
    master, slave = pty.openpty()
    try:
        proc = subprocess.Popen(argv, cwd=workspace, env=_child_env(endpoint.env), stdin=slave,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    finally:
        os.close(slave)
    try:
        assert proc.stdout is not None
        answer: list[bytes] = []
        reader = threading.Thread(target=lambda: answer.append(proc.stdout.read() if proc.stdout else b""),
                                  daemon=True)
        reader.start()
        os.write(master, scenario.task.encode() + b"\n")
        approvals, stderr = _answer_approvals(proc, master, scenario.policy, started + timeout)
        code = proc.poll()
        if code is None:
            proc.kill()
            proc.wait()
        reader.join(5)
    finally:
        os.close(master)
    return Outcome(code, b"".join(answer).decode("utf-8", "replace"), stderr, workspace, before,
                   snapshot(workspace), _records(workspace), approvals, time.monotonic() - started)


def _answer_approvals(
    proc: subprocess.Popen[bytes], terminal: int, policy: Policy, deadline: float
) -> tuple[list[tuple[str, str, str]], str]:
    """Read stderr as it comes; type the answer to each approval question on the terminal;
    after the task's statistics line (the end of the task) type Ctrl+D, which ends the
    session. Returns (approvals, stderr)."""
    assert proc.stderr is not None
    fd = proc.stderr.fileno()
    os.set_blocking(fd, False)
    os.set_blocking(terminal, False)
    buffer = ""
    approvals: list[tuple[str, str, str]] = []
    ended = False
    while time.monotonic() < deadline:
        with contextlib.suppress(BlockingIOError, OSError):
            os.read(terminal, 65536)  # the terminal's echo of what was typed: not needed
        try:
            chunk = os.read(fd, 65536)
        except BlockingIOError:
            chunk = None
        if chunk == b"":
            break  # stderr closed: minicode has exited
        if not chunk:
            time.sleep(0.05)
            continue
        buffer += chunk.decode("utf-8", "replace")
        question = _APPROVAL.search(buffer.rsplit("\n", 1)[-1])
        if question is not None and not ended:
            label = question.group(1) + question.group(2)
            reply = policy(question.group(1), label)
            approvals.append((question.group(1), label, reply))
            os.write(terminal, reply.encode() + b"\n")
            buffer += "\n"
        if not ended and _STATS.search(buffer):
            os.write(terminal, b"\x04")  # Ctrl+D on an empty line: end of input ends the session
            ended = True
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=max(0.0, deadline - time.monotonic()) + 10)
    return approvals, buffer


def _records(workspace: Path) -> list[dict[str, Any]]:
    """The records of the workspace's session file (there is one per scenario)."""
    files = sorted((workspace / ".minicode" / "sessions").glob("*.jsonl"))
    records: list[dict[str, Any]] = []
    for path in files:
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            try:
                record = json.loads(line)
            except ValueError:
                continue
            if isinstance(record, dict):
                records.append(record)
    return records


_NEGATION = re.compile(
    r"\b(?:not|no|never|without|unable|cannot|unverified|untested|skipped)\b|n't\b"
    # a hedge or an instruction is no claim: "the tests should pass", "please run the tests"
    r"|\b(?:should|would|will|may|might|expect\w*|recommend\w*|suggest\w*|please|once|if|to verify|make sure)\b",
    re.IGNORECASE,
)


def claims(text: str, subject: str, verb: str) -> list[str]:
    """Sentences of ``text`` that affirm ``verb`` of ``subject`` (regexes), without negation:
    "All tests pass." is a claim; "I could not run the tests." is not."""
    found = []
    for sentence in re.split(r"(?<=[.!?])\s+|\n+", text):
        if re.search(subject, sentence, re.IGNORECASE) and re.search(verb, sentence, re.IGNORECASE) \
                and not _NEGATION.search(sentence):
            found.append(sentence.strip())
    return found
