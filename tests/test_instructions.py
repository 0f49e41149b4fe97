"""AGENTS.md / CLAUDE.md as project instructions: which file, limits, changes, the message."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from minicode.instructions import Instructions, ProjectInstructions, project_message
from minicode.memory import MAX_MEMORY_BYTES, memory_message


def _loaded(workspace: Path) -> ProjectInstructions:
    found = ProjectInstructions(workspace)
    found.refresh()
    return found


def test_agents_md_wins_over_claude_md(workspace: Path):
    (workspace / "AGENTS.md").write_text("Use tabs.\n")
    (workspace / "CLAUDE.md").write_text("Use spaces.\n")
    assert _loaded(workspace).current == Instructions("AGENTS.md", "Use tabs.")


def test_claude_md_when_there_is_no_agents_md_or_it_is_blank(workspace: Path):
    (workspace / "CLAUDE.md").write_text("\ufeffRun make test.\n")
    assert _loaded(workspace).current == Instructions("CLAUDE.md", "Run make test.")
    (workspace / "AGENTS.md").write_text("  \n")
    assert _loaded(workspace).current == Instructions("CLAUDE.md", "Run make test.")


def test_nothing_without_either_file(workspace: Path):
    found = _loaded(workspace)
    assert found.current is None and found.warning is None


@pytest.mark.parametrize(
    ("content", "why"),
    [
        (b"x" * (MAX_MEMORY_BYTES + 1), "larger than 65,536 bytes"),
        (b"caf\xe9", "not valid UTF-8 (bad byte at offset 3)"),
        (b"a\0b", "NUL byte"),
        (("word " * 4000).encode(), "estimated tokens; the limit is 4,096"),
    ],
)
def test_a_file_over_the_limits_is_not_used_and_says_why(workspace: Path, content: bytes, why: str):
    (workspace / "AGENTS.md").write_bytes(content)
    (workspace / "CLAUDE.md").write_text("fallback\n")
    found = _loaded(workspace)
    assert found.current is None  # AGENTS.md is the project's choice: no silent fallback
    assert found.warning is not None and found.warning.startswith("AGENTS.md is not given to the model: ")
    assert why in found.warning


def test_a_link_out_of_the_workspace_is_not_read(workspace: Path, tmp_path: Path):
    secret = tmp_path / "secret.txt"
    secret.write_text("the key is 42")
    os.symlink(secret, workspace / "AGENTS.md")
    found = _loaded(workspace)
    assert found.current is None and "outside the workspace" in (found.warning or "")


def test_a_link_inside_the_workspace_is_followed(workspace: Path):
    (workspace / "AGENTS.md").write_text("shared rules\n")
    os.symlink(workspace / "AGENTS.md", workspace / "CLAUDE.md")
    (workspace / "AGENTS.md").unlink()
    os.symlink("docs.md", workspace / "AGENTS.md")
    (workspace / "docs.md").write_text("from docs\n")
    assert _loaded(workspace).current == Instructions("AGENTS.md", "from docs")


def test_a_directory_is_not_a_file(workspace: Path):
    (workspace / "AGENTS.md").mkdir()
    assert "not a regular file" in (_loaded(workspace).warning or "")


def test_refresh_notices_changes_only(workspace: Path):
    found = ProjectInstructions(workspace)
    assert found.refresh() and found.current is None
    assert not found.refresh()
    (workspace / "AGENTS.md").write_text("one\n")
    assert found.refresh() and found.current == Instructions("AGENTS.md", "one")
    assert not found.refresh()
    (workspace / "AGENTS.md").write_text("two, longer\n")
    assert found.refresh() and found.current == Instructions("AGENTS.md", "two, longer")
    (workspace / "AGENTS.md").unlink()
    assert found.refresh() and found.current is None


def test_the_message_holds_instructions_then_memory():
    assert project_message(None, None) is None
    assert project_message(None, "facts") is memory_message("facts")
    message = project_message(Instructions("CLAUDE.md", "Use uv."), "facts")
    assert message is not None and message.role == "user"
    content = message.content or ""
    assert content.startswith("<project-instructions>\nProject instructions from CLAUDE.md")
    assert "Use uv.\n</project-instructions>\n\n<project-memory>" in content
    assert "do not edit it unless the user asks" in content
    assert content.endswith("facts\n</project-memory>")
    assert project_message(Instructions("CLAUDE.md", "Use uv."), "facts") is message  # cached
