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
        ("python3 -m pytest -q", "bash(python3 -m pytest *)"),
        ("python3 tools/gen.py --all", "bash(python3 tools/gen.py *)"),
        ("./run_tests.sh -v", "bash(./run_tests.sh *)"),
        ("uv run pytest -q", "bash(uv run pytest *)"),
        ("git log --oneline", "bash(git log *)"),
        # a program that runs code given in its arguments or writes files they name: the
        # exact words only, as narrow in effect as in name (finding T19)
        ("make test", "bash(make test)"),
        ("docker compose up -d", "bash(docker compose up -d)"),
        ("git", "bash(git)"),
        ("git -C sub status", "bash(git -C sub status)"),  # "git *" would allow every git command
        ("python3 -c 'print(1)'", "bash(python3 -c 'print(1)')"),
        ("'my tool' -x", "bash('my tool' -x)"),
        ("awk '{print $1}' log.txt", "bash(awk '{print $1}' log.txt)"),
        ("vim a", None),  # an editor runs commands from the files it opens: never understood
        ("pip install evilpkg", "bash(pip install evilpkg)"),
        ("docker run --rm -v /:/h alpine", "bash(docker run --rm -v /:/h alpine)"),
        ("sed -n 1p a.txt", "bash(sed -n 1p a.txt)"),
        ("zip -r a.zip src", "bash(zip -r a.zip src)"),
        ("tar tf a.tar", "bash(tar tf a.tar)"),
        ("sort a.txt", "bash(sort a.txt)"),
        ("deno run x.ts", "bash(deno run x.ts)"),
        ("lua x.lua", "bash(lua x.lua)"),
        ("man ls", "bash(man ls)"),
        ("less a.txt", "bash(less a.txt)"),
        ("ssh-keygen -t ed25519", "bash(ssh-keygen -t ed25519)"),
        ("npm install", "bash(npm install)"),
        ("uv run python -c x", "bash(uv run python -c x)"),  # uv run runs any program
        ("python3 -m timeit x", "bash(python3 -m timeit x)"),  # timeit runs its argument
        ("python3 -m pip install x", "bash(python3 -m pip install x)"),
        ("git push origin main", "bash(git push origin main)"),  # a URL would leak the code
        ("git reset --hard", "bash(git reset --hard)"),
        ("touch x", "bash(touch *)"),  # outside the workspace it needs a write rule
        ("jq . a.json", "bash(jq . a.json)"),
        # nothing narrow and sensible:
        ("tee a.txt", None),  # writes a.txt, like > a.txt
        ("ls *.py", "bash(ls *)"),
        ("cat 'a*b'", "bash(cat *)"),
        ("grep 'a*' x", "bash(grep *)"),
        ("jq '.[]*2' a.json", None),  # an exact rule cannot hold a * (it would be a wildcard)
        ("awk 'BEGIN{system(\"id\")}'", None),  # not understood: runs a command
        ("crontab -l", None),  # schedules code in every other use
        ("systemctl status x", None),
        ("python3", None),  # reads its code from the input: `echo CODE | python3`
        ("python3 -q", None),
        ("node", None),
        ("sqlite3 db.sqlite", None),  # .shell in its input runs commands
        ("python3 -c 'print(1)'", "bash(python3 -c 'print(1)')"),
        ("rm -rf build", None),  # destructive in every use
        ("curl https://example.com", None),
        ("pytest && git status", None),  # compound
        ("pytest > out.txt", None),  # writes a file
        ("CI=1 pytest", None),  # assignments (may also hold a secret)
        ("sudo pytest", None),  # runs another command
        ("xargs grep x", None),
        ("bash -c 'pytest'", None),
        ("echo $((x))", None),  # not understood
        ("find . -name '*.py'", None),
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
