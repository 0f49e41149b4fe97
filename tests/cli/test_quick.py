"""`--version` and `--help` answered without argparse: same output, nothing heavy imported."""

from __future__ import annotations

import subprocess
import sys

import pytest

from minicode import __version__
from minicode.cli import main
from minicode.cli.help_text import HELP
from minicode.cli.quick import HELP_COLUMNS, quick_answer, render_help, terminal_columns


def test_the_kept_help_is_argparse_output_at_80_columns() -> None:
    assert HELP == render_help(), (
        "src/minicode/cli/help_text.py is stale: the options changed. "
        "Regenerate it with `.venv/bin/python -m minicode.cli.quick`."
    )


@pytest.mark.parametrize("flag", ["-h", "--help"])
def test_help_and_version_print_what_argparse_would(flag: str, capsys: pytest.CaptureFixture[str],
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "100")
    assert main([flag]) == 0
    assert capsys.readouterr().out == HELP
    assert main(["--version"]) == 0
    assert capsys.readouterr().out == f"minicode {__version__}\n"


def test_a_narrow_terminal_or_other_arguments_go_through_argparse(capsys: pytest.CaptureFixture[str],
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    assert quick_answer(["--help"], HELP_COLUMNS - 1) is None
    assert quick_answer(["--help", "--yes"], 200) is None and quick_answer(["task"], 200) is None
    monkeypatch.setenv("COLUMNS", "60")
    assert main(["--help"]) == 0
    narrow = capsys.readouterr().out
    assert narrow != HELP and narrow.startswith("usage: minicode") and len(narrow.splitlines()[0]) <= 58
    assert main(["--bogus"]) == 2 and "unrecognized arguments" in capsys.readouterr().err


def test_terminal_columns_follow_shutil_rules() -> None:
    assert terminal_columns({"COLUMNS": "132"}, None) == 132
    assert terminal_columns({"COLUMNS": "junk"}, -1) == HELP_COLUMNS  # no terminal: argparse's fallback
    assert terminal_columns({}, -1) == HELP_COLUMNS


@pytest.mark.parametrize("flag", ["--version", "--help"])
def test_version_and_help_load_nothing_beyond_bare_python(flag: str) -> None:
    """No argparse, dataclasses, pathlib, typing, re or enum: what makes them cost ~1x python."""
    probe = ("import sys\nbefore = set(sys.modules)\nsys.argv = ['minicode', %r]\n"
             "from minicode.cli import main\nmain()\n"
             "print(' '.join(sorted(m for m in set(sys.modules) - before if not m.startswith('minicode'))))") % flag
    r = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60,
                       env={"COLUMNS": "80", "PATH": "/usr/bin:/bin"})
    assert r.returncode == 0, r.stderr
    loaded = set(r.stdout.splitlines()[-1].split())
    assert not loaded & {"argparse", "dataclasses", "pathlib", "typing", "re", "enum", "asyncio"}, loaded
