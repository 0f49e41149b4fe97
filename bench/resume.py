"""Resuming a big session: time to the first request (pipe mode), to the first full screen
(full-screen mode), and peak memory, for a ~60 MB session file and a tiny one.

Run: .venv/bin/python bench/resume.py [--mb 60] [--runs 5] [--pipe-only | --tui-only] [--phases]
         [--compare OTHER/bin/minicode]

The big session is built like a long real one: tasks of one user message, six tool calls
(bash and read, ~10 KB of output each) and a Markdown answer, compacted every 20 tasks (a
checkpoint record), so what the next request carries is small and nearly all of the file is
history before the checkpoint. Targets (issue 12): ≤ 0.5 s to the first request in pipe mode,
≤ 0.3 s to the first full screen, peak RSS ≤ 2× the file size. Each figure is the median of
``--runs`` runs after a warm-up; the tiny session (a few messages) is measured in the same
run, so the ratio big/tiny shows what the file's size costs on this machine.

``--phases`` runs the big session's full screen again under ``first_frame_trace.py`` and
prints the process's CPU time at each step to the first frame (medians): where the time goes.
``--compare EXE`` measures another build's executable (e.g. a checkout of main in its own
venv) in the same interleaved rounds, so before/after is one run under one load.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from minicode.agent.deps import ToolOutcome  # noqa: E402
from minicode.compaction.checkpoint import Checkpoint  # noqa: E402
from minicode.provider.types import Message, ToolCall  # noqa: E402
from minicode.session import records  # noqa: E402
from tests.support.fake_openai import FakeOpenAI, Reply  # noqa: E402

EXE = str(Path(sys.executable).parent / "minicode")
COLUMNS, ROWS = 100, 30
LAST_ANSWER = "LAST-ANSWER-MARKER"


def make_session(workspace: Path, megabytes: float) -> str:
    """A valid session file of about ``megabytes`` MB in ``workspace``; returns its id."""
    session_id = str(uuid.uuid4())
    directory = workspace / ".minicode" / "sessions"
    directory.mkdir(parents=True, exist_ok=True)
    target = int(megabytes * 1024 * 1024)
    size = messages = task = 0
    body = "\n".join(f"{i:6}\tdef function_{i}(value):  # a line of code with some words in it" for i in range(150))
    with open(directory / f"{session_id}.jsonl", "w", encoding="utf-8") as f:

        def put(record: dict[str, object]) -> None:
            nonlocal size
            line = json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n"
            f.write(line)
            size += len(line.encode())

        put(records.header_record(session_id, str(workspace), "2026-01-01T00:00:00+00:00"))
        while size < target or task % 20 != 1:
            put(records.message_record(Message.user(f"task {task}: fix the failing test in module_{task}.py")))
            messages += 1
            for step in range(6):
                call_id = f"call_{task}_{step}"
                name, args = ("bash", {"command": f"pytest -q tests/test_{task}.py"}) if step % 2 == 0 else (
                    "read", {"path": f"src/module_{task}.py"})
                put(records.message_record(Message(role="assistant", content="Let me look." if step == 0 else None,
                                                   tool_calls=(ToolCall(call_id, name, json.dumps(args)),))))
                put(records.message_record(Message.tool(call_id, f"{task}/{step}\n" + body),
                                           ToolOutcome(False, 0 if name == "bash" else None, status="done",
                                                       duration_seconds=0.4, summary="150 lines")))
                messages += 2
            answer = f"## Task {task}\n\nFixed `module_{task}.py`; the tests pass.\n\n- ran pytest\n- read the module\n"
            put(records.message_record(Message(role="assistant", content=answer)))
            messages += 1
            put({"type": "turn_end", "status": "done", "stats": {"wall_seconds": 9.5, "model_calls": 7, "tool_calls": 6,
                 "prompt_tokens": 9000, "completion_tokens": 300, "total_tokens": 9300, "calls_with_usage": 7}})
            task += 1
            if task % 20 == 0:
                put(records.checkpoint_record(Checkpoint(f"summary of tasks 0..{task} " + "words " * 400, messages - 14)))
        put(records.message_record(Message.user("and the last question?")))
        put(records.message_record(Message(role="assistant", content=f"The last answer: {LAST_ANSWER}.")))
    return session_id


def home_of(ws: Path) -> Path:
    """A home directory beside the workspace: minicode refuses a workspace that is $HOME."""
    home = ws.with_name(ws.name + "-home")
    home.mkdir(exist_ok=True)
    return home


def workspace_with(root: Path, name: str, base_url: str, megabytes: float | None) -> tuple[Path, str, int]:
    ws = root / name
    (ws / "config").mkdir(parents=True)
    (ws / "config" / "config.toml").write_text(f'[model]\nbase_url = "{base_url}"\nname = "m"\napi_key = ""\n')
    if megabytes is None:
        session_id = make_small(ws)
    else:
        session_id = make_session(ws, megabytes)
    size = (ws / ".minicode" / "sessions" / f"{session_id}.jsonl").stat().st_size
    return ws, session_id, size


def make_small(ws: Path) -> str:
    return make_session(ws, 0)


def pipe_run(server: FakeOpenAI, ws: Path, session_id: str) -> tuple[float, float]:
    """(seconds from spawn to the first request, peak RSS in MiB of the process)."""
    server.default = Reply.text("ok")
    before = len(server.requests)
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home_of(ws))}
    started = time.monotonic()
    proc = subprocess.Popen([EXE, "--session", session_id], cwd=ws, stdin=subprocess.PIPE,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    assert proc.stdin is not None
    proc.stdin.write(b"one more thing\n")
    proc.stdin.close()
    if not server.wait_for_requests(before + 1, 60):
        raise SystemExit("no request within 60 s: " + (proc.stderr.read().decode() if proc.stderr else ""))
    first = server.requests[before].arrived - started
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"minicode failed ({proc.returncode}): " + (proc.stderr.read().decode() if proc.stderr else ""))
    return first, usage.ru_maxrss / 1024


def tui_run(ws: Path, session_id: str, exe: str = EXE,
            trace: Path | None = None) -> tuple[float, float, float, float]:
    """(seconds from spawn to the first full screen, peak RSS in MiB at the application's
    frame, CPU seconds until the first full screen, seconds to the application's own frame): the screen is full when the status bar (state,
    model, session id) and the last answer of the history are both on it; the application's
    frame with the context share on the status bar. With ``trace``, runs under
    ``first_frame_trace.py`` writing its marks there."""
    import pexpect

    from tests.pty.screen import Screen

    env = {"HOME": str(home_of(ws)), "PATH": os.environ.get("PATH", ""), "TERM": "xterm-256color", "LANG": "C.UTF-8"}
    argv = [exe, "--session", session_id]
    if trace is not None:
        env["MINICODE_BENCH_TRACE"] = str(trace)
        python = str(Path(exe).parent / "python")  # the interpreter of that build's venv
        argv = [python, str(Path(__file__).with_name("first_frame_trace.py")), *argv[1:]]
    started = time.monotonic()
    child = pexpect.spawn(argv[0], argv[1:], cwd=str(ws), env=env, dimensions=(ROWS, COLUMNS),
                          encoding="utf-8")
    screen = Screen(COLUMNS, ROWS)
    first = cpu = None
    while True:
        text = screen.text()
        if first is None and LAST_ANSWER in text and _status_bar(screen.lines(), session_id):
            first = time.monotonic() - started
            cpu = _cpu_seconds(child.pid)
        if first is not None and "context" in text:
            break
        try:
            screen.feed(child.read_nonblocking(65536, timeout=0.005))
        except pexpect.TIMEOUT:
            pass
        except pexpect.EOF:
            raise SystemExit("minicode exited before its first screen:\n" + screen.text())
        if time.monotonic() - started > 60:
            raise SystemExit("no full screen within 60 s:\n" + screen.text())
    app = time.monotonic() - started
    peak = _peak_rss_mib(child.pid)  # with the application and the session loaded
    child.send("\x04")  # Ctrl+D on the empty draft: leave
    child.expect(pexpect.EOF, timeout=30)
    child.close()
    assert first is not None and cpu is not None
    return first, peak, cpu, app


def _status_bar(lines: list[str], session_id: str) -> bool:
    """The status bar (second-to-last row): the state, then the model and the session id."""
    row = lines[ROWS - 2]
    return row.startswith(" idle") and f" m · {session_id[:8]}" in row


def _cpu_seconds(pid: int) -> float:
    """User + system CPU of ``pid`` so far: what the first screen cost, whatever the load
    (on a quiet machine the wall time is about this; on a loaded one it is several times it)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _peak_rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def in_process(ws: Path, session_id: str, runs: int) -> tuple[float, float]:
    """(CPU ms to open the session file, CPU ms to lay out the first screen of its history):
    what the file's size costs inside the process, apart from start-up and imports."""
    from minicode.cli.frontends.tui.markdown import MarkdownRenderer
    from minicode.cli.frontends.tui.view import Transcript
    from minicode.session.store import SessionStore

    MarkdownRenderer()("*the Markdown stack imported*", COLUMNS)  # an import, not the file's cost
    opened, screen = [], []
    for _ in range(runs):
        t0 = time.process_time()
        store, loaded = SessionStore.open(ws, session_id)
        t1 = time.process_time()
        transcript = Transcript(MarkdownRenderer(), str(ws))
        transcript.replay(loaded.messages, loaded.outcomes)
        shown = -1
        while (total := transcript.total_lines(COLUMNS)) != shown:  # as a frame does: until the bottom is real
            shown = total
            transcript.visible(COLUMNS, max(0, total - ROWS), ROWS)
        t2 = time.process_time()
        store.close()
        opened.append((t1 - t0) * 1000)
        screen.append((t2 - t1) * 1000)
    return statistics.median(opened), statistics.median(screen)


