"""Frame time of the full-screen UI right after a resize, with a long transcript.

The real Application (layout, key bindings, renderer) runs in-process with a VT100 output
into memory. Its transcript holds 1k / 40k / 200k tokens of Markdown answers (answers of at
most 20,000 tokens, streamed in as a live run receives them). Then the window is dragged
across 8 widths; each step is prompt_toolkit's resize (erase, redraw) timed from the resize
to the frame being written — what a user waits for before the screen shows text again.

Prints, per size: the first frame at 120 columns (everything is new), then for the frames
after a resize the CPU time (what minicode itself spends; robust on a busy machine) and the
wall time (what the user waits, including other load), median and slowest, and the ratio of
the 200k CPU median to the 1k one (target: flat, every frame ≤ 100 ms).

Run: .venv/bin/python bench/resize.py            (not collected by pytest; no network)
"""

from __future__ import annotations

import asyncio
import io
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from prompt_toolkit.data_structures import Size  # noqa: E402
from prompt_toolkit.input import create_pipe_input  # noqa: E402
from prompt_toolkit.output.vt100 import Vt100_Output  # noqa: E402

from minicode.agent.events import AssistantDone, TextChunk  # noqa: E402
from minicode.cli.frontends.tui.app import create_application, run_controller  # noqa: E402
from minicode.cli.frontends.tui.controller import Controller  # noqa: E402
from minicode.cli.frontends.tui.markdown import MarkdownRenderer  # noqa: E402
from tests.cli.frontends.tui.fake_session import FakeSession  # noqa: E402

ROWS = 35
START_WIDTH = 120
DRAG = (118, 113, 107, 100, 92, 85, 78, 70)  # a drag across 8 widths
SIZES = (1_000, 40_000, 200_000)
ANSWER_TOKENS = 20_000
CHARS_PER_TOKEN = 4
CHUNK = 64  # characters per streamed text event


def markdown(tokens: int, seed: int) -> str:
    """Markdown of about ``tokens`` tokens: headings, paragraphs, lists, code, a table."""
    parts: list[str] = []
    i = 0
    while sum(len(p) + 2 for p in parts) < tokens * CHARS_PER_TOKEN:
        parts.append(f"## Part {seed}.{i}\n\nThe *module* `part_{i}.py` owns **one concept**: it keeps functions "
                     "short, documents why rather than what, and is tested through its public seam. " * 2)
        parts.append(f"- read `src/{i}.py` before editing\n- verify with `pytest -q`\n- report truthfully")
        parts.append(f"```python\ndef step_{i}(x: int) -> int:\n    return x * {i} + 1\n```")
        if i % 5 == 0:
            parts.append("| file | lines |\n|---|---|\n" + f"| a{i}.py | {i} |\n| b{i}.py | {2 * i} |")
        i += 1
    return "\n\n".join(parts)[: tokens * CHARS_PER_TOKEN]


def fill(c: Controller, tokens: int) -> None:
    """This run's transcript: answers of at most 20k tokens, streamed in small pieces."""
    done = 0
    n = 0
    while done < tokens:
        size = min(ANSWER_TOKENS, tokens - done)
        c.echo(f"question {n}")
        text = markdown(size, n)
        for i in range(0, len(text), CHUNK):
            c.transcript.apply(TextChunk(text[i : i + CHUNK]))
        c.transcript.apply(AssistantDone(text, "", 0))
        done += size
        n += 1


async def measure(tokens: int) -> tuple[float, list[float], list[float]]:
    """(first frame ms, [wall ms], [CPU ms] of the frame after each resize of the drag)."""
    size = [Size(rows=ROWS, columns=START_WIDTH)]
    out = Vt100_Output(io.StringIO(), lambda: size[0], term="xterm-256color")
    with create_pipe_input() as pipe:
        c = Controller(FakeSession(), MarkdownRenderer())
        c.start()
        fill(c, tokens)
        app = create_application(c, input=pipe, output=out)
        started = time.perf_counter()
        runner = asyncio.ensure_future(run_controller(c, app))
        while app.render_counter == 0:
            await asyncio.sleep(0.001)
        first = time.perf_counter() - started
        walls, cpus = [], []
        for width in DRAG:
            size[0] = Size(rows=ROWS, columns=width)
            wall, cpu = time.perf_counter(), time.process_time()
            app._on_resize()  # what SIGWINCH runs: erase, then draw the new frame at once
            walls.append(1000 * (time.perf_counter() - wall))
            cpus.append(1000 * (time.process_time() - cpu))
            await asyncio.sleep(0)
        c.exit(0)
        await asyncio.wait_for(runner, 10)
    return first * 1000, walls, cpus


def main() -> None:
    asyncio.run(measure(SIZES[0]))  # warm-up: rich's first import and first render
    medians: dict[int, float] = {}
    for tokens in SIZES:
        first, walls, cpus = asyncio.run(measure(tokens))
        medians[tokens] = statistics.median(cpus)
        print(f"{tokens:>8,} tokens: first frame {first:6.1f} ms · frame after a resize: CPU median "
              f"{medians[tokens]:5.1f} ms, max {max(cpus):5.1f} ms · wall median {statistics.median(walls):5.1f} ms, "
              f"max {max(walls):5.1f} ms  ({len(cpus)} widths)")
    print(f"CPU ratio 200k/1k (medians): {medians[SIZES[-1]] / medians[SIZES[0]]:.2f}"
          "  (targets: every frame after a resize <= 100 ms, ratio flat; wall includes other load)")


if __name__ == "__main__":
    main()
