"""Full-screen memory in-process: what each turn adds to Python's heap (tracemalloc), and where.

The full-screen analogue of ``pipe_probe.py``: a real ``Session`` (session file, context,
compaction, the loop) under the real ``Controller`` and Application (120x40, output thrown
away), N turns submitted as a user would (``Controller.dispatch``), each answered at once
with the ~2,000-token Markdown answer of render.py by the in-process provider of
``pipe_probe.py`` (100 prompt tokens reported: only minicode's own estimate compacts). A frame
is drawn after every turn. Snapshots at two points (default: turns 100 and 200) are diffed:
the growth per turn and the lines that grew; the transcript's entries held in memory are
counted at each report.

    .venv/bin/python bench/tui_probe.py [--turns 200] [--at 100] [--top 15] [--where]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import io
import sys
import tempfile
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pipe_probe import Answers  # noqa: E402
from prompt_toolkit.data_structures import Size  # noqa: E402
from prompt_toolkit.input import create_pipe_input  # noqa: E402
from prompt_toolkit.output.vt100 import Vt100_Output  # noqa: E402
from render import answer_markdown  # noqa: E402

from minicode.cli.frontends.tui.app import create_application, run_controller  # noqa: E402
from minicode.cli.frontends.tui.controller import Controller  # noqa: E402
from minicode.cli.frontends.tui.markdown import MarkdownRenderer  # noqa: E402
from minicode.config import Config, ModelConfig  # noqa: E402
from minicode.session.session import Session  # noqa: E402

COLUMNS, ROWS = 120, 40


class _Discard(io.StringIO):  # the terminal: what is written is gone, as on a screen
    def write(self, text: str) -> int:
        return len(text)


def held(c: Controller) -> str:
    """How many transcript entries hold their content in memory (see ``cli/frontends/tui/stored.py``)."""
    counter = getattr(c.transcript, "held", None)
    return f"{counter()} entries held of {len(c.transcript.items)}" if counter else f"{len(c.transcript.items)} entries"


async def probe(turns: int, at: int, top: int, where: bool) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        ws = Path(tmp) / "ws"
        ws.mkdir()
        model = ModelConfig(base_url="http://127.0.0.1:9/v1", name="probe-model", api_key="k")
        session = await Session.open(config=Config(model=model, path=Path(tmp) / "none.toml"), workspace=ws,
                                     env={"HOME": tmp, "PATH": "/usr/bin:/bin"}, provider=Answers(answer_markdown()))
        out = Vt100_Output(_Discard(), lambda: Size(rows=ROWS, columns=COLUMNS), term="xterm-256color")
        with create_pipe_input() as pipe:
            c = Controller(session, MarkdownRenderer())
            c.start()
            app = create_application(c, input=pipe, output=out)
            runner = asyncio.ensure_future(run_controller(c, app))
            while app.render_counter == 0:
                await asyncio.sleep(0.001)
            tracemalloc.start(8)
            first = None
            sizes: list[tuple[int, int]] = []
            for n in range(1, turns + 1):
                c.dispatch(f"turn {n}")
                while c.task is not None:
                    await asyncio.sleep(0.001)
                app._redraw()
                if n % max(1, turns // 10) == 0 or n in (at, turns):
                    gc.collect()
                    sizes.append((n, tracemalloc.get_traced_memory()[0]))
                    log = session.messages
                    parsed = log.parsed_count() if hasattr(log, "parsed_count") else len(log)
                    print(f"  turn {n:5}: traced {sizes[-1][1] / 1e6:6.2f} MB · {held(c)} · "
                          f"{parsed} of {len(log)} messages in memory", flush=True)
                if n == at:
                    first = tracemalloc.take_snapshot()
            second = tracemalloc.take_snapshot()
            tracemalloc.stop()
            c.exit(0)
            await asyncio.wait_for(runner, 30)
        await session.aclose()
    a = next(s for n, s in sizes if n == at)
    print(f"growth turns {at}..{turns}: {(sizes[-1][1] - a) / 1024 / max(1, turns - at):+.2f} KB a turn")
    if first is not None:
        print(f"largest growth by line (turns {at}..{turns}):")
        for stat in second.compare_to(first, "traceback" if where else "lineno")[:top]:
            print(f"  {stat.size_diff / 1024:+9.1f} KB {stat.count_diff:+7} blocks  {stat.traceback[0]}")
            if where:
                for frame in list(stat.traceback)[1:]:
                    print(f"{'':35}{frame}")


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--turns", type=int, default=200)
    p.add_argument("--at", type=int, default=100, help="the first snapshot (the second is at --turns)")
    p.add_argument("--top", type=int, default=15)
    p.add_argument("--where", action="store_true", help="group by whole traceback and print it")
    args = p.parse_args()
    asyncio.run(probe(args.turns, min(args.at, args.turns), args.top, args.where))
    return 0


if __name__ == "__main__":
    sys.exit(main())
