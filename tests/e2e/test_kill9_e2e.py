"""kill -9 of minicode leaves no command running: 0 survivors in the command's process group,
grandchildren included; a grep worker dies with minicode too."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

from tests.support.fake_openai import Reply
from tests.tools.test_spawn import group_members


def _wait_for(path: Path, limit: float = 20.0) -> str:
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        if path.exists() and path.read_text().strip():
            return path.read_text().strip()
        time.sleep(0.02)
    raise AssertionError(f"{path} never written")


def _pgid_of(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[2])


def test_kill_9_during_a_command_with_grandchildren_leaves_no_survivors(e2e) -> None:
    marker = e2e.workspace / "bash.pid"
    command = f"sleep 100 & sleep 100 & echo $$ > {marker}; wait"
    e2e.server.script(Reply.tool("bash", command=command), Reply.text("never"))
    proc = e2e.popen("--yes", "start background work")
    try:
        bash_pid = int(_wait_for(marker))
        pgid = _pgid_of(bash_pid)
        assert len(group_members(pgid)) >= 3  # bash and two sleeps (and the guard)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
        deadline = time.monotonic() + 10  # a hang guard: the guard needs ~0.5 s
        while group_members(pgid) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert group_members(pgid) == []
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.communicate()


def test_kill_9_during_a_catastrophic_grep_leaves_no_worker(e2e) -> None:
    (e2e.workspace / "evil.txt").write_text(("a" * 26 + "!\n") * 200)
    e2e.server.script(Reply.tool("grep", pattern=r"^(a+)+$"), Reply.text("never"))
    proc = e2e.popen("--yes", "search")
    try:
        deadline = time.monotonic() + 20
        workers: list[int] = []
        while not workers and time.monotonic() < deadline:
            workers = [pid for pid in _children(proc.pid) if b"grep_worker" in _cmdline(pid)]
            time.sleep(0.02)
        assert workers
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
        deadline = time.monotonic() + 10
        while any(_alive(pid) for pid in workers) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not any(_alive(pid) for pid in workers)
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.communicate()


def _children(parent: int) -> list[int]:
    found = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                if int(Path(f"/proc/{name}/stat").read_text().rsplit(")", 1)[1].split()[1]) == parent:
                    found.append(int(name))
            except OSError:
                continue
    return found


def _cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


def _alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _evil_tree(workspace: Path, files: int = 30) -> None:
    for i in range(files):
        (workspace / f"evil{i:02}.txt").write_text("a" * 40 + "!\n")


def test_timeout_is_honoured_during_a_catastrophic_grep(e2e) -> None:
    # 30 files x 2 s of backtracking each: ~60 s of matching if nothing stopped it.
    _evil_tree(e2e.workspace)
    e2e.server.script(Reply.tool("grep", pattern=r"^(a+)+$"), Reply.text("never"))
    started = time.monotonic()
    r = e2e.run("--yes", "--timeout", "2", "search", timeout=60)
    elapsed = time.monotonic() - started
    assert r.code == 1, r.stderr
    assert "timed out" in r.stderr
    assert elapsed < 2 + 8, elapsed  # a hang guard (the process starts in ~0.5 s; ends ~1 s after 2 s)


def test_sigterm_during_a_catastrophic_grep_exits_130(e2e) -> None:
    _evil_tree(e2e.workspace)
    e2e.server.script(Reply.tool("grep", pattern=r"^(a+)+$"), Reply.text("never"))
    proc = e2e.popen("--yes", "search")
    try:
        deadline = time.monotonic() + 20
        while not any(b"grep_worker" in _cmdline(pid) for pid in _children(proc.pid)):
            assert time.monotonic() < deadline
            time.sleep(0.02)
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=10)  # was ignored for 10 s and more
        assert proc.returncode == 130, err
        assert err.count("minicode: interrupted") == 1
    finally:
        if proc.poll() is None:
            proc.kill()


def test_temp_files_a_killed_write_left_are_removed_at_the_next_start(e2e) -> None:
    import json
    import subprocess

    from minicode.tools.fswrite import temp_name

    (e2e.workspace / "src").mkdir()
    left = temp_name("main.py")
    (e2e.workspace / "src" / left).write_text("half of a file")
    bystander = e2e.workspace / "src" / temp_name("other.py")
    bystander.write_text("same shape, but minicode never noted it")
    dead = subprocess.Popen(["true"])
    dead.wait()
    journal = e2e.workspace / ".minicode" / "tmp" / f"writes-{dead.pid}.jsonl"
    journal.parent.mkdir(parents=True)
    journal.write_text(json.dumps(["src", left]) + "\n")
    e2e.server.script(Reply.tool("write", path="src/main.py", content="print(1)\n"), Reply.text("written"))
    r = e2e.run("--yes", "write it")
    assert r.code == 0, r.stderr
    assert f"removed 1 temp file(s) an interrupted write left behind: src/{left}" in r.stderr
    assert not (e2e.workspace / "src" / left).exists() and bystander.exists()
    assert not journal.exists()
    assert list((e2e.workspace / ".minicode" / "tmp").iterdir()) == []  # this run's journal went at exit
    assert (e2e.workspace / "src" / "main.py").read_text() == "print(1)\n"


def _alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def test_background_work_that_leaves_the_group_ends_with_its_command_and_with_minicode(e2e) -> None:
    """A job in a group of its own (``set -m``) or a daemon in a session of its own (``setsid``)
    ends when its command does; the same started by a command minicode is killed in also ends."""
    pids = e2e.workspace / "escaped.pids"
    escape = f"setsid sleep 100 >/dev/null 2>&1 & echo $! >> {pids}; set -m; sleep 100 >/dev/null & echo $! >> {pids}"
    e2e.server.script(Reply.tool("bash", command=escape + "; sleep 0.2"), Reply.text("started"),
                      Reply.tool("bash", command=f"for p in $(cat {pids}); do kill -0 $p 2>/dev/null && echo alive $p; done; echo checked"),
                      Reply.text("ok"))  # fmt: skip
    run = e2e.run("--yes", stdin="start background work\ncheck it\n")
    assert run.code == 0, run.stderr
    second_check = e2e.server.requests[3].messages[-1]["content"]
    assert second_check.startswith("checked"), second_check  # gone before the next task's command
    left = [int(word) for word in pids.read_text().split()]
    assert len(left) == 2 and not any(_alive(pid) for pid in left)

    pids.unlink()
    e2e.server.script(Reply.tool("bash", command=escape + "; exec sleep 100"), Reply.text("never"))
    proc = e2e.popen("--yes", "start background work")
    try:
        deadline = time.monotonic() + 20
        while len(pids.read_text().split() if pids.exists() else []) < 2 and time.monotonic() < deadline:
            time.sleep(0.02)
        left = [int(word) for word in pids.read_text().split()]
        assert len(left) == 2 and all(_alive(pid) for pid in left)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
        deadline = time.monotonic() + 10  # a hang guard: the guard needs ~0.5 s
        while any(_alive(pid) for pid in left) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not any(_alive(pid) for pid in left)
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.communicate()
