"""Render cost of the full-screen UI in a real pseudo-terminal.

Measures, for a session resumed with 10 and with 1,000 earlier messages:
  * time from spawning ``minicode`` to its first frame on screen (target < 400 ms);
  * CPU seconds the minicode process spends while a ~2,000-token Markdown answer streams
    at 200 tokens/s from the fake server, as % of one core (target < 25 %), and the
    1,000/10 ratio (target < 1.2).

In-process first: ms of CPU per view frame (both total_lines calls + the visible slice) while
an answer streams under 10, 1,000 and 10,000 transcript entries, and the ratios (target: flat).

Run: .venv/bin/python bench/render.py          (not collected by pytest; needs no network)
     .venv/bin/python bench/render.py --view   (the in-process figures only)
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from typing import Any
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import pexpect  # noqa: E402

from minicode.provider.types import Message  # noqa: E402
from minicode.session.store import SessionStore  # noqa: E402
from tests.pty.screen import Screen  # noqa: E402
from tests.support.fake_openai import FakeOpenAI, Reply  # noqa: E402

EXE = str(Path(sys.executable).parent / "minicode")
TOKENS = 2000
TOKENS_PER_SECOND = 200
CHARS_PER_TOKEN = 4
COLUMNS, ROWS = 100, 30
RUNS = 3


def answer_markdown() -> str:
    parts: list[str] = []
    i = 0
    while sum(len(p) for p in parts) < TOKENS * CHARS_PER_TOKEN:
        parts.append(f"## Step {i}\n\nThe *module* `part_{i}.py` owns **one concept**; it keeps"
                     f" functions short and documents why, not what.\n")
        parts.append("- read before editing\n- verify with tests\n- report truthfully\n")
        parts.append(f"```python\ndef step_{i}(x: int) -> int:\n    return x * {i} + 1\n```\n")
        i += 1
    return "\n".join(parts)[: TOKENS * CHARS_PER_TOKEN]


def make_workspace(root: Path, base_url: str, messages: int) -> tuple[Path, str]:
    ws = root / f"ws{messages}"
    (ws / "config").mkdir(parents=True)
    (ws / "config" / "config.toml").write_text(
        f'[model]\nbase_url = "{base_url}"\nname = "fake-model"\napi_key = ""\n'
    )
    store, session_id = SessionStore.create(ws)
    try:
        for n in range(messages):
            role = "user" if n % 2 == 0 else "assistant"
            store.append_message(Message(role=role, content=f"earlier message {n}: " + "lorem ipsum " * 8))
    finally:
        store.close()
    return ws, session_id


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def pump(child: pexpect.spawn, screen: Screen, seconds: float) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        try:
            screen.feed(child.read_nonblocking(65536, timeout=0.01))
        except pexpect.TIMEOUT:
            pass
        except pexpect.EOF:
            return


def run_once(server: FakeOpenAI, ws: Path, session_id: str, home: Path) -> tuple[float, float, float]:
    """(seconds to first frame, CPU seconds while streaming, wall seconds of the stream)."""
    env = {"HOME": str(home), "PATH": os.environ.get("PATH", ""), "TERM": "xterm-256color", "LANG": "C.UTF-8"}
    server.script(Reply.text(answer_markdown(), chunk_size=CHARS_PER_TOKEN, chunk_delay=1 / TOKENS_PER_SECOND))
    started = time.monotonic()
    child = pexpect.spawn(EXE, ["--session", session_id], cwd=str(ws), env=env,
                          dimensions=(ROWS, COLUMNS), encoding="utf-8")
    screen = Screen(COLUMNS, ROWS)
    while "context" not in screen.text():
        pump(child, screen, 0.005)
        if time.monotonic() - started > 30:
            raise SystemExit("no first frame within 30 s:\n" + screen.text())
    first_frame = time.monotonic() - started
    pump(child, screen, 0.5)
    before_requests = len(server.requests)
    child.send("explain the plan\r")
    while len(server.requests) == before_requests:
        pump(child, screen, 0.005)
    cpu0, t0 = cpu_seconds(child.pid), time.monotonic()
    while "■ done" not in screen.text():
        pump(child, screen, 0.05)
        if time.monotonic() - t0 > 120:
            raise SystemExit("the answer did not finish:\n" + screen.text())
    cpu1, t1 = cpu_seconds(child.pid), time.monotonic()
    child.send("\x04")
    pump(child, screen, 0.5)
    child.terminate(force=True)
    return first_frame, cpu1 - cpu0, t1 - t0


def history_frame_cost(messages: int, frames: int = 400) -> float:
    """In-process: ms of CPU per frame while the answer streams under a resumed history of
    ``messages`` earlier messages (replayed into the view, rendered only when on screen)."""
    from minicode.cli.frontends.tui.markdown import MarkdownRenderer
    from minicode.cli.frontends.tui.view import Transcript

    transcript = Transcript(MarkdownRenderer())
    transcript.replay([Message(role="user" if n % 2 == 0 else "assistant",
                               content=f"earlier message {n}: " + "lorem *ipsum* " * 8) for n in range(messages)])
    return _stream_frames(transcript, frames)


def view_frame_cost(entries: int, frames: int = 400) -> float:
    """In-process: ms of CPU per frame (total + visible slice + tail render) with ``entries``
    earlier transcript entries while the same answer streams (the UI shows only this run's
    entries, so this is how a long run's transcript costs)."""
    from minicode.cli.frontends.tui.markdown import MarkdownRenderer
    from minicode.cli.frontends.tui.items import TextItem
    from minicode.cli.frontends.tui.view import Transcript

    transcript = Transcript(MarkdownRenderer())
    for n in range(entries):
        transcript.add(TextItem(f"earlier entry {n}: " + "lorem ipsum " * 8))
    return _stream_frames(transcript, frames)


def main() -> None:
    view = {entries: min(view_frame_cost(entries) for _ in range(3)) for entries in (10, 1000, 10_000)}
    for entries, ms in view.items():
        print(f"view frame with {entries:>6,} transcript entries: {ms:.3f} ms CPU/frame")
    print(f"view frame ratio 1,000/10: {view[1000] / view[10]:.2f} · 10,000/10: {view[10_000] / view[10]:.2f}"
          "  (target: flat, ≈ 1)")
    for entries in (10, 1000):
        print(f"view frame under {entries:>5} resumed messages: {history_frame_cost(entries):.2f} ms CPU/frame")
    if "--view" in sys.argv[1:]:
        return
    results: dict[int, tuple[float, float, float]] = {}
    with FakeOpenAI() as server, tempfile.TemporaryDirectory() as tmp:
        for messages in (10, 1000):
            ws, session_id = make_workspace(Path(tmp), server.base_url, messages)
            run_once(server, ws, session_id, Path(tmp))  # warm the OS caches and .pyc files
            runs = sorted((run_once(server, ws, session_id, Path(tmp)) for _ in range(RUNS)),
                          key=lambda r: r[1] / r[2])
            results[messages] = runs[len(runs) // 2]  # the median by CPU share: 2 noisy cores
    for messages, (first, cpu, wall) in results.items():
        print(f"{messages:>5} earlier messages: first frame {first * 1000:6.0f} ms · "
              f"streaming {wall:5.1f} s wall, {cpu:5.2f} s CPU = {100 * cpu / wall:5.1f} % of one core")
    ratio = results[1000][1] / results[10][1] if results[10][1] else float("inf")
    print(f"CPU ratio 1,000/10: {ratio:.2f}  (targets: < 25 % of a core, ratio < 1.2, first frame < 400 ms)")


def _stream_frames(transcript: Any, frames: int) -> float:
    """Stream the answer into ``transcript`` as ``frames`` redraws; ms of CPU per frame."""
    from minicode.cli.frontends.tui.answer import AnswerItem

    answer = AnswerItem()
    transcript.add(answer)
    transcript.visible(COLUMNS, max(0, transcript.total_lines(COLUMNS) - ROWS), ROWS)  # first frame
    text = answer_markdown()
    step = max(1, len(text) // frames)
    started = time.process_time()
    for i in range(0, len(text), step):
        answer.append(text[i : i + step])
        total = transcript.total_lines(COLUMNS)  # the layout asks twice, as create_content does
        transcript.visible(COLUMNS, max(0, total - ROWS), ROWS)
        transcript.total_lines(COLUMNS)
    return 1000 * (time.process_time() - started) / frames


if __name__ == "__main__":
    main()
