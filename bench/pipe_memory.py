"""Pipe mode over many tasks: RSS of one `minicode` reading tasks from stdin (issue 16 item 4).

One pipe process gets N task lines, one at a time (the next line is written when the previous
answer has arrived); each answer is the ~2,000-token Markdown answer of render.py, sent at once.
The conversation grows, so compaction runs whenever it outgrows the context window (the
summary request gets the same answer). The fake server reports 100 prompt tokens for every
request whatever was sent — a server that under-reports its usage — so only minicode's own
estimate can trigger those compactions (`bench/pipe_probe.py` shows the same in-process,
with where the heap grows). RSS is read from /proc every tenth of the run; printed
with the growth per task over the second half (flat: ≈ 0 MB a task).

    .venv/bin/python bench/pipe_memory.py [--tasks 1000]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from harness import FakeOpenAI, Reply, minicode_agent  # noqa: E402
from render import answer_markdown  # noqa: E402


def rss_mb(pid: int) -> float:
    return int(Path(f"/proc/{pid}/statm").read_text().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 1e6


def run(tasks: int) -> list[tuple[int, float]]:
    samples: list[tuple[int, float]] = []
    with FakeOpenAI() as server, tempfile.TemporaryDirectory() as tmp:
        server.default = Reply.text(answer_markdown(), chunk_size=4000)
        agent = minicode_agent(Path(tmp), server)
        proc = subprocess.Popen(list(agent.argv_prefix), cwd=agent.cwd, env=agent.env, stdin=subprocess.PIPE,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        assert proc.stdin is not None
        try:
            for task in range(1, tasks + 1):
                before = len(server.requests)
                proc.stdin.write(f"task {task}: say something\n".encode())
                proc.stdin.flush()
                if not server.wait_for_requests(before + 1, 120):
                    raise SystemExit(f"no request for task {task}")
                if task % max(1, tasks // 10) == 0:
                    time.sleep(0.3)  # the answer lands and is saved
                    samples.append((task, rss_mb(proc.pid)))
                    print(f"  task {task:5}: RSS {samples[-1][1]:6.1f} MB  ({len(server.requests)} requests)", flush=True)
            proc.stdin.close()
            proc.wait(120)
        finally:
            if proc.poll() is None:
                proc.kill()
    return samples


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--tasks", type=int, default=1000)
    args = p.parse_args()
    print(f"load average at start: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    samples = run(args.tasks)
    half = samples[len(samples) // 2 - 1] if len(samples) >= 2 else samples[0]
    last = samples[-1]
    per_task = (last[1] - half[1]) / max(1, last[0] - half[0])
    print(f"pipe mode, {args.tasks} tasks: RSS {samples[0][1]:.1f} MB after {samples[0][0]} -> {last[1]:.1f} MB;"
          f" second half {per_task * 1000:+.1f} kB a task")
    print(f"load average at end:   {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
