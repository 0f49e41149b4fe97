"""In-process cost of one full-screen frame while an answer streams (issue 16 item 3).

The real Application (layout, key bindings, renderer) at 120x40 with a VT100 output into
memory; a ~2,000-token Markdown answer arrives as text events, 50 ms worth (10 tokens) per
frame, and each frame is drawn at once (``Application._redraw``), after N earlier turns in the
transcript. Prints CPU ms per frame (median over rounds) and, with --profile, where it goes.
With --instructions, the instructions a frame costs under valgrind (callgrind), which the
machine's load does not change: one run streaming and one not, the difference over the frames.

    .venv/bin/python bench/frames.py [--earlier 0,100] [--rounds 3] [--profile]
    .venv/bin/python bench/frames.py --instructions
    .venv/bin/python bench/frames.py --memory 60     # KB a turn adds in-process (tracemalloc)
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import io
import os
import pstats
import re
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from prompt_toolkit.data_structures import Size  # noqa: E402
from prompt_toolkit.input import create_pipe_input  # noqa: E402
from prompt_toolkit.output.vt100 import Vt100_Output  # noqa: E402

from minicode.agent.events import AssistantDone, TaskStatus, TextChunk, TurnFinished  # noqa: E402
from minicode.agent.stats import TaskStats  # noqa: E402
from minicode.cli.frontends.tui.app import create_application, run_controller  # noqa: E402
from minicode.cli.frontends.tui.controller import Controller  # noqa: E402
from minicode.cli.frontends.tui.markdown import MarkdownRenderer  # noqa: E402
from render import answer_markdown  # noqa: E402
from tests.cli.frontends.tui.fake_session import FakeSession  # noqa: E402

COLUMNS, ROWS = 120, 40
CHARS_PER_FRAME = 40  # 10 tokens of 4 characters: 50 ms at 200 tokens/s


def finished(text: str) -> list[object]:
    return [TextChunk(text), AssistantDone(text, "", 0),
            TurnFinished(TaskStatus.DONE, text, TaskStats())]


async def stream(earlier: int, profile: cProfile.Profile | None, frames_wanted: bool = True) -> tuple[float, int, int]:
    """(CPU ms per frame, frames, bytes written) of one streamed answer after ``earlier`` turns."""
    sink = io.StringIO()
    out = Vt100_Output(sink, lambda: Size(rows=ROWS, columns=COLUMNS), term="xterm-256color")
    text = answer_markdown()
    with create_pipe_input() as pipe:
        c = Controller(FakeSession(), MarkdownRenderer())
        c.start()
        for n in range(earlier):
            c.echo(f"question {n}")
            for event in finished(text):
                c.transcript.apply(event)  # type: ignore[arg-type]
        app = create_application(c, input=pipe, output=out)
        runner = asyncio.ensure_future(run_controller(c, app))
        while app.render_counter == 0:
            await asyncio.sleep(0.001)
        c.echo("explain the plan")
        app._redraw()
        sink.seek(0)
        sink.truncate()
        frames = 0
        if profile is not None:
            profile.enable()
        cpu = time.process_time()
        for i in range(0, len(text) if frames_wanted else 0, CHARS_PER_FRAME):
            c.transcript.apply(TextChunk(text[i: i + CHARS_PER_FRAME]))
            app._redraw()
            frames += 1
        cpu = time.process_time() - cpu
        if profile is not None:
            profile.disable()
        written = len(sink.getvalue())
        c.exit(0)
        await asyncio.wait_for(runner, 10)
    return 1000 * cpu / frames, frames, written


async def memory(turns: int) -> float:
    """KB of Python memory (tracemalloc) a turn of a 2,000-token answer adds to the full
    screen in-process: streamed in, a frame at the bottom, settled as after a real turn."""
    import gc
    import tracemalloc

    class Discard(io.StringIO):  # the terminal: what is written is gone, as on a screen
        def write(self, text: str) -> int:
            return len(text)

    out = Vt100_Output(Discard(), lambda: Size(rows=ROWS, columns=COLUMNS), term="xterm-256color")
    with create_pipe_input() as pipe:
        c = Controller(FakeSession(), MarkdownRenderer())
        c.start()
        app = create_application(c, input=pipe, output=out)
        runner = asyncio.ensure_future(run_controller(c, app))
        while app.render_counter == 0:
            await asyncio.sleep(0.001)
        tracemalloc.start()
        base = 0
        for n in range(1, turns + 1):
            text = answer_markdown() + f"\n\nturn {n}"
            c.echo(f"turn {n}")
            for i in range(0, len(text), 400):
                c.transcript.apply(TextChunk(text[i: i + 400]))
                app._redraw()
            for event in finished(text)[1:]:
                c.transcript.apply(event)  # type: ignore[arg-type]
            c.transcript.settle(COLUMNS, lambda: True)
            if n == 5:
                gc.collect()
                base = tracemalloc.get_traced_memory()[0]
        gc.collect()
        grown = tracemalloc.get_traced_memory()[0] - base
        tracemalloc.stop()
        c.exit(0)
        await asyncio.wait_for(runner, 10)
    return grown / 1024 / (turns - 5)


def instructions() -> None:
    """Instructions per frame: callgrind runs of one stream with and without its frames."""
    valgrind = shutil.which("valgrind")
    if valgrind is None:
        print("valgrind not found: no instruction counts")
        return
    counts = []
    for frames in ("yes", "no"):
        run = subprocess.run([valgrind, "--tool=callgrind", "--callgrind-out-file=/dev/null", sys.executable,
                              __file__, "--single", frames], capture_output=True, text=True,
                             env=dict(os.environ, PYTHONHASHSEED="0"))
        found = re.search(r"Collected : (\d+)", run.stderr)
        if found is None:
            raise SystemExit(f"callgrind gave no count:\n{run.stderr[-2000:]}")
        counts.append(int(found.group(1)))
    frames = -(-len(answer_markdown()) // CHARS_PER_FRAME)
    print(f"instructions a frame (callgrind, {frames} frames, 0 earlier turns): {(counts[0] - counts[1]) / frames / 1e6:.2f} M")


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--earlier", default="0,100", help="earlier turns in the transcript, comma-separated")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--profile", action="store_true", help="print where a frame's time goes (cProfile)")
    p.add_argument("--instructions", action="store_true", help="instructions a frame, under callgrind")
    p.add_argument("--memory", type=int, metavar="TURNS", help="KB a turn adds in-process (tracemalloc)")
    p.add_argument("--single", choices=("yes", "no"), help=argparse.SUPPRESS)  # one run, for --instructions
    args = p.parse_args()
    if args.memory:
        kb = asyncio.run(memory(max(args.memory, 10)))
        print(f"in-process memory: {kb:.1f} KB a turn of a 2,000-token answer (turns 5..{max(args.memory, 10)};"
              " the answer's text is ~8 KB of it)")
        return 0
    if args.single:
        asyncio.run(stream(0, None, frames_wanted=args.single == "yes"))
        return 0
    if args.instructions:
        instructions()
        return 0
    sizes = [int(x) for x in args.earlier.split(",")]
    asyncio.run(stream(0, None))  # warm-up: imports, rich's first render, lexers
    got: dict[int, list[float]] = {n: [] for n in sizes}
    info: dict[int, tuple[int, int]] = {}
    for _ in range(args.rounds):  # interleaved rounds: the machine's load hits all sizes alike
        for n in sizes:
            ms, frames, written = asyncio.run(stream(n, None))
            got[n].append(ms)
            info[n] = (frames, written)
    for n in sizes:
        frames, written = info[n]
        print(f"{n:>5} earlier turns: {statistics.median(got[n]):6.2f} ms CPU a frame (median of {args.rounds};"
              f" min {min(got[n]):.2f}) · {frames} frames · {written / frames:,.0f} bytes a frame")
    if len(sizes) > 1:
        print(f"ratio {sizes[-1]}/{sizes[0]}: {statistics.median(got[sizes[-1]]) / statistics.median(got[sizes[0]]):.2f}")
    if args.profile:
        prof = cProfile.Profile()
        asyncio.run(stream(sizes[0], prof))
        pstats.Stats(prof).sort_stats("cumulative").print_stats(45)
    return 0


if __name__ == "__main__":
    sys.exit(main())
