"""A 10-tool task, minicode vs pi: wall time from start to exit, in the same run (issue 16 item 6).

The scripted server answers each agent's requests with ten tool calls, one per response
(the agent runs each and sends the result back), then a final answer: 11 model requests and
10 tool runs, process start and exit included. Two tasks: ten `read`s of small files, and a
mix of five `read`s and five `bash` commands (`echo`; minicode runs with --yes, pi never
asks). Rounds interleave the agents; medians and the ratio are printed, of the wall time
(the target: ≤ 0.15x pi) and of the CPU time the process used (user + system, from wait4),
which a machine busy with other work inflates far less than the wall time. `--baseline EXE`
runs another minicode installation in the same rounds (e.g. a worktree of main), to show
what a change did. The last lines split the runs into steps (the time between two requests
the server saw): the first tool call, the first bash call, later reads and bash calls, and
the tail from the last request to the exit.

    .venv/bin/python bench/tools_task.py [--rounds 5] [--pi PATH | --no-pi] [--baseline EXE]
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from harness import Agent, FakeOpenAI, Reply, Run, add_pi_option, find_pi, minicode_agent, pi_agent, run_child  # noqa: E402

TARGET_RATIO = 0.15
CALLS = 10


def script(task: str) -> list[Reply]:
    replies = []
    for i in range(CALLS):
        if task == "mixed" and i % 2:
            replies.append(Reply.tool("bash", command=f"echo step {i}"))
        else:
            replies.append(Reply.tool("read", path=f"notes/file{i}.txt"))
    return [*replies, Reply.text("All ten steps done.")]


def prepare(agent: Agent) -> None:
    (agent.cwd / "notes").mkdir(exist_ok=True)
    for i in range(CALLS):
        (agent.cwd / "notes" / f"file{i}.txt").write_text(f"note {i}\n" * 20)


SECONDS_TO: dict[tuple[str, str], list[tuple[float, float]]] = {}
"""(agent, task) -> per run: seconds from start to the first and to the second request."""
STEPS: dict[tuple[str, str], list[tuple[list[float], float]]] = {}
"""(agent, task) -> per run: the seconds between consecutive requests (gap i: step i, the
tool call of answer i run and its result sent back) and from the last request to the exit."""


def one_run(agent: Agent, server: FakeOpenAI, task: str) -> Run:
    server.script(*script(task))
    before = len(server.requests)
    run = run_child(agent, "go through the notes", server)
    if run.first_request is not None and len(server.requests) > before + 1:
        second = run.first_request + server.requests[before + 1].arrived - server.requests[before].arrived
        SECONDS_TO.setdefault((agent.name, task), []).append((run.first_request, second))
        arrived = [r.arrived for r in server.requests[before:]]
        last = run.first_request + arrived[-1] - arrived[0]
        STEPS.setdefault((agent.name, task), []).append(([b - a for a, b in zip(arrived, arrived[1:])], run.wall - last))
    requests = len(server.requests) - before
    if run.returncode != 0 or requests != CALLS + 1:
        raise SystemExit(f"{agent.name}: exit {run.returncode}, {requests} requests (expected {CALLS + 1})")
    tool_results = sum(1 for m in server.requests[-1].messages if m.get("role") == "tool")
    if tool_results != CALLS:
        raise SystemExit(f"{agent.name}: {tool_results} tool results in the last request (expected {CALLS})")
    return run


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=5)
    add_pi_option(p)
    p.add_argument("--baseline", type=Path, help="another minicode executable to run in the same rounds")
    args = p.parse_args()
    pi = find_pi(args.pi, args.no_pi)
    print(f"load average at start: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    results: dict[tuple[str, str], list[Run]] = {}
    with FakeOpenAI() as server, tempfile.TemporaryDirectory() as tmp:
        agents = [minicode_agent(Path(tmp), server, extra=("--yes",))]
        if args.baseline:
            base = minicode_agent(Path(tmp) / "baseline", server, extra=("--yes",), exe=args.baseline)
            agents.append(dataclasses.replace(base, name="baseline"))
        if pi:
            agents.append(pi_agent(Path(tmp), server, pi))
        for agent in agents:
            prepare(agent)
            one_run(agent, server, "read")  # warm caches
        for round_no in range(args.rounds):
            for agent in agents if round_no % 2 == 0 else agents[::-1]:
                for task in ("read", "mixed"):
                    results.setdefault((agent.name, task), []).append(one_run(agent, server, task))
    print(f"\n{CALLS} tool calls + final answer, start to exit; medians of {args.rounds} interleaved rounds")
    for measure in ("wall", "cpu"):
        for task in ("read", "mixed"):
            line = f"{measure:4} {task:6}"
            for agent in agents:
                values = [getattr(run, measure) for run in results[(agent.name, task)]]
                line += f" · {agent.name} {statistics.median(values):5.2f} s (min {min(values):5.2f})"
            if pi:
                pi_median = statistics.median(getattr(run, measure) for run in results[("pi", task)])
                for agent in agents[:-1]:
                    ratio = statistics.median(getattr(run, measure) for run in results[(agent.name, task)]) / pi_median
                    verdict = "" if measure == "cpu" else (" OK" if ratio <= TARGET_RATIO else " OVER TARGET")
                    line += f" · {agent.name}/pi {ratio:.2f}{verdict}"
            print(line)
    print(f"target ≤ {TARGET_RATIO}x pi (wall)")
    for task in ("read", "mixed"):
        line = f"start to the 1st / 2nd request, {task:5}"
        for agent in agents:
            times = SECONDS_TO.get((agent.name, task), [])
            if times:
                first = statistics.median(t[0] for t in times)
                second = statistics.median(t[1] for t in times)
                line += f" · {agent.name} {1000 * first:4.0f} / {1000 * second:4.0f} ms"
        print(line)
    print_steps(agents)
    print(f"load average at end:   {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0


def print_steps(agents: list[Agent]) -> None:
    """Median milliseconds of each kind of step (see ``STEPS``): gap 1 is the first tool call
    (a read, with the agent's own loading); in the mixed task gap 2 is the first bash call,
    then reads and bash calls alternate; the tail is the last request to the exit."""
    for task in ("read", "mixed"):
        line = f"steps, {task:5} (median ms)"
        for agent in agents:
            runs = STEPS.get((agent.name, task), [])
            if not runs:
                continue
            ms = lambda values: f"{1000 * statistics.median(values):4.1f}"  # noqa: E731
            later = [gaps[i] for gaps, _ in runs for i in range(2, CALLS)]
            line += f" · {agent.name} 1st {ms([gaps[0] for gaps, _ in runs])}"
            if task == "mixed":
                reads = [gaps[i] for gaps, _ in runs for i in range(2, CALLS) if i % 2 == 0]
                bashes = [gaps[i] for gaps, _ in runs for i in range(3, CALLS) if i % 2]
                line += f", 1st bash {ms([gaps[1] for gaps, _ in runs])}, read {ms(reads)}, bash {ms(bashes)}"
            else:
                line += f", 2nd {ms([gaps[1] for gaps, _ in runs])}, later {ms(later)}"
            line += f", tail {ms([tail for _, tail in runs])}"
        print(line)


if __name__ == "__main__":
    sys.exit(main())
