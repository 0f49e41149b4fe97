"""End to end, the real executable: hostile tool calls are tool results, never a dead task; a
directory swapped for an outside symlink during 200+ model-driven tool calls leaks nothing."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

from tests.support.fake_openai import RecordedRequest, Reply
from tests.tools.race import OUTSIDE_MARK, Swapper, outside_fingerprint, prepare_race_tree


def _tool_results(request: RecordedRequest) -> list[str]:
    return [m["content"] for m in request.messages if m["role"] == "tool"]


def test_inputs_that_used_to_kill_the_task_are_results(e2e) -> None:
    e2e.server.script(
        Reply.tools(("write", {"path": "a" * 5000 + ".txt", "content": "x"})),
        Reply.tools(("write", '{"path": "s.txt", "content": "bad \\ud800 half"}')),
        Reply.tools(("read", "[" * 100_000 + "]" * 100_000)),
        Reply.tools(("grep", {"pattern": "x", "path": "\x1b]0;PWNED\x07" * 3})),
        Reply.tools(("\x1b[2J" + "n" * 500, "{}")),
        Reply.text("survived"),
    )
    r = e2e.run("--yes", "try hostile inputs")
    assert r.code == 0, r.stderr
    assert r.stdout == "survived\n"
    assert "internal error" not in r.stderr and "Traceback" not in r.stderr
    last = e2e.server.requests[-1]
    results = _tool_results(last)
    assert "paths are limited to 4,096 bytes" in results[0]
    assert "lone surrogate \\ud800" in results[1]
    assert "deeper than 64 levels" in results[2]
    assert "control character (an escape at position 0)" in results[3]  # refused, never shown raw
    assert "unknown tool" in results[4] and len(results[4]) < 300
    assert not (e2e.workspace / "s.txt").exists()


def test_a_call_without_a_name_fails_alone_and_the_others_run(e2e) -> None:
    (e2e.workspace / "a.txt").write_text("alpha\n")
    e2e.server.script(
        Reply.tools(("read", {"path": "a.txt"}), ("", {}), ("write", {"path": "b.txt", "content": "beta\n"})),
        Reply.text("carried on"),
    )
    r = e2e.run("--yes", "three calls, one unnamed")
    assert r.code == 0 and r.stdout == "carried on\n", r.stderr
    results = _tool_results(e2e.server.requests[-1])
    assert "alpha" in results[0] and "unknown tool" in results[1] and (e2e.workspace / "b.txt").exists()
    sent = [c["function"]["name"] for m in e2e.server.requests[-1].messages for c in m.get("tool_calls") or []]
    assert sent == ["read", "missing_name", "write"]  # a name every server accepts goes back


def test_200_tool_calls_through_a_swapped_directory_leak_nothing(e2e, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    prepare_race_tree(e2e.workspace, outside)
    before = outside_fingerprint(outside)
    counter = itertools.count()
    calls = 204

    def next_call(request: RecordedRequest) -> Reply:
        i = next(counter)
        if i >= calls:
            return Reply.text("finished")
        kind = i % 6
        if kind == 0:
            return Reply.tool("read", path="d/f.txt")
        if kind == 1:
            return Reply.tool("ls", path="d")
        if kind == 2:
            return Reply.tool("grep", pattern="line|SECRET", path="d")
        if kind == 3:
            return Reply.tool("glob", pattern="**/*", path="d")
        if kind == 4:
            return Reply.tool("write", path=f"d/new-{i}.txt", content="x\n")
        return Reply.tool("edit", path="d/f.txt", old_text="line", new_text="line!")

    e2e.server.default = Reply.dynamic(next_call)
    with Swapper(e2e.workspace) as swapper:
        r = e2e.run("--yes", "--max-turns", str(calls + 5), "work in d", timeout=300)
    assert r.code == 0, r.stderr
    assert swapper.swaps > calls
    assert r.stdout == "finished\n"
    assert "internal error" not in r.stderr
    results = _tool_results(e2e.server.requests[-1])
    assert len(results) == calls
    leaks = [text for text in results if OUTSIDE_MARK in text or "outside-only" in text]
    assert leaks == []
    assert not any("failed unexpectedly" in text for text in results)
    assert outside_fingerprint(outside) == before
    assert json.dumps(results)  # the history stays serialisable


def test_dotdot_and_newline_paths_change_only_what_the_settled_path_names(e2e) -> None:
    """Finding T12: ``newdir/../app.py`` overwrites app.py as app.py (no junk directory); a
    path with newlines is refused before anything is written."""
    (e2e.workspace / "app.py").write_text("print('the real app')\n")
    e2e.server.script(
        Reply.tools(("write", {"path": "newdir/../app.py", "content": "# notes\n"})),
        Reply.tools(("write", {"path": "notes.txt" + "\n" * 40 + "/../target.py", "content": "x\n"})),
        Reply.text("done"),
    )
    r = e2e.run("--yes", "take a note")
    assert r.code == 0, r.stderr
    results = _tool_results(e2e.server.requests[-1])
    assert results[0].startswith("Overwrote app.py"), results
    assert "control character (a newline at position 9)" in results[1]
    assert (e2e.workspace / "app.py").read_text() == "# notes\n"
    assert sorted(p.name for p in e2e.workspace.iterdir() if not p.name.startswith(".")) == ["app.py", "config"]


def test_a_shipped_link_in_place_of_minicode_state_is_refused(e2e, tmp_path: Path) -> None:
    """A cloned repository's ``.minicode`` link to elsewhere: no session, snapshot or .gitignore
    is written through it; the run stops with a message that says what to do."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (e2e.workspace / ".minicode").symlink_to(outside)
    e2e.server.script(Reply.tool("write", path="a.txt", content="x"), Reply.text("done"))
    run = e2e.run("--yes", "write it")
    assert run.code != 0 and "is a symbolic link" in run.stderr and "remove the link" in run.stderr, run.stderr
    assert list(outside.iterdir()) == []
    (e2e.workspace / ".minicode").unlink()
    e2e.server._script.clear()  # the refused run sent no request: its replies are still queued
    e2e.server.script(Reply.tool("write", path="a.txt", content="x"), Reply.text("done"))
    run = e2e.run("--yes", "write it")
    assert run.code == 0, run.stderr  # once removed, the next run makes its real directory
    assert (e2e.workspace / "a.txt").read_text() == "x" and (e2e.workspace / ".minicode").is_dir()


def test_a_shipped_memory_link_to_a_file_outside_sends_nothing_of_it(e2e, tmp_path: Path) -> None:
    """A cloned repository's ``MiniCode.md -> ~/.ssh/id_rsa``: memory goes with every request (the
    early first one too), so the link would send that file past the read tool's confinement.
    The task stops before any request, saying why; one-shot, pipe and stream-json alike."""
    secret = tmp_path / "id_rsa"
    secret.write_text("-----BEGIN OPENSSH PRIVATE KEY----- r5-attack\n")
    (e2e.workspace / "MiniCode.md").symlink_to(secret)
    e2e.server.default = Reply.text("ok")
    for args, stdin in ((("explain this repo",), ""), ((), "explain this repo\n"),
                        (("--output", "stream-json", "explain this repo"), "")):
        run = e2e.run(*args, stdin=stdin)
        assert run.code == 1, run.stderr
        assert "MiniCode.md is a link to a file outside the workspace" in run.stderr + run.stdout
    assert not any("PRIVATE KEY" in json.dumps(r.body) for r in e2e.server.requests)
    assert e2e.server.requests == []
