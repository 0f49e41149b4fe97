"""The narrowest sensible rule offered by "always allow … in this project"."""

from __future__ import annotations

import pytest

from minicode.permissions.bash_check import analyze_bash
from minicode.permissions.suggest import suggest_bash, suggest_path


@pytest.mark.parametrize(
    ("command", "rule"),
    [
        ("pytest -q tests/", "bash(pytest *)"),
        ("pytest", "bash(pytest *)"),
        ("npm run test -- -u", "bash(npm run test *)"),
        ("npm test", "bash(npm test *)"),
        ("git status -s", "bash(git status *)"),
        ("git  'status'", "bash(git status *)"),
        ("cargo test --release", "bash(cargo test *)"),
        ("docker compose up -d", "bash(docker compose up *)"),
        ("python3 -m pytest -q", "bash(python3 -m pytest *)"),
        ("python3 tools/gen.py --all", "bash(python3 tools/gen.py *)"),
        ("./run_tests.sh -v", "bash(./run_tests.sh *)"),
        ("make test", "bash(make test *)"),
        # nothing narrow and sensible:
        ("git", None),  # "git *" would allow every git command
        ("git -C sub status", None),
        ("python3 -c 'print(1)'", None),  # code given to an interpreter
        ("python3", None),
        ("rm -rf build", None),  # destructive in every use
        ("curl https://example.com", None),
        ("pytest && git status", None),  # compound
        ("pytest > out.txt", None),  # writes a file
        ("CI=1 pytest", None),  # assignments (may also hold a secret)
        ("sudo pytest", None),  # runs another command
        ("xargs grep x", None),
        ("bash -c 'pytest'", None),
        ("echo $((x))", None),  # not understood
        ("'my tool' -x", None),  # a command name a rule cannot spell plainly
    ],
)
def test_suggested_bash_rule(command: str, rule: str | None):
    assert suggest_bash(analyze_bash(command)) == rule


@pytest.mark.parametrize(
    ("tool", "relative", "rule"),
    [
        ("edit", "src/app/main.py", "edit(src/app/**)"),
        ("write", "docs/guide.md", "write(docs/**)"),
        ("write", "notes.md", "write(./notes.md)"),  # anchored: not any notes.md at any depth
        ("edit", ".git/config", None),
        ("write", ".minicode/local/permissions.toml", None),
        ("edit", "weird*name.py", None),
        ("edit", None, None),  # outside the workspace
        ("edit", ".", None),
    ],
)
def test_suggested_path_rule(tool: str, relative: str | None, rule: str | None):
    assert suggest_path(tool, relative) == rule
