"""The live bench (issue 25): minicode and pi side by side on a real model server.

Every task of ``bench/live_tasks.py`` is written into a fresh ``git init`` workspace for each
agent and run unattended — ``minicode --yes -C WS TASK`` (a config file outside the workspace
naming the endpoint, no key) and ``pi -p TASK`` (an ``openai-completions`` provider in the
``models.json`` of an agent directory of its own; ``bench/live_agents.py``) — with a wall-time
limit per task; then the task's check decides. Both agents reach the server through
``live_proxy.RecordingProxy`` on 127.0.0.1, which records per request the prompt tokens sent,
what llama.cpp evaluated and took from its cache (``timings.prompt_n`` / ``cache_n``), the
server's own time, the output tokens and the tool calls.

Neither agent is told the context window unless ``--context-window`` is given (then both
are): each uses what it finds or assumes, as a user with the minimal config would. Tasks run
one after the other (the server serves one request at a time), task by task, the agents'
order alternating. Nothing here runs in CI: it needs the model server (../shared/live/).

    .venv/bin/python bench/live.py [--agents minicode,pi] [--tasks a,b] [--base-url URL] [--model ID]
        [--repeat N] [--timeout SECONDS] [--json OUT] [--keep] [--pi PATH] [--minicode PATH] [--context-window N]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import shutil
import signal
import statistics
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable, Sequence

sys.path.insert(0, str(Path(__file__).resolve().parent))

import httpx2  # noqa: E402

from live_agents import MINICODE, Setup, child_env, find_pi, minicode_setup, pi_setup  # noqa: E402
from live_proxy import Exchange, RecordingProxy, written_call  # noqa: E402
from live_tasks import Task, by_names  # noqa: E402

AGENTS = ("minicode", "pi")
DEFAULT_BASE_URL = "http://127.0.0.1:8080/v1"
DEFAULT_MODEL = "qwen2.5-coder-1.5b"
DEFAULT_TIMEOUT = 300.0
CHECK_TIMEOUT = 120.0
_TAIL = 160


@dataclass(slots=True)
class Result:
    agent: str
    task: str
    repeat: int
    solved: bool
    why: str
    wall: float
    exit_code: int | None
    """None: killed at the time limit."""
    requests: int = 0
    prompt_tokens: int = 0
    evaluated: int = 0
    cached: int = 0
    output_tokens: int = 0
    native_calls: int = 0
    tool_results: int = 0
    written_calls: int = 0
    """Answers with no native call whose text is shaped like one (``live_proxy.written_call``)."""
    later_sent: int = 0
    later_evaluated: int = 0
    """Prompt tokens sent and evaluated in the task's requests after its first (issue 25 item 7):
    with a prefix that stays byte-identical the server evaluates only each request's new part."""
    server_seconds: float = 0.0
    """The server's own time for this run's requests (llama.cpp timings); wall minus this is the
    agent's own time plus waiting for the server (other clients' requests on a shared one)."""
    answer: str = ""
    exchanges: list[dict[str, object]] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class Finished:
    code: int | None
    stdout: str
    stderr: str
    wall: float


async def run_process(argv: Sequence[str], cwd: Path, env: dict[str, str], timeout: float,
                      shell: bool = False) -> Finished:
    """Run to the end or to ``timeout`` (then its whole process group is killed)."""
    started = time.monotonic()
    if shell:
        proc = await asyncio.create_subprocess_shell(argv[0], cwd=cwd, env=env, stdin=asyncio.subprocess.DEVNULL,
                                                     stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
                                                     start_new_session=True)
    else:
        proc = await asyncio.create_subprocess_exec(*argv, cwd=cwd, env=env, stdin=asyncio.subprocess.DEVNULL,
                                                    stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
                                                    start_new_session=True)
    killed = False
    try:
        out, err = await asyncio.wait_for(proc.communicate(), timeout)
    except TimeoutError:
        killed, out, err = True, b"", b""
    finally:
        # the whole group, also after a normal exit: nothing the agent started in the background outlives it
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    if killed:
        await proc.wait()
    wall = time.monotonic() - started
    return Finished(None if killed else proc.returncode, out.decode("utf-8", "replace"),
                    err.decode("utf-8", "replace"), wall)


