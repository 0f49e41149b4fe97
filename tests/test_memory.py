"""Project memory: loading, limits, the message wrapper, the write validator."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from minicode.errors import MemoryFileError
from minicode.memory import (
    MAX_MEMORY_BYTES,
    MAX_MEMORY_TOKENS,
    MEMORY_RULES,
    is_memory_detail,
    is_memory_index,
    load_memory,
    memory_message,
    memory_write_validator,
)


def _write(workspace: Path, data: bytes, name: str = "MiniCode.md") -> Path:
    path = workspace / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


def test_missing_file_is_no_memory_and_is_not_created(tmp_path: Path) -> None:
    assert load_memory(tmp_path) is None
    assert not (tmp_path / "MiniCode.md").exists()


@pytest.mark.parametrize("content", [b"", b"  \n\t\n", b"\xef\xbb\xbf\n"])
def test_empty_file_is_no_memory(tmp_path: Path, content: bytes) -> None:
    _write(tmp_path, content)
    assert load_memory(tmp_path) is None


def test_loads_text_only_from_the_workspace_root(tmp_path: Path) -> None:
    _write(tmp_path, "# Project\n- use uv\n- 漢字 ok\n".encode())
    _write(tmp_path, b"child memory", "sub/MiniCode.md")
    assert load_memory(tmp_path) == "# Project\n- use uv\n- 漢字 ok"
    assert load_memory(tmp_path / "sub") == "child memory"  # a different workspace
    (tmp_path / "MiniCode.md").unlink()
    assert load_memory(tmp_path) is None  # never taken from a child directory


def test_exactly_at_the_limits_is_accepted(tmp_path: Path) -> None:
    _write(tmp_path, b"x" * (MAX_MEMORY_TOKENS * 4))
    assert load_memory(tmp_path) == "x" * (MAX_MEMORY_TOKENS * 4)


def test_over_the_token_limit_is_an_error(tmp_path: Path) -> None:
    _write(tmp_path, b"x" * (MAX_MEMORY_TOKENS * 4 + 1))
    with pytest.raises(MemoryFileError, match="4,096") as info:
        load_memory(tmp_path)
    assert "Fix the file" in str(info.value)


def test_cjk_counts_two_tokens_per_character(tmp_path: Path) -> None:
    _write(tmp_path, ("漢" * (MAX_MEMORY_TOKENS // 2)).encode())
    assert load_memory(tmp_path) == "漢" * (MAX_MEMORY_TOKENS // 2)
    _write(tmp_path, ("漢" * (MAX_MEMORY_TOKENS // 2 + 1)).encode())  # 6 KiB, but too many tokens
    with pytest.raises(MemoryFileError, match="estimated tokens"):
        load_memory(tmp_path)


def test_over_64_kib_is_an_error(tmp_path: Path) -> None:
    _write(tmp_path, b"\n" * (MAX_MEMORY_BYTES + 1))  # blank lines: few tokens, many bytes
    with pytest.raises(MemoryFileError, match="65,536-byte limit"):
        load_memory(tmp_path)


def test_not_utf8_is_an_error(tmp_path: Path) -> None:
    _write(tmp_path, b"caf\xe9 au lait")
    with pytest.raises(MemoryFileError, match="not valid UTF-8.*offset 3"):
        load_memory(tmp_path)


def test_nul_is_an_error(tmp_path: Path) -> None:
    _write(tmp_path, b"ok\x00then")
    with pytest.raises(MemoryFileError, match="NUL byte at offset 2"):
        load_memory(tmp_path)


def test_unreadable_path_is_an_error_with_cause(tmp_path: Path) -> None:
    (tmp_path / "MiniCode.md").mkdir()
    with pytest.raises(MemoryFileError, match="cannot be read") as info:
        load_memory(tmp_path)
    assert isinstance(info.value.__cause__, OSError)


def test_memory_message_wraps_and_states_precedence() -> None:
    message = memory_message("- use uv")
    assert message.role == "user"
    text = message.content or ""
    assert text.startswith("<project-memory>\n") and text.endswith("\n- use uv\n</project-memory>")
    assert "system rules and the user's current request take precedence" in text
    assert memory_message("- use uv") is message  # one object per text: cheap estimates
    assert memory_message("other") is not message


def test_is_memory_index_relative_and_absolute(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    assert is_memory_index(workspace, "MiniCode.md")
    assert is_memory_index(workspace, "./MiniCode.md")
    assert is_memory_index(workspace, Path("sub/../MiniCode.md"))
    assert is_memory_index(workspace, workspace / "MiniCode.md")
    assert not is_memory_index(workspace, "sub/MiniCode.md")
    assert not is_memory_index(workspace, "minicode.md")
    assert not is_memory_index(workspace, tmp_path / "MiniCode.md")
    assert not is_memory_index(workspace, "MiniCode.md.bak")


def test_is_memory_index_through_a_symlinked_workspace(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    link = tmp_path / "link"
    os.symlink(real, link)
    assert is_memory_index(link, real / "MiniCode.md")
    assert is_memory_index(real, link / "MiniCode.md")


def test_is_memory_detail(tmp_path: Path) -> None:
    assert is_memory_detail(tmp_path, ".minicode/memory/testing.md")
    assert is_memory_detail(tmp_path, tmp_path / ".minicode" / "memory" / "a" / "b.md")
    assert not is_memory_detail(tmp_path, ".minicode/memory/notes.txt")
    assert not is_memory_detail(tmp_path, ".minicode/sessions/x.md")
    assert not is_memory_detail(tmp_path, "docs/memory.md")


def test_validator_index_allows_valid_and_refuses_each_limit(tmp_path: Path) -> None:
    validate = memory_write_validator(tmp_path)
    index = tmp_path / "MiniCode.md"
    assert validate(index, b"# facts\n- a") is None
    assert validate(index, b"") is None
    too_many_tokens = validate(index, b"y" * (MAX_MEMORY_TOKENS * 4 + 4))
    assert too_many_tokens is not None and "estimated tokens" in too_many_tokens
    assert "not changed" in too_many_tokens
    assert "65,536" in (validate(index, b" " * (MAX_MEMORY_BYTES + 1)) or "")
    assert "UTF-8" in (validate(index, b"\xff") or "")
    assert "NUL" in (validate(index, b"a\x00") or "")


def test_validator_detail_files_have_no_token_limit(tmp_path: Path) -> None:
    validate = memory_write_validator(tmp_path)
    detail = tmp_path / ".minicode" / "memory" / "arch.md"
    assert validate(detail, b"z" * MAX_MEMORY_BYTES) is None  # 16k tokens: fine for a detail
    refused = validate(detail, b"z" * (MAX_MEMORY_BYTES + 1))
    assert refused is not None and ".minicode/memory/arch.md" in refused
    assert "UTF-8" in (validate(detail, b"\xc3(") or "")
    assert "NUL" in (validate(detail, b"\x00") or "")


def test_validator_lets_other_paths_pass(tmp_path: Path) -> None:
    validate = memory_write_validator(tmp_path)
    junk = b"\x00\xff" * MAX_MEMORY_BYTES
    assert validate(tmp_path / "src" / "MiniCode.md", junk) is None
    assert validate(tmp_path / "data.bin", junk) is None
    assert validate(tmp_path / ".minicode" / "memory" / "blob.bin", junk) is None


def test_rules_cover_the_spec_points() -> None:
    rules = MEMORY_RULES.lower()
    for point in ("only when the user asks", "never secrets", "read the whole file",
                  "unrelated content", "no duplicates", "replace", "save a detail file before linking",
                  ".minicode/memory/*.md", "read tool"):
        assert point in rules, point


def test_a_link_to_a_file_outside_the_workspace_is_refused_not_sent(tmp_path: Path) -> None:
    """A cloned repository's MiniCode.md -> ~/.ssh/id_rsa would send that file with every request."""
    workspace = tmp_path / "repo"
    workspace.mkdir()
    secret = tmp_path / "id_rsa"
    secret.write_text("-----BEGIN OPENSSH PRIVATE KEY-----\n")
    (workspace / "MiniCode.md").symlink_to(secret)
    with pytest.raises(MemoryFileError, match="link to a file outside the workspace") as info:
        load_memory(workspace)
    assert "PRIVATE KEY" not in str(info.value)


def test_a_link_inside_the_workspace_is_memory(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "memory.md").write_text("use tabs\n")
    (tmp_path / "MiniCode.md").symlink_to(Path("docs") / "memory.md")
    assert load_memory(tmp_path) == "use tabs"
    (tmp_path / "MiniCode.md").unlink()
    (tmp_path / "MiniCode.md").symlink_to(Path("..") / tmp_path.name / "docs" / "memory.md")  # out and back in
    assert load_memory(tmp_path) == "use tabs"
    (tmp_path / "MiniCode.md").unlink()
    (tmp_path / "MiniCode.md").symlink_to(tmp_path / "gone.md")  # dangling: no memory, as with no file
    assert load_memory(tmp_path) is None
