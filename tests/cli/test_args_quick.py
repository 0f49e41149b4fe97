"""The quick path of `cli.args.parse_args` (common command lines without argparse) agrees
with argparse on every command line — same `Options`, or the same exit and message."""

from __future__ import annotations

import random
import subprocess
import sys

import pytest

from minicode.cli.args import _quick_fields, parse_args, parse_with_argparse
from minicode.cli.options import Options

# Words a command line is made of: the options the quick path reads, in every spelling,
# and what it must leave to argparse (abbreviations, groups, values that look like options,
# negative numbers, the other commands, bad values, `--`).
VOCABULARY = [
    "fix", "the bug", "", "-", "--", "-1", "-x", "-y", "--yes", "-c", "--continue", "-yc", "--ye", "--yes=1",
    "--session", "--session=ab", "--sess", "abc", "--model", "--model=m", "--model=", "--model= ", "--mod", "m",
    "--think", "--think=high", "--think=extreme", "high", "max", "--thinking", "-C", "-Cdir", "-C=dir", "dir",
    "--config", "--config=c.toml", "c.toml", "--max-turns", "--max-turns=3", "--max-turns=0", "3", "0", "x",
    "--timeout", "--timeout=2.5", "--timeout=nan", "2.5", "-2", "inf", "--allow", "--allow=bash(ls *)",
    "bash(ls *)", "--deny", "--deny=edit(**)", "--check", "--check=pytest -q", "--check= ", "pytest -q",
    "--output", "--output=json", "--output=xml", "json", "stream-json", "--init", "--user", "--base-url",
    "http://x/v1", "--api-key-env", "K", "--doctor", "--json", "--sessions", "--export", "-h", "--help",
    "--version", "--bogus", "-- x", "-x y", "café", "\udce9", "/undo", "/undoo", "/tmp/x", "/help me",
]
COMMON = [
    [], ["fix", "the", "bug"], ["-y", "fix"], ["--yes", "fix", "it", "-c"], ["--session", "abc"],
    ["--session=abc", "go"], ["-c"], ["--model", "m", "--think", "high", "task"], ["--model=m", "--think=off"],
    ["-C", "dir", "--config", "c.toml", "x"], ["--max-turns", "3", "--timeout", "2.5", "x"],
    ["--allow", "bash(ls *)", "--deny", "edit(**)", "--allow=read", "x"], ["--check", "pytest -q", "fix"],
    ["--output", "json", "x"], ["--output=stream-json"], ["fix", "--", "-x", "--yes"], [""],
]


def outcome(parse, argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[object, ...]:  # type: ignore[no-untyped-def]
    try:
        result: object = parse(argv, 100)
    except SystemExit as e:
        result = ("exit", e.code)
    except UnicodeEncodeError:  # argparse's message about an undecodable word, on capsys's strict stderr
        result = ("unencodable message",)
    captured = capsys.readouterr()
    return result, captured.out, captured.err


def command_lines(count: int, seed: int) -> list[list[str]]:
    rng = random.Random(seed)
    return [[rng.choice(VOCABULARY) for _ in range(rng.randint(0, 7))] for _ in range(count)]


@pytest.mark.parametrize("seed", range(3))
def test_quick_path_and_argparse_agree_on_random_command_lines(seed: int, capsys: pytest.CaptureFixture[str]) -> None:
    quick = 0
    for argv in command_lines(800, seed):
        assert outcome(parse_args, argv, capsys) == outcome(parse_with_argparse, argv, capsys), argv
        quick += _quick_fields(argv[:argv.index("--")] if "--" in argv else argv) is not None
    assert quick > 30  # the comparison covered the quick path, not only the fallback


@pytest.mark.parametrize("argv", COMMON)
def test_common_command_lines_take_the_quick_path(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert _quick_fields(argv[:argv.index("--")] if "--" in argv else argv) is not None
    assert outcome(parse_args, argv, capsys) == outcome(parse_with_argparse, argv, capsys)


def test_quick_path_reads_every_option() -> None:
    o = parse_args(["--session", "abc", "-y", "--max-turns", "7", "--timeout=2.5", "--model", "m", "--think",
                    "high", "--config", "c.toml", "-C", "dir", "--allow", "read", "--deny=bash(rm *)",
                    "--check", " make ", "--output", "json", "fix", "--", "-x"])
    assert o == Options(task=("fix", "-x"), session="abc", yes=True, max_turns=7, timeout=2.5, model="m",
                        think="high", config=__import__("pathlib").Path("c.toml"),
                        directory=__import__("pathlib").Path("dir"), allow=("read",), deny=("bash(rm *)",),
                        checks=("make",), output="json")


@pytest.mark.parametrize("argv, message", [
    (["--model="], "argument --model: must not be empty"),
    (["--session", "a", "-c"], "not allowed with argument"),
    (["--think", "extreme"], "invalid choice"),
    (["--max-turns", "0"], "must be at least 1"),
    (["--timeout"], "expected one argument"),
    (["--check=", "x"], "argument --check: must not be empty"),
])
def test_errors_fall_back_to_argparse_with_its_message(argv: list[str], message: str,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as e:
        parse_args(argv)
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("usage: minicode") and message in err


def test_a_common_command_line_does_not_import_argparse_or_dataclasses() -> None:
    code = ("import sys\nfrom minicode.cli.args import parse_args\n"
            "o = parse_args(['-y', 'fix', '--model', 'm', '-C', '.'])\nassert o.yes and o.model == 'm'\n"
            "print(sorted(m for m in ('argparse', 'dataclasses') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
