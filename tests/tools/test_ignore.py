"""gitignore subset and the glob translation."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from minicode.tools.fsroot import open_directory
from minicode.tools.fswalk import walk_files
from minicode.tools.ignore import IgnoreRules, glob_to_regex, load_ignore_rules


def _matches(pattern: str, path: str) -> bool:
    return re.match(glob_to_regex(pattern), path) is not None


@pytest.mark.parametrize(
    ("pattern", "path", "expected"),
    [
        ("*.py", "a.py", True),
        ("*.py", "src/a.py", False),
        ("**/*.py", "a.py", True),
        ("**/*.py", "src/deep/a.py", True),
        ("src/**", "src/a/b.txt", True),
        ("src/**", "src", False),
        ("a/**/b", "a/b", True),
        ("a/**/b", "a/x/y/b", True),
        ("a/**/b", "a/x/y/c", False),
        ("?.txt", "a.txt", True),
        ("?.txt", "ab.txt", False),
        ("[abc].md", "b.md", True),
        ("[!abc].md", "b.md", False),
        ("[!abc].md", "d.md", True),
        ("a+b(1).txt", "a+b(1).txt", True),
    ],
)
def test_glob_to_regex(pattern: str, path: str, expected: bool) -> None:
    assert _matches(pattern, path) is expected


def test_gitignore_semantics() -> None:
    rules = IgnoreRules(
        [
            "# a comment",
            "",
            "*.log",
            "!keep.log",
            "/build",
            "cache/",
            "docs/*.tmp",
            "**/gen",
            "out/**",
        ]
    )
    assert rules.ignored("a.log", is_dir=False)
    assert rules.ignored("deep/x/a.log", is_dir=False)
    assert not rules.ignored("keep.log", is_dir=False)  # negation
    assert rules.ignored("build", is_dir=True)  # anchored
    assert rules.ignored("build/x.o", is_dir=False)  # inside an ignored dir
    assert not rules.ignored("src/build", is_dir=True)  # anchored: only at the root
    assert rules.ignored("x/cache", is_dir=True)  # dir-only, any level
    assert not rules.ignored("cache", is_dir=False)  # dir-only does not match a file
    assert rules.ignored("docs/a.tmp", is_dir=False)
    assert not rules.ignored("docs/sub/a.tmp", is_dir=False)  # * does not cross /
    assert rules.ignored("a/b/gen/file.c", is_dir=False)
    assert rules.ignored("out/a/b", is_dir=False)
    assert not rules.ignored("# a comment", is_dir=False)
    assert not rules.ignored("src/main.py", is_dir=False)


def test_git_dir_is_always_ignored_and_negation_cannot_reinclude_under_ignored_dir() -> None:
    rules = IgnoreRules(["logs/", "!logs/keep.txt"])
    assert rules.ignored(".git", is_dir=True)
    assert rules.ignored(".git/config", is_dir=False)
    assert rules.ignored("sub/.git/HEAD", is_dir=False)
    assert rules.ignored("logs/keep.txt", is_dir=False)  # like git: parent dir excluded
    assert not rules.ignored(".gitignore", is_dir=False)


def test_walk_skips_git_ignored_and_outside_symlinks(ws: Path, tmp_path: Path) -> None:
    (ws / ".gitignore").write_text("*.log\nnode_modules/\n")
    for rel in ["a.py", "b.log", "src/c.py", ".git/config", "node_modules/m.js", "src/d.log"]:
        p = ws / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text("x\n")
    (tmp_path / "secret.txt").write_text("secret\n")
    (ws / "leak.txt").symlink_to(tmp_path / "secret.txt")
    (ws / "inside-link.py").symlink_to(ws / "a.py")
    (ws / "dirlink").symlink_to(ws / "src")  # never followed: avoids loops and duplicates
    root = ws.resolve()
    found = _walk(root)
    assert found == [".gitignore", "a.py", "inside-link.py", "src/c.py"]


def test_missing_gitignore_means_no_rules(ws: Path) -> None:
    rules = load_ignore_rules(ws)
    assert not rules.ignored("anything.log", is_dir=False)


def _nested_tree(ws: Path) -> Path:
    (ws / ".gitignore").write_text("*.log\n")
    for rel in ("app/build/out.js", "app/src/main.py", "app/debug.log", "app/keep.log",
                "app/src/build/gen.py", "lib/build/x.js", "app/src/notes.tmp", "notes.tmp"):
        (ws / rel).parent.mkdir(parents=True, exist_ok=True)
        (ws / rel).write_text("x\n")
    # Relative to app/: "/build" anchors at app/build only; "!keep.log" re-includes a
    # file the root ignores (deeper files win); "*.tmp" applies below app/ only.
    (ws / "app/.gitignore").write_text("/build/\n!keep.log\n")
    (ws / "app/src/.gitignore").write_text("*.tmp\n")
    return ws.resolve()


def test_nested_gitignore_applies_relative_to_its_directory(ws: Path) -> None:
    root = _nested_tree(ws)
    found = sorted(_walk(root))
    assert found == [
        ".gitignore", "app/.gitignore", "app/keep.log", "app/src/.gitignore",
        "app/src/build/gen.py", "app/src/main.py", "lib/build/x.js", "notes.tmp",
    ]


def test_nested_gitignore_is_honoured_by_ignored_for_single_paths(ws: Path) -> None:
    root = _nested_tree(ws)
    rules = load_ignore_rules(root)
    assert rules.ignored("app/build/out.js", is_dir=False)
    assert rules.ignored("app/src/notes.tmp", is_dir=False)
    assert not rules.ignored("app/keep.log", is_dir=False)
    assert rules.ignored("app/debug.log", is_dir=False)
    assert not rules.ignored("notes.tmp", is_dir=False)


def test_unreadable_or_escaping_nested_gitignore_is_ignored(ws: Path, tmp_path: Path) -> None:
    root = _nested_tree(ws)
    outside = tmp_path / "evil-ignore"
    outside.write_text("*.py\n")
    (root / "lib/.gitignore").symlink_to(outside)  # points out of the workspace: not read
    (root / "app/src/.gitignore").unlink()
    (root / "app/src/.gitignore").mkdir()  # a directory, not a file: no rules
    rules = load_ignore_rules(root)
    assert not rules.ignored("lib/build/x.js", is_dir=False)
    (root / "lib/a.py").write_text("x\n")
    assert not rules.ignored("lib/a.py", is_dir=False)
    assert not rules.ignored("app/src/notes.tmp", is_dir=False)


def test_rules_without_root_read_no_nested_files(ws: Path) -> None:
    root = _nested_tree(ws)
    rules = IgnoreRules(["*.log"])
    assert not rules.ignored("app/build/out.js", is_dir=False)
    assert rules.ignored("app/keep.log", is_dir=False)


def _walk(root: Path) -> list[str]:
    with open_directory(root, ".") as start:
        return [entry.rel for entry in walk_files(root, start, load_ignore_rules(root))]
