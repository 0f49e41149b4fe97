"""End-to-end: AGENTS.md, else CLAUDE.md, reaches the model with every request, and the
start-up says which project files were loaded."""

from __future__ import annotations

from tests.support.fake_openai import Reply


def test_agents_md_is_in_every_request_and_named_at_start(e2e):
    (e2e.workspace / "AGENTS.md").write_text("# Agents\nAlways run `make check` before finishing.\n")
    (e2e.workspace / "CLAUDE.md").write_text("Ignored while AGENTS.md exists.\n")
    (e2e.workspace / "MiniCode.md").write_text("Project memory line.\n")
    e2e.server.script(Reply.tool("ls"), Reply.text("done"))
    r = e2e.run("look around")
    assert r.code == 0, r.stderr
    assert "minicode: project files: AGENTS.md (instructions), MiniCode.md (memory)" in r.stderr
    for request in e2e.server.requests:
        project = request.messages[1]["content"]
        assert project.startswith("<project-instructions>\nProject instructions from AGENTS.md")
        assert "Always run `make check` before finishing." in project and "Project memory line." in project
        assert "Ignored while AGENTS.md exists" not in project


def test_claude_md_is_used_without_agents_md(e2e):
    (e2e.workspace / "CLAUDE.md").write_text("Use pnpm, never npm.\n")
    e2e.server.script(Reply.text("ok"))
    r = e2e.run("hi")
    assert r.code == 0, r.stderr
    assert "minicode: project files: CLAUDE.md (instructions)" in r.stderr
    assert "Use pnpm, never npm." in e2e.server.requests[0].messages[1]["content"]


def test_an_oversized_agents_md_is_skipped_with_a_warning(e2e):
    (e2e.workspace / "AGENTS.md").write_text("rule " * 20000)
    e2e.server.script(Reply.text("ok"))
    r = e2e.run("hi")
    assert r.code == 0, r.stderr
    assert "minicode: warning: AGENTS.md is not given to the model: it is larger than 65,536 bytes" in r.stderr
    assert e2e.server.requests[0].messages[1]["content"] == "hi"
