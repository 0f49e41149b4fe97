"""Command and path patterns: what a rule's pattern matches."""

from __future__ import annotations

import pytest

from minicode.permissions.patterns import PatternError, compile_command, compile_path


@pytest.mark.parametrize(
    ("pattern", "text", "matches"),
    [
        ("pytest *", "pytest", True),
        ("pytest *", "pytest -q tests", True),
        ("pytest *", "pytestx", False),
        ("pytest*", "pytestx", True),  # no space: no word boundary, as in Claude Code
        ("git status", "git status", True),
        ("git status", "git status -s", False),
        ("npm run test:*", "npm run test", True),
        ("npm run test:*", "npm run test -- -u", True),
        ("npm run test:*", "npm run test:unit", True),  # Claude Code's prefix meaning (P6)
        ("npm run test:*", "npm run test:e2e -- --watch", True),
        ("npm run test:*", "npm run testx", False),  # still a word (or colon) boundary
        ("ls:*", "lsblk", False),
        ("git * main", "git merge main", True),
        ("git * main", "git main", False),
        ("* --version", "node --version", True),
        ("*", "anything at all", True),
        ('git commit -m "wip"', "git commit -m wip", True),
        ('git commit -m "a b"', "git commit -m 'a b'", True),  # canonical quoting
        ("echo '*'", "echo '*'", True),  # a quoted star is a literal star
        ("echo '*'", "echo x", False),
    ],
)
def test_command_patterns(pattern: str, text: str, matches: bool):
    assert compile_command(pattern).matches(text) is matches


@pytest.mark.parametrize(
    ("pattern", "template", "could"),
    [
        ("rm *", "rm\x00", True),
        ("rm *", "\x00 -rf x", True),  # a computed command name could be rm
        ("rm *", "r\x00 -f x", True),  # /bin/r? -f x
        ("rm *", "ls \x00", False),
        ("git push *", "git\x00 origin", True),  # git $x origin could be git push origin
        ("git push *", "git status\x00", False),
        ("* --force", "git push\x00", True),
        ("npm run test:*", "npm run\x00", True),
        ("git push", "git push\x00", True),  # the computed word may be empty (its blank goes too)
        ("ls *", "r\x00 -f x", False),
        # \x02: a quoted expansion in a command name — any text without a blank
        ("rm *", "r\x02 -f x", True),  # "r$x" -f x: x=m
        ("rm *", "\x02 -f x", True),
        ("rm *", "\x02/ls -la", False),  # "$dir"/ls is one word, never rm
        ("git push *", "\x02 origin", False),  # "$x" cannot be "git push"
    ],
)
def test_a_computed_word_could_make_a_command_match(pattern: str, template: str, could: bool):
    assert compile_command(pattern).could_match(template) is could


def test_command_pattern_prefix():
    assert compile_command("git push *").prefix == ("git", "push")
    assert compile_command("* install").prefix == ()


@pytest.mark.parametrize(
    ("pattern", "relative", "absolute", "matches"),
    [
        ("src/**", "src/a.py", "/w/src/a.py", True),
        ("src/**", "src/a/b/c.py", "/w/src/a/b/c.py", True),
        ("src/**", "lib/src/a.py", "/w/lib/src/a.py", False),
        ("/src/**", "src/a.py", "/w/src/a.py", True),  # leading / anchors at the workspace root
        ("./docs/*.md", "docs/a.md", "/w/docs/a.md", True),
        ("docs/*.md", "docs/sub/a.md", "/w/docs/sub/a.md", False),  # * stays in one level
        ("docs/**/*.md", "docs/sub/a.md", "/w/docs/sub/a.md", True),
        ("docs/**/*.md", "docs/a.md", "/w/docs/a.md", True),
        ("*.md", "a/b/README.md", "/w/a/b/README.md", True),  # no slash: any depth
        (".env", "sub/.env", "/w/sub/.env", True),
        ("node_modules", "node_modules/x/y.js", "/w/node_modules/x/y.js", True),  # a directory covers its files
        ("build/", "build/out.o", "/w/build/out.o", True),
        ("file?.txt", "file1.txt", "/w/file1.txt", True),
        ("file[0-9].txt", "file7.txt", "/w/file7.txt", True),
        ("file[!0-9].txt", "file7.txt", "/w/file7.txt", False),
        ("//tmp/**", None, "/tmp/x.log", True),  # // is an absolute path
        ("//tmp/**", "tmp/x.log", "/w/tmp/x.log", False),
        ("tmp/**", None, "/tmp/x.log", False),  # relative patterns never match outside
    ],
)
def test_path_patterns(pattern: str, relative: str | None, absolute: str, matches: bool):
    assert compile_path(pattern).matches(relative, absolute) is matches


@pytest.mark.parametrize("pattern", ["", "   ", ".", "~/x", "a/../b", "a\\b", "x[ab"])
def test_bad_path_patterns(pattern: str):
    with pytest.raises(PatternError):
        compile_path(pattern)


def test_the_root_pattern_covers_the_workspace_and_the_double_slash_everything():
    assert compile_path("/").matches("a/b.txt", "/w/a/b.txt")
    assert not compile_path("/").matches(None, "/etc/passwd")
    assert compile_path("//").matches(None, "/etc/passwd")
