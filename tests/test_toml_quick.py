"""`toml_quick.loads` reads what `tomllib.loads` reads for the plain subset, and leaves every
other file — valid or not — to tomllib (None): it never accepts a file tomllib rejects, and
never reads a file differently."""

from __future__ import annotations

import random
import tomllib
from pathlib import Path

import pytest

from minicode.errors import ConfigError
from minicode.toml_quick import loads
from minicode.tomlfile import parse_toml

LINES = [
    "[model]", "[task]", "[permissions]", "[langfuse]", "[model] # the endpoint", "[ model ]", "[model.x]", "[[model]]",
    "[]", "[mo del]", "[model]x", 'base_url = "http://127.0.0.1:8080/v1"', 'name = "qwen3"', "name = 'lit\\eral'",
    'api_key = ""', 'api_key_env = "OPENAI_API_KEY"', "context_window = 131072", "context_window = +5",
    "context_window = -0", "context_window = 007", "context_window = 1_000", "context_window = 0x10",
    "context_window = 1.5", "context_window = 99999999999999999999", "check_timeout = 60 # seconds",
    'checks = ["pytest -q", \'ruff check .\']', "checks = []", 'checks = [ "a" , ]', 'checks = ["a" "b"]',
    "checks = [1, 2]", 'checks = ["a",', "checks = [,]", 'allow = ["bash(ls *)", "edit(src/**)"]',
    'thinking = "high"', "flag = true", "flag = false", "flag = True", 'x = "a" # c', 'x = "a" "b"', 'x = "a\\"b"',
    'x = "a\\nb"', 'x = """multi"""', "x = '''multi'''", 'x = "#not a comment"', "x = 'it''s'", 'x = "café ✓"',
    'x = "tab\there"', "x =", "= 1", '"quoted" = 1', "a.b = 1", "x = {a = 1}", "x = 1979-05-27",
    "x = inf", "x = nan", 'name = "dup"', "# a comment", "   # indented comment", "", "   ", "\t",
    'x="tight"', "x=1#c", "x = true#c", "x = 1 2", "x = -", "bare-key_1 = 2", "1234 = 5",
]
CONTROL = ["\r\n", "\r", "\x00", "\x7f", "\ufeff", "\x1b"]


def tomllib_or_error(text: str) -> object:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return "error"


def documents(count: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        lines = [rng.choice(LINES) for _ in range(rng.randint(0, 8))]
        text = "\n".join(lines) + rng.choice(["", "\n"])
        if rng.random() < 0.1:
            at = rng.randint(0, len(text))
            text = text[:at] + rng.choice(CONTROL) + text[at:]
        out.append(text)
    return out


@pytest.mark.parametrize("seed", range(3))
def test_quick_reads_what_tomllib_reads_or_leaves_it(seed: int) -> None:
    accepted = 0
    for text in documents(3000, seed):
        quick = loads(text)
        if quick is not None:
            accepted += 1
            assert quick == tomllib_or_error(text), text
    assert accepted > 200  # the comparison covered the subset, not only refusals


def test_a_usual_configuration_is_read_quickly() -> None:
    text = ('# minicode\n[model]\nbase_url = "https://api.example.com/v1"  # the endpoint\nname = "m"\n'
            'api_key_env = "KEY"\ncontext_window = 131072\nthinking = \'high\'\n\n[task]\n'
            'checks = ["pytest -q", "ruff check ."]\ncheck_timeout = 300\n\n[permissions]\n'
            'allow = ["bash(git status)"]\ndeny = []\n')
    assert loads(text) == tomllib.loads(text)
    assert loads(text) is not None


@pytest.mark.parametrize("text", [
    'x = "a\\u00e9"', "[model]\n[model]", "x = 1\nx = 2", "x = 1.0", 'x = ["a",\n "b"]', "x = 1\r\n",
    "\ufeffx = 1", "x = 1_0", "[a]\nx = 1\n[a]", "x = 1\n[x]",
])
def test_everything_else_is_left_to_tomllib(text: str) -> None:
    assert loads(text) is None


def test_parse_toml_still_reports_invalid_files_through_tomllib(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    with pytest.raises(ConfigError, match=r"invalid TOML at line 2, column \d+"):
        parse_toml(b'[model]\nname = "unterminated\n', path)
    with pytest.raises(ConfigError, match="not valid UTF-8"):
        parse_toml(b"x = '\xff'", path)
    assert parse_toml(b'x = "a\\tb"', path) == {"x": "a\tb"}  # an escape: tomllib reads it
    assert parse_toml(b'[model]\nname = "m"\n', path) == {"model": {"name": "m"}}