def phases(ws: Path, session_id: str, runs: int, tmp: Path, exes: dict[str, str]) -> None:
    """Median CPU time at each mark of ``first_frame_trace.py`` and the step from the one
    before, per build (runs interleaved): measured inside the process, so neither the load
    nor how late this process looks at the screen can add to it."""
    marks: dict[str, dict[str, list[float]]] = {label: {} for label in exes}
    for run in range(runs + 1):
        for label, exe in exes.items():
            trace = tmp / f"trace-{run}-{len(label)}.jsonl"
            tui_run(ws, session_id, exe, trace=trace)
            if run == 0:
                continue  # warm-up
            for line in trace.read_text().splitlines():
                record = json.loads(line)
                marks[label].setdefault(record["mark"], []).append(record["cpu"] * 1000)
    for label, by_mark in marks.items():
        print(f"full screen{label}, CPU of the process at each step (big session, median of {runs}):")
        before = 0.0
        for name, values in by_mark.items():
            at = statistics.median(values)
            print(f"  {at:6.0f} ms  (+{at - before:4.0f})  {name}")
            before = at


def median_of(runs: int, measure) -> tuple[float, float]:  # type: ignore[no-untyped-def]
    measure()  # warm the OS caches and .pyc files
    results = [measure() for _ in range(runs)]
    return statistics.median(r[0] for r in results), max(r[1] for r in results)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mb", type=float, default=60)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--pipe-only", action="store_true")
    parser.add_argument("--tui-only", action="store_true")
    parser.add_argument("--phases", action="store_true", help="where the first full screen's CPU time goes")
    parser.add_argument("--compare", metavar="EXE", help="another minicode executable, measured alongside")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp, FakeOpenAI() as server:
        root = Path(tmp).resolve()
        big_ws, big_id, big_size = workspace_with(root, "big", server.base_url, args.mb)
        small_ws, small_id, small_size = workspace_with(root, "small", server.base_url, None)
        mb = big_size / 1024 / 1024
        print(f"session files: big {mb:.1f} MB ({big_id[:8]}), tiny {small_size / 1024:.1f} KB")
        if not args.tui_only:
            small = median_of(args.runs, lambda: pipe_run(server, small_ws, small_id))
            big = median_of(args.runs, lambda: pipe_run(server, big_ws, big_id))
            print(f"pipe mode, spawn to first request: tiny {small[0] * 1000:5.0f} ms · big {big[0] * 1000:5.0f} ms "
                  f"(target ≤ 500 ms) · ratio {big[0] / small[0]:.2f}")
            print(f"pipe mode, peak RSS: tiny {small[1]:5.1f} MiB · big {big[1]:5.1f} MiB = "
                  f"{big[1] / mb:.2f}× the file (target ≤ 2×)")
        if not args.pipe_only:
            # fresh files: the pipe runs above appended to theirs (the last answer must be on screen)
            big_ws, big_id, _ = workspace_with(root, "big-tui", server.base_url, args.mb)
            small_ws, small_id, _ = workspace_with(root, "small-tui", server.base_url, None)
            exes = {"": EXE} | ({" (--compare)": args.compare} if args.compare else {})
            results = {label: ([], []) for label in exes}  # type: ignore[var-annotated]
            for label, exe in exes.items():  # warm the OS caches and .pyc files
                tui_run(small_ws, small_id, exe), tui_run(big_ws, big_id, exe)
            for _ in range(args.runs):  # interleaved: both builds see the same load
                for label, exe in exes.items():
                    results[label][0].append(tui_run(small_ws, small_id, exe))
                    results[label][1].append(tui_run(big_ws, big_id, exe))
            for label, (smalls, bigs) in results.items():
                small = statistics.median(r[0] for r in smalls), max(r[1] for r in smalls)
                big = statistics.median(r[0] for r in bigs), max(r[1] for r in bigs)
                print(f"full screen{label}, spawn to first full screen: tiny {small[0] * 1000:5.0f} ms · "
                      f"big {big[0] * 1000:5.0f} ms (target ≤ 300 ms) · ratio {big[0] / small[0]:.2f}")
                cpu_small, cpu_big = (statistics.median(r[2] for r in rs) * 1000 for rs in (smalls, bigs))
                app_small, app_big = (statistics.median(r[3] for r in rs) * 1000 for rs in (smalls, bigs))
                print(f"full screen{label}, spawn to the application's own frame: tiny {app_small:5.0f} ms · "
                      f"big {app_big:5.0f} ms")
                print(f"full screen{label}, CPU when the full screen was seen: tiny {cpu_small:5.0f} ms · "
                      f"big {cpu_big:5.0f} ms (includes work after the first frame: see --phases)")
                print(f"full screen{label}, peak RSS: tiny {small[1]:5.1f} MiB · big {big[1]:5.1f} MiB = "
                      f"{big[1] / mb:.2f}× the file (target ≤ 2×)")
            if args.phases:
                phases(big_ws, big_id, args.runs, root, exes)
        # last: parsing in this process grows it, and a child's peak RSS counts its parent's
        small_in = in_process(small_ws, small_id, args.runs)
        big_in = in_process(big_ws, big_id, args.runs)
        print(f"in process, CPU: open the file tiny {small_in[0]:5.1f} ms · big {big_in[0]:5.1f} ms; "
              f"first screen of its history tiny {small_in[1]:5.1f} ms · big {big_in[1]:5.1f} ms")
    print(f"(peak RSS of this benchmark itself: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB)")


if __name__ == "__main__":
    main()