async def make_workspace(task: Task, workspace: Path) -> None:
    """The task's files in a fresh git repository with one commit."""
    workspace.mkdir(parents=True)
    for rel, text in task.files.items():
        path = workspace / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    env = child_env(workspace.parent) | {"GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "bench@localhost",
                                         "GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "bench@localhost"}
    done = await run_process(["git init -q && git add -A && git commit -qm 'task files' --allow-empty"],
                             workspace, env, 30, shell=True)
    if done.code != 0:
        raise RuntimeError(f"git init in {workspace} failed: {done.stderr.strip()[-_TAIL:]}")


def _last_line(text: str) -> str:
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return lines[-1][:_TAIL] if lines else ""


async def judge(task: Task, workspace: Path, answer: str, timeout: float = CHECK_TIMEOUT) -> tuple[bool, str]:
    """(solved, why not): files that had to stay unchanged, the answer's patterns, the check."""
    for rel in task.unchanged:
        path = workspace / rel
        if not path.is_file():
            return False, f"deleted {rel}"
        if path.read_bytes() != task.files[rel].encode("utf-8"):
            return False, f"edited {rel}"
    for pattern in task.answer:
        if not re.search(pattern, answer, re.IGNORECASE):
            return False, f"answer lacks /{pattern}/: {_last_line(answer)[:60]!r}"
    if task.check is not None:
        done = await run_process([task.check], workspace, child_env(workspace.parent), timeout, shell=True)
        if done.code is None:
            return False, f"check timed out after {timeout:.0f} s"
        if done.code != 0:
            detail = (_last_line(done.stdout) or _last_line(done.stderr)).replace(f"{workspace}/", "")
            return False, f"check exit {done.code}" + (f": {detail}" if detail else "")
    return True, ""


def tool_results_run(exchanges: Sequence[Exchange]) -> int:
    """Calls the agent ran: the new ``tool`` messages of each request over the one before
    (a history that shrank — compaction — counts from its new start)."""
    total, before = 0, 0
    for exchange in exchanges:
        count = exchange.request.tool_results
        total += count - before if count >= before else count
        before = count
    return total


def summarise_exchanges(result: Result, exchanges: Sequence[Exchange]) -> None:
    chats = [e for e in exchanges if e.is_chat]
    result.requests = len(chats)
    for number, e in enumerate(chats):
        r = e.response
        if number:
            result.later_sent += r.prompt_tokens or 0
            result.later_evaluated += r.evaluated or 0
        result.prompt_tokens += r.prompt_tokens or 0
        result.evaluated += r.evaluated or 0
        result.cached += r.cached or 0
        result.output_tokens += r.completion_tokens or 0
        result.native_calls += r.tool_calls
        result.written_calls += written_call(r)
        result.server_seconds += (r.server_ms or 0.0) / 1000
    result.tool_results = tool_results_run(chats)
    result.server_seconds = round(result.server_seconds, 2)
    result.exchanges = [asdict(e) for e in exchanges]


async def run_one(setup: Setup, task: Task, repeat: int, root: Path, proxy: RecordingProxy,
                  timeout: float) -> Result:
    slot = f"{task.name}-{repeat}"
    workspace = root / setup.name / slot
    await make_workspace(task, workspace)
    before = len(proxy.exchanges)
    done = await run_process(setup.command(task.prompt, workspace, slot), workspace, setup.env, timeout)
    await proxy.idle(10)  # a killed agent's last request: recorded once the proxy has closed it upstream
    exchanges = proxy.exchanges[before:]
    if done.code is None:
        solved, why = False, f"timed out after {timeout:.0f} s"
    else:
        solved, why = await judge(task, workspace, done.stdout)
        if solved and done.code != 0:
            why = f"solved, but exit {done.code}"
        elif not solved and done.code != 0:
            why += f"; exit {done.code}: {_last_line(done.stderr)[:80]}"
    result = Result(setup.name, task.name, repeat, solved, why, round(done.wall, 2), done.code,
                    answer=done.stdout[-2000:])
    summarise_exchanges(result, exchanges)
    if not solved and result.tool_results == 0 and result.native_calls == 0:
        result.why += "; no tool call"
    return result


def summary_rows(results: Sequence[Result], agents: Sequence[str]) -> list[str]:
    rows = ["| | " + " | ".join(agents) + " |", "|---|" + "---|" * len(agents)]

    def row(label: str, value: Callable[[str], str]) -> None:
        rows.append(f"| {label} | " + " | ".join(value(a) for a in agents) + " |")

    def of(agent: str) -> list[Result]:
        return [r for r in results if r.agent == agent]

    row("solved", lambda a: f"{sum(r.solved for r in of(a))} / {len(of(a))}")
    row("median wall per task", lambda a: f"{statistics.median(r.wall for r in of(a)):.1f} s" if of(a) else "-")
    row("median server time per task", lambda a: f"{statistics.median(r.server_seconds for r in of(a)):.1f} s"
        if of(a) else "-")
    row("model requests", lambda a: f"{sum(r.requests for r in of(a)):,}")
    row("prompt tokens sent", lambda a: f"{sum(r.prompt_tokens for r in of(a)):,}")
    row("  evaluated by the server", lambda a: f"{sum(r.evaluated for r in of(a)):,}")
    row("  taken from its cache", lambda a: f"{sum(r.cached for r in of(a)):,}")
    row("  after a task's first request: evaluated / sent", lambda a: f"{sum(r.later_evaluated for r in of(a)):,} / "
                                                             f"{sum(r.later_sent for r in of(a)):,}")
    row("output tokens", lambda a: f"{sum(r.output_tokens for r in of(a)):,}")
    row("tool calls: native / run", lambda a: f"{sum(r.native_calls for r in of(a))} / "
                                              f"{sum(r.tool_results for r in of(a))}")
    row("answers with a call written as text", lambda a: f"{sum(r.written_calls for r in of(a))}")
    return rows


def task_line(r: Result) -> str:
    mark = "solved" if r.solved else "FAILED"
    return (f"{r.agent:8} {r.task:18} {mark:6} {r.wall:6.1f} s (server {r.server_seconds:5.1f} s) {r.requests:2} req  sent {r.prompt_tokens:6,}"
            f"  eval {r.evaluated:6,}  cached {r.cached:6,}"
            + (f" (later eval {r.later_evaluated:,}/{r.later_sent:,})" if r.requests > 1 else "")
            + f"  out {r.output_tokens:5,}"
            f"  calls {r.native_calls}/{r.tool_results}" + (f" ({r.written_calls} as text)" if r.written_calls else "")
            + (f"  {r.why}" if r.why else ""))


async def preflight(base_url: str) -> None:
    try:
        async with httpx2.AsyncClient(timeout=10) as client:
            response = await client.get(base_url.rstrip("/") + "/models")
    except httpx2.HTTPError as e:
        raise SystemExit(f"the model server at {base_url} does not answer ({type(e).__name__}: {e}); "
                         "start it with ../shared/live/serve.sh") from e
    if response.status_code >= 400:
        raise SystemExit(f"the model server at {base_url} answers GET /models with {response.status_code}")


async def bench(args: argparse.Namespace, tasks: Sequence[Task], agents: Sequence[str], root: Path) -> list[Result]:
    await preflight(args.base_url)
    results: list[Result] = []
    async with RecordingProxy(args.base_url) as proxy:
        setups = {"minicode": lambda: minicode_setup(root, proxy.base_url, args.model, args.context_window,
                                                     args.minicode),
                  "pi": lambda: pi_setup(root, proxy.base_url, args.model, args.context_window, find_pi(args.pi))}
        chosen = [setups[name]() for name in agents]
        for repeat in range(1, args.repeat + 1):
            for number, task in enumerate(tasks):
                for setup in chosen if number % 2 == 0 else chosen[::-1]:
                    result = await run_one(setup, task, repeat, root, proxy, args.timeout)
                    results.append(result)
                    print(task_line(result), flush=True)
    return results


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    p.add_argument("--agents", default="minicode,pi", help="comma-separated: minicode, pi (default both)")
    p.add_argument("--tasks", default=None, help="comma-separated task names (default: all)")
    p.add_argument("--base-url", default=DEFAULT_BASE_URL)
    p.add_argument("--model", default=DEFAULT_MODEL)
    p.add_argument("--repeat", type=int, default=1)
    p.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT, help="wall-time limit per task, seconds")
    p.add_argument("--json", type=Path, default=None, metavar="OUT", help="save every result and request here")
    p.add_argument("--keep", action="store_true", help="keep the workspaces (and sessions) to read afterwards")
    p.add_argument("--pi", default=None, metavar="PATH", help="the pi executable (default: $PI_BIN, else pi on PATH)")
    p.add_argument("--minicode", type=Path, default=MINICODE, metavar="PATH",
                   help="the minicode executable (default: the one beside the python running the bench; another branch's to compare)")
    p.add_argument("--context-window", type=int, default=None, help="tell both agents this context window")
    p.add_argument("--list", action="store_true", help="list the tasks and exit")
    args = p.parse_args(argv)
    agents = [a.strip() for a in args.agents.split(",") if a.strip()]
    if not agents or any(a not in AGENTS for a in agents):
        p.error(f"--agents: choose from {', '.join(AGENTS)}")
    if args.repeat < 1 or args.timeout <= 0:
        p.error("--repeat and --timeout must be positive")
    args.agents = agents
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        tasks = by_names(args.tasks)
    except ValueError as e:
        print(f"live bench: {e}", file=sys.stderr)
        return 2
    if args.list:
        for task in tasks:
            print(f"{task.name:18} {task.kind:26} {task.prompt}")
        return 0
    root = Path(tempfile.mkdtemp(prefix="minicode-live-"))
    started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    print(f"live bench {started}: {len(tasks)} tasks x {args.repeat} for {', '.join(args.agents)} against "
          f"{args.base_url} ({args.model}), limit {args.timeout:.0f} s a task; workspaces under {root}")
    try:
        results = asyncio.run(bench(args, tasks, args.agents, root))
    finally:
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)
    print()
    print("\n".join(summary_rows(results, args.agents)))
    print("(tool calls: native = in the server's responses; run = tool results the agent sent back; "
          "written as text = answers without a native call whose text is shaped like one)")
    if args.keep:
        print(f"workspaces and sessions kept under {root}")
    if args.json is not None:
        args.json.write_text(json.dumps({"started": started, "base_url": args.base_url, "model": args.model,
                                         "agents": args.agents, "timeout": args.timeout,
                                         "results": [asdict(r) for r in results]}, indent=1))
        print(f"results saved to {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
