"""Tool benchmarks (not collected by pytest). Run: .venv/bin/python bench/tools.py

Prints:
  * bash capture of 1 GB output: wall seconds and peak RSS of this process (target < 60 MB);
    measured first, so the peak is not inflated by the other benchmarks
  * read of the first page of a 1 GB sparse file: wall ms (target < 50 ms)
  * grep over a generated 10,000-file tree: wall ms
"""

from __future__ import annotations

import asyncio
import os
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

from minicode.tools.base import ToolContext
from minicode.tools.bash import BashTool
from minicode.tools.read import ReadTool
from minicode.tools.search import GrepTool


def _peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


async def bench_bash(ctx: ToolContext) -> None:
    rss_before = _peak_rss_mb()
    start = time.perf_counter()
    result = await BashTool().run({"command": "yes | head -c 1000000000", "timeout": 600}, ctx)
    wall = time.perf_counter() - start
    assert result.exit_code == 0, result.text[-200:]
    print(f"bash 1 GB capture:     {wall:8.2f} s   peak RSS {_peak_rss_mb():.1f} MB "
          f"(before: {rss_before:.1f} MB; kept {len(result.text.encode())} bytes)")


async def bench_read(ctx: ToolContext, ws: Path) -> None:
    big = ws / "big.txt"
    with open(big, "wb") as f:
        f.write("".join(f"row {i} of a sparse file\n" for i in range(5000)).encode())
        f.truncate(1024**3)
    tool = ReadTool()
    times = []
    for _ in range(20):
        start = time.perf_counter()
        result = await tool.run({"path": "big.txt"}, ctx)
        times.append((time.perf_counter() - start) * 1000)
    assert "offset=2001" in result.text
    print(f"read 1 GB first page:  {statistics.median(times):8.2f} ms median (min {min(times):.2f}, max {max(times):.2f})")


def _make_tree(root: Path, files: int) -> None:
    body = "".join(f"def function_{i}(x):\n    return x + {i}\n" for i in range(25))
    for i in range(files):
        d = root / f"pkg{i // 100:03d}"
        d.mkdir(exist_ok=True)
        extra = "# TODO: unique-marker\n" if i % 1000 == 0 else ""
        (d / f"mod{i:05d}.py").write_text(body + extra)


async def bench_grep(ctx: ToolContext, ws: Path) -> None:
    tree = ws / "tree"
    tree.mkdir()
    _make_tree(tree, 10_000)
    tool = GrepTool()
    times = []
    for _ in range(5):
        start = time.perf_counter()
        result = await tool.run({"pattern": r"unique-marker", "path": "tree"}, ctx)
        times.append((time.perf_counter() - start) * 1000)
    assert len(result.text.splitlines()) == 10, result.text
    print(f"grep 10,000 files:     {statistics.median(times):8.1f} ms median (min {min(times):.1f}; 10 matches, 500k lines)")


async def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        ws = Path(tmp)
        ctx = ToolContext(workspace=ws, env={"PATH": os.defpath + ":/usr/bin:/bin"})
        await bench_bash(ctx)
        await bench_read(ctx, ws)
        await bench_grep(ctx, ws)
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} cpus")


if __name__ == "__main__":
    asyncio.run(main())
