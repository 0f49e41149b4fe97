"""Live output: throttled, coalesced, constant memory, redacted, a broken hook ignored."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from minicode.tools.base import ToolContext
from minicode.tools.bash import BashTool
from minicode.tools.live import LiveOutput

SECRET = "sk-live-secret-0123456789"
bash = BashTool()


async def test_chunks_within_the_interval_are_coalesced_then_flushed_by_the_timer() -> None:
    seen: list[str] = []
    live = LiveOutput(seen.append, interval=0.05)
    live.feed(b"a\n")  # first chunk: at once
    live.feed(b"b\n")
    live.feed(b"c\n")
    assert seen == ["a\n"]
    await asyncio.sleep(0.15)  # the timer flushes what a quiet command left pending
    assert seen == ["a\n", "b\nc\n"]
    live.close()
    assert seen == ["a\n", "b\nc\n"]  # nothing left: no empty call


async def test_only_the_tail_of_pending_text_is_kept() -> None:
    seen: list[str] = []
    live = LiveOutput(seen.append, interval=10.0, tail_chars=100)
    live.feed(b"x")
    for i in range(1000):
        live.feed(f"line {i}\n".encode())
    assert len(live._pending) <= 100  # constant memory whatever the volume
    live.close()
    assert seen[0] == "x"
    assert seen[1].endswith("line 999\n") and len(seen[1]) <= 100 and "line 0\n" not in seen[1]


async def test_utf8_split_across_chunks_is_decoded_whole() -> None:
    seen: list[str] = []
    live = LiveOutput(seen.append, interval=0.0)
    data = "é€".encode()
    live.feed(data[:1])
    live.feed(data[1:4])
    live.feed(data[4:] + b"\xff")
    live.close()
    assert "".join(seen) == "é€\ufffd"


async def test_a_secret_is_redacted_even_when_split_across_chunks() -> None:
    seen: list[str] = []
    live = LiveOutput(seen.append, secrets=(SECRET,), interval=0.0)
    live.feed(b"key=" + SECRET[:10].encode())
    live.feed(SECRET[10:].encode() + b" and " + SECRET.encode() + b"\n")
    live.close()
    joined = "".join(seen)
    assert joined == "key=[redacted] and [redacted]\n"
    assert all(SECRET[:10] not in part for part in seen)


async def test_a_secret_cut_by_the_tail_window_leaves_no_part_behind() -> None:
    # Kept raw: the last 40 + len(SECRET) chars; the window's front then cuts through it.
    seen: list[str] = []
    live = LiveOutput(seen.append, secrets=(SECRET,), interval=10.0, tail_chars=40)
    live.feed(b"go\n")
    live.feed(b"y" * 30 + SECRET.encode() + b"z" * 30)
    live.close()
    joined = "".join(seen)
    assert SECRET[-8:] not in joined and SECRET[:8] not in joined and seen[-1].endswith("z" * 20)
    # the raw cut itself goes through a secret: its kept tail is not shown
    seen.clear()
    live = LiveOutput(seen.append, secrets=(SECRET,), interval=10.0, tail_chars=40)
    live.feed(b"go\n")
    live.feed(SECRET.encode() + b"z" * 50)
    live.close()
    assert seen == ["go\n", "z" * 40]


async def test_a_raising_hook_is_dropped_and_later_output_ignored() -> None:
    calls: list[str] = []

    def broken(text: str) -> None:
        calls.append(text)
        raise RuntimeError("view gone")

    live = LiveOutput(broken, interval=0.0)
    live.feed(b"one\n")
    live.feed(b"two\n")
    live.close()
    assert calls == ["one\n"]


async def test_no_hook_is_a_no_op() -> None:
    live = LiveOutput(None)
    live.feed(b"data")
    live.close()
    assert live._pending == ""


async def test_bash_streams_lines_in_order_and_the_result_stays_whole(ctx: ToolContext) -> None:
    seen: list[str] = []
    ctx.on_output = seen.append
    command = "for i in 1 2 3 4 5 6 7 8; do echo line$i; sleep 0.15; done"
    result = await bash.run({"command": command}, ctx)
    assert len(seen) >= 4  # several calls while it ran, not one at the end
    assert "".join(seen) == "".join(f"line{i}\n" for i in range(1, 9))
    assert result.text.startswith("line1\n") and "line8" in result.text and "[exit code 0]" in result.text


async def test_bash_live_output_is_redacted(ws: Path) -> None:
    seen: list[str] = []
    env = {"PATH": os.defpath, "SHOWN": SECRET[:12], "REST": SECRET[12:]}
    ctx = ToolContext(workspace=ws, env=env, secrets=(SECRET,), on_output=seen.append)
    await bash.run({"command": 'printf %s "$SHOWN"; sleep 0.2; echo "$REST"'}, ctx)
    joined = "".join(seen)
    assert SECRET not in joined and SECRET[:12] not in joined and joined == "[redacted]\n"


async def test_a_cancelled_command_emitted_its_output_so_far(ctx: ToolContext) -> None:
    seen: list[str] = []
    ctx.on_output = seen.append
    task = asyncio.create_task(bash.run({"command": "echo started; printf partial; sleep 30"}, ctx))
    for _ in range(100):
        if "".join(seen).startswith("started\n"):
            break
        await asyncio.sleep(0.05)
    task.cancel()
    try:
        await task
    except asyncio.CancelledError:
        pass
    assert "".join(seen) == "started\npartial"


async def test_a_raising_hook_does_not_break_bash(ctx: ToolContext) -> None:
    def broken(text: str) -> None:
        raise ValueError("boom")

    ctx.on_output = broken
    result = await bash.run({"command": "echo a; sleep 0.2; echo b"}, ctx)
    assert not result.is_error and result.text == "a\nb\n[exit code 0]"
