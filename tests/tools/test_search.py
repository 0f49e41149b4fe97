"""ls, glob, grep: sorting, caps, ignore rules, errors."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Callable

import pytest

from minicode.errors import ToolError
from minicode.tools.base import ToolContext
from minicode.tools.grep import GrepTool
from minicode.tools.search import GlobTool, LsTool
from minicode.tools.truncate import GLOB_MAX_RESULTS, GREP_MAX_MATCHES, LS_MAX_ENTRIES

ls, glob, grep = LsTool(), GlobTool(), GrepTool()


def _tree(ws: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = ws / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


@pytest.fixture
def project(ws: Path) -> Path:
    _tree(
        ws,
        {
            ".gitignore": "*.log\nbuild/\n/secret.txt\n",
            "README.md": "hello\n",
            "app.log": "needle in log\n",
            "secret.txt": "needle secret\n",
            "src/main.py": "import os\nNEEDLE = 1\nprint(needle)\n",
            "src/util/helpers.py": "def needle():\n    pass\n",
            "src/util/notes.txt": "a needle here\n",
            "build/out.py": "needle\n",
            ".git/config": "needle\n",
            "docs/secret.txt": "needle (not anchored, so kept)\n",
        },
    )
    return ws


async def test_ls_sorted_with_dir_markers_and_ignored_hidden(project: Path, ctx: ToolContext) -> None:
    result = await ls.run({}, ctx)
    lines = result.text.splitlines()
    assert lines[:4] == [".gitignore", "README.md", "docs/", "src/"]
    assert "4 ignored entries hidden" in lines[-1]  # .git, app.log, build, secret.txt
    sub = await ls.run({"path": "src/util"}, ctx)
    assert sub.text.splitlines() == ["helpers.py", "notes.txt"]


async def test_ls_caps_entries(ws: Path, ctx: ToolContext) -> None:
    for i in range(LS_MAX_ENTRIES + 5):
        (ws / f"f{i:05d}").write_text("")
    result = await ls.run({"path": "."}, ctx)
    assert result.text.splitlines()[-1] == "[... 5 more entries not shown]"


async def test_ls_errors(project: Path, ctx: ToolContext) -> None:
    with pytest.raises(ToolError, match="not a directory"):
        await ls.run({"path": "README.md"}, ctx)
    with pytest.raises(ToolError, match="inside the workspace"):
        await ls.run({"path": "/etc"}, ctx)
    (project / "etc").symlink_to("/etc")
    with pytest.raises(ToolError, match="points outside"):
        await ls.run({"path": "etc"}, ctx)


async def test_glob_recursive_sorted_and_ignoring(project: Path, ctx: ToolContext) -> None:
    result = await glob.run({"pattern": "**/*.py"}, ctx)
    assert result.text.splitlines() == ["src/main.py", "src/util/helpers.py"]
    top = await glob.run({"pattern": "*.txt"}, ctx)
    assert top.text == "no files match *.txt"  # secret.txt is ignored; * stays at the top
    under = await glob.run({"pattern": "*.py", "path": "src/util"}, ctx)
    assert under.text == "src/util/helpers.py"
    assert (await glob.run({"pattern": "**/secret.txt"}, ctx)).text == "docs/secret.txt"


async def test_glob_caps(ws: Path, ctx: ToolContext) -> None:
    _tree(ws, {f"d/{i:04d}.txt": "" for i in range(GLOB_MAX_RESULTS + 3)})
    result = await glob.run({"pattern": "d/*.txt"}, ctx)
    lines = result.text.splitlines()
    assert lines[0] == "d/0000.txt" and len(lines) == GLOB_MAX_RESULTS + 1
    assert "3 more files" in lines[-1]


async def test_glob_errors(project: Path, ctx: ToolContext) -> None:
    with pytest.raises(ToolError, match="may not contain '..'"):
        await glob.run({"pattern": "../*"}, ctx)
    with pytest.raises(ToolError, match="inside the workspace"):
        await glob.run({"pattern": "*", "path": "../.."}, ctx)


async def test_grep_finds_matches_and_respects_ignores(project: Path, ctx: ToolContext) -> None:
    result = await grep.run({"pattern": "needle"}, ctx)
    assert result.text.splitlines() == [
        "docs/secret.txt:1:needle (not anchored, so kept)",
        "src/main.py:3:print(needle)",
        "src/util/helpers.py:1:def needle():",
        "src/util/notes.txt:1:a needle here",
    ]


async def test_grep_ignore_case_glob_and_path(project: Path, ctx: ToolContext) -> None:
    result = await grep.run({"pattern": "needle", "ignore_case": True, "glob": "*.py"}, ctx)
    assert result.text.splitlines() == ["src/main.py:2:NEEDLE = 1", "src/main.py:3:print(needle)", "src/util/helpers.py:1:def needle():"]
    only_file = await grep.run({"pattern": "needle", "path": "src/util/notes.txt"}, ctx)
    assert only_file.text == "src/util/notes.txt:1:a needle here"
    pathed = await grep.run({"pattern": "needle", "glob": "src/util/*"}, ctx)
    assert pathed.text.splitlines() == ["src/util/helpers.py:1:def needle():", "src/util/notes.txt:1:a needle here"]
    assert (await grep.run({"pattern": "zzz"}, ctx)).text == "no matches"


async def test_grep_skips_binary_and_shortens_long_lines(ws: Path, ctx: ToolContext) -> None:
    (ws / "blob.bin").write_bytes(b"needle\x00\x01")
    (ws / "long.txt").write_text("needle" + "x" * 1000 + "\n")
    result = await grep.run({"pattern": "needle"}, ctx)
    assert result.text.startswith("long.txt:1:needle") and "… [+" in result.text
    assert "blob.bin" not in result.text


async def test_grep_stops_at_cap(ws: Path, ctx: ToolContext) -> None:
    (ws / "many.txt").write_text("hit\n" * (GREP_MAX_MATCHES * 3))
    result = await grep.run({"pattern": "hit"}, ctx)
    lines = result.text.splitlines()
    assert len(lines) == GREP_MAX_MATCHES + 1
    assert f"stopped at {GREP_MAX_MATCHES} matches" in lines[-1]


async def test_grep_invalid_regex_explains(ws: Path, ctx: ToolContext) -> None:
    with pytest.raises(ToolError, match=r"invalid regular expression 'foo\(': missing \), unterminated subpattern"):
        await grep.run({"pattern": "foo("}, ctx)


async def test_grep_outside_and_symlink_leak_refused(ws: Path, tmp_path: Path, ctx: ToolContext) -> None:
    (tmp_path / "outside.txt").write_text("needle outside\n")
    (ws / "leak.txt").symlink_to(tmp_path / "outside.txt")
    assert (await grep.run({"pattern": "needle"}, ctx)).text == "no matches"
    with pytest.raises(ToolError, match="points outside"):
        await grep.run({"pattern": "needle", "path": "leak.txt"}, ctx)


async def test_grep_is_cancellable(ws: Path, ctx: ToolContext) -> None:
    _tree(ws, {f"t/{i}.txt": "x\n" * 50 for i in range(2000)})
    task = asyncio.create_task(grep.run({"pattern": "never"}, ctx))
    await asyncio.sleep(0)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


async def test_a_cancelled_grep_kills_its_worker_inside_a_slow_file(ws: Path, ctx: ToolContext) -> None:
    # Each line costs ~0.1 s of backtracking; 300 lines would keep a worker busy for ~30 s.
    (ws / "slow.txt").write_text(("a" * 22 + "\n") * 300)
    task = asyncio.create_task(grep.run({"pattern": r"\A(a+)+b"}, ctx))
    await _until(lambda: bool(_grep_workers()))
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert _grep_workers() == []  # killed and reaped before the cancellation propagated


def _grep_workers() -> list[int]:
    """Live grep worker processes started by this test process."""
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        if ppid == os.getpid() and b"grep_worker" in cmdline:
            found.append(int(pid))
    return found


async def _until(condition: Callable[[], bool]) -> None:
    for _ in range(2000):  # a hang guard, not a timing assertion
        if condition():
            return
        await asyncio.sleep(0.005)
    raise AssertionError("condition never became true")


async def test_a_catastrophic_pattern_is_abandoned_per_file_and_the_search_goes_on(ws: Path, ctx: ToolContext) -> None:
    (ws / "a_evil.txt").write_text("a" * 40 + "!\n")
    (ws / "b_fine.txt").write_text("aaaa\n")
    result = await grep.run({"pattern": r"^(a+)+$"}, ctx)
    lines = result.text.splitlines()
    assert lines[0] == "b_fine.txt:1:aaaa"
    assert "1 file(s) not fully searched" in lines[-1] and "a_evil.txt" in lines[-1]


async def test_grep_total_budget_kills_the_worker_and_keeps_partial_matches(ws: Path) -> None:
    from minicode.tools import grep as grep_module
    from minicode.tools.grep_scan import GrepJob

    (ws / "a.txt").write_text("hit\n")
    (ws / "b_evil.txt").write_text("a" * 40 + "!\n")
    found = await grep_module._run_worker(GrepJob(str(ws), ".", r"hit|^(a+)+$"), budget=0.5)
    assert found.stopped and found.matches == ["a.txt:1:hit"]
    assert _grep_workers() == []


async def test_grep_anchors_work_per_line(ws: Path, ctx: ToolContext) -> None:
    (ws / "a.py").write_text("x = 1\ndef f():\n    def g(): pass\n")
    assert (await grep.run({"pattern": "^def"}, ctx)).text == "a.py:2:def f():"
    assert (await grep.run({"pattern": r"\Adef"}, ctx)).text == "a.py:2:def f():"
    assert (await grep.run({"pattern": r"pass$"}, ctx)).text == "a.py:3:    def g(): pass"


@pytest.fixture
def with_minicode_dir(project: Path) -> Path:
    _tree(
        project,
        {
            ".minicode/sessions/1b4e28ba-2fa1-4d3b-a3f5-ef19b5a7633b.jsonl": '{"content": "needle echoed"}\n',
            ".minicode/sessions/.gitignore": "*\n",
            ".minicode/memory/notes.md": "needle remembered\n",
            ".minicode/MiniCode.md": "needle project memory\n",
        },
    )
    return project


async def test_session_logs_are_never_searched(with_minicode_dir: Path, ctx: ToolContext) -> None:
    found = await grep.run({"pattern": "needle"}, ctx)
    assert "sessions" not in found.text
    assert ".minicode/memory/notes.md:1:" in found.text and ".minicode/MiniCode.md:1:" in found.text
    globbed = await glob.run({"pattern": "**/*"}, ctx)
    assert ".minicode/memory/notes.md" in globbed.text.splitlines()
    assert not any("sessions" in line for line in globbed.text.splitlines())
    listed = await ls.run({"path": ".minicode"}, ctx)
    assert listed.text.splitlines()[:2] == ["MiniCode.md", "memory/"]
    assert "1 ignored entry hidden" in listed.text
    inside = await ls.run({"path": ".minicode/sessions"}, ctx)
    assert "jsonl" not in inside.text


async def test_a_directory_merely_named_sessions_is_searched(project: Path, ctx: ToolContext) -> None:
    _tree(project, {"sessions/a.txt": "needle\n", "src/.minicode/sessions/b.txt": "needle\n"})
    found = await grep.run({"pattern": "needle"}, ctx)
    assert "sessions/a.txt:1:" in found.text and "src/.minicode/sessions/b.txt:1:" in found.text


async def test_with_the_assists_on_a_python_match_names_the_function_it_is_in(ws: Path, ctx: ToolContext) -> None:
    from dataclasses import replace

    (ws / "billing.py").write_text("from mail import send_email\n\n\nclass Billing:\n    def remind(self, account):\n"
                                   "        send_email(account, 'overdue')\n\n\ndef notify(account):\n"
                                   "    send_email(account, 'hi')\n")
    (ws / "notes.txt").write_text("send_email is in mail.py\n")
    (ws / "broken.py").write_text("def (:\n    send_email()\n")
    assisted = await grep.run({"pattern": "send_email"}, replace(ctx, read_before_write=True))
    assert assisted.text.splitlines() == [
        "billing.py:1:from mail import send_email",  # at the top level: nothing to name
        "billing.py:6 in Billing.remind():        send_email(account, 'overdue')",
        "billing.py:10 in notify():    send_email(account, 'hi')",
        "broken.py:2:    send_email()",  # does not parse: as found
        "notes.txt:1:send_email is in mail.py",
    ]
    plain = await grep.run({"pattern": "send_email"}, ctx)
    assert " in notify()" not in plain.text  # a capable model's results are as they always were
