"""`--init` as a newcomer meets it: `--user`, git exclusion, flag checks first, next steps."""

from __future__ import annotations

import shutil
import stat
import subprocess
from pathlib import Path

import pytest

from minicode.cli.main import main
from minicode.cli.config_setup import exclude_from_git

needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
REMOTE = ["--base-url", "https://api.x.io/v1", "--model", "m", "--api-key-env", "XK_FOR_TEST"]


@pytest.fixture()
def home(home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The shared isolated HOME, and the key variable these tests name left unset."""
    monkeypatch.delenv("XK_FOR_TEST", raising=False)
    return home


def _git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True).stdout


def test_init_user_writes_the_per_user_file_found_in_every_project(
    home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    clone = tmp_path / "clone"
    clone.mkdir()
    assert main(["-C", str(clone), "--init", "--user", "--base-url", "http://127.0.0.1:9/v1", "--model", "q"]) == 0
    path = home / ".config" / "minicode" / "config.toml"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert "written by `minicode --init --user`" in path.read_text()
    assert not (clone / "config").exists()
    err = capsys.readouterr().err
    assert str(path) in err and "then: cd your-project && minicode" in err
    from minicode.config import load_config

    other = tmp_path / "myproject"
    other.mkdir()
    assert load_config(other, None, {"HOME": str(home)}).path == path


def test_init_user_refuses_to_overwrite(home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = home / ".config" / "minicode" / "config.toml"
    path.parent.mkdir(parents=True)
    path.write_text("mine")
    assert main(["-C", str(tmp_path), "--init", "--user", *REMOTE]) == 2
    assert "refusing to overwrite" in capsys.readouterr().err and path.read_text() == "mine"


def test_user_without_init_is_a_usage_error(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--user"]) == 2
    assert "only go with --init" in capsys.readouterr().err


def test_bad_url_is_named_before_missing_flags(home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["-C", str(tmp_path), "--init", "--base-url", "ftp://x", "--model", "y"]) == 2
    err = capsys.readouterr().err
    assert "--base-url must be an http:// or https:// URL" in err and "--api-key-env" not in err
    assert not (tmp_path / "config").exists()


def test_a_url_with_a_query_is_refused_before_anything_is_written(home: Path, tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["-C", str(tmp_path), "--init", "--base-url", "https://x.io/v1?api-version=2", *REMOTE[2:]]) == 2
    assert "--base-url must not have a query (?…) or a fragment (#…)" in capsys.readouterr().err
    assert not (tmp_path / "config").exists()


def test_init_says_what_to_do_next(home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["-C", str(tmp_path), "--init", *REMOTE]) == 0
    err = capsys.readouterr().err
    assert "export XK_FOR_TEST=…" in err and "then: run `minicode` in this project" in err


def test_init_with_the_variable_already_set_does_not_ask_to_export(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("XK_FOR_TEST", "sk-x")
    assert main(["-C", str(tmp_path), "--init", *REMOTE]) == 0
    assert "export" not in capsys.readouterr().err


@needs_git
def test_init_in_a_git_repo_excludes_the_new_file(home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q")
    assert main(["-C", str(repo), "--init", *REMOTE]) == 0
    assert "/config/config.toml" in (repo / ".git" / "info" / "exclude").read_text().splitlines()
    assert "info/exclude" in capsys.readouterr().err
    assert _git(repo, "status", "--porcelain", "--untracked-files=all") == ""


@needs_git
def test_exclude_in_a_subdirectory_of_the_repo(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / "sub" / "config").mkdir(parents=True)
    _git(repo, "init", "-q")
    target = repo / "sub" / "config" / "config.toml"
    target.write_text("x")
    assert exclude_from_git(repo / "sub", target) is not None
    assert _git(repo, "status", "--porcelain", "--untracked-files=all") == ""


@needs_git
def test_already_ignored_file_is_left_alone(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q")
    (repo / ".gitignore").write_text("config/config.toml\n")
    before = (repo / ".git" / "info" / "exclude").read_bytes()
    assert exclude_from_git(repo, repo / "config" / "config.toml") is None
    assert (repo / ".git" / "info" / "exclude").read_bytes() == before


@needs_git
@pytest.mark.parametrize("linked", ["file", "directory"])
def test_a_linked_exclude_file_is_never_written_through(tmp_path: Path, linked: str) -> None:
    """A downloaded (not cloned) tree can ship ``.git/info/exclude -> ~/.bashrc``."""
    repo = tmp_path / "repo"
    (repo / "config").mkdir(parents=True)
    _git(repo, "init", "-q")
    victim_dir = tmp_path / "elsewhere"
    victim_dir.mkdir()
    victim = victim_dir / "exclude"
    victim.write_text("the user's own file\n")
    info = repo / ".git" / "info"
    if linked == "file":
        (info / "exclude").unlink()
        (info / "exclude").symlink_to(victim)
    else:
        for child in info.iterdir():
            child.unlink()
        info.rmdir()
        info.symlink_to(victim_dir)
    (repo / "config" / "config.toml").write_text("x")
    assert exclude_from_git(repo, repo / "config" / "config.toml") is None
    assert victim.read_text() == "the user's own file\n"


def test_outside_a_repository_nothing_is_excluded(tmp_path: Path) -> None:
    (tmp_path / "config").mkdir()
    assert exclude_from_git(tmp_path, tmp_path / "config" / "config.toml") is None
    assert not (tmp_path / ".git").exists()
