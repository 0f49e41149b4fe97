"""Argument parsing (SPEC 1): every option, its validation, and usage errors exiting 2."""

from __future__ import annotations

from pathlib import Path

import pytest

from minicode import __version__
from minicode.cli.args import DEFAULT_MAX_TURNS, THINK_LEVELS, Options, build_parser, parse_args
from minicode.config import THINKING_LEVELS


def test_defaults() -> None:
    o = parse_args([])
    assert o == Options()
    assert (o.max_turns, o.timeout, o.task_text, o.yes) == (DEFAULT_MAX_TURNS, None, "", False)
    assert DEFAULT_MAX_TURNS == 500


def test_every_option() -> None:
    o = parse_args(["--session", "abc", "-y", "--max-turns", "7", "--timeout", "2.5", "--model", "m",
                    "--think", "high", "--config", "c.toml", "-C", "dir", "fix", "the", "bug"])
    assert o.session == "abc" and o.yes and o.max_turns == 7 and o.timeout == 2.5
    assert (o.model, o.think, o.config, o.directory) == ("m", "high", Path("c.toml"), Path("dir"))
    assert o.task == ("fix", "the", "bug") and o.task_text == "fix the bug"


def test_long_forms_and_intermixed_task() -> None:
    o = parse_args(["fix", "--continue", "it", "--yes"])
    assert o.continue_session and o.yes and o.task_text == "fix it"


def test_init_options() -> None:
    o = parse_args(["--init", "--base-url", "http://x/v1", "--model", "m", "--api-key-env", "K"])
    assert (o.init, o.base_url, o.model, o.api_key_env) == (True, "http://x/v1", "m", "K")


def test_checks_repeat_and_doctor_flags() -> None:
    o = parse_args(["--check", "pytest -q", "fix", "--check", " ruff check . ", "it"])
    assert o.checks == ("pytest -q", "ruff check .") and o.task_text == "fix it"
    assert parse_args(["--doctor", "--json"]) == Options(doctor=True, json=True)
    assert parse_args(["--doctor", "--model", "m", "--timeout", "5"]).doctor


def test_mcp_login_names_a_server() -> None:
    assert parse_args(["--mcp-login", "web", "--mcp-config", "m.toml"]) == Options(mcp_login="web", mcp_config=Path("m.toml"))


def test_think_levels_are_configs() -> None:
    assert THINK_LEVELS is THINKING_LEVELS


@pytest.mark.parametrize("argv", [
    ["--max-turns", "0"], ["--max-turns", "-1"], ["--max-turns", "x"], ["--max-turns", "1.5"],
    ["--timeout", "0"], ["--timeout", "-2"], ["--timeout", "nan"], ["--timeout", "inf"], ["--timeout", "soon"],
    ["--think", "extreme"], ["--session", "a", "-c"], ["--bogus"], ["--init", "task"],
    ["--base-url", "http://x"], ["--api-key-env", "K"], ["--model", " "], ["--session"],
    ["--check", " "], ["--check"], ["--json"], ["--doctor", "task"], ["--doctor", "--init"],
    ["--doctor", "-c"], ["--mcp-login"], ["--mcp-login", "web", "task"], ["--mcp-login", "web", "--mcp"],
    ["--mcp-login", "web", "--output", "json"],
])
def test_bad_flags_exit_2_with_usage(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as e:
        parse_args(argv)
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("usage: minicode")
    assert "minicode: error:" in err


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as e:
        parse_args(["--version"])
    assert e.value.code == 0
    assert capsys.readouterr().out == f"minicode {__version__}\n"


def test_options_are_frozen() -> None:
    with pytest.raises(AttributeError):
        parse_args([]).yes = True  # type: ignore[misc]


def test_task_text_with_undecodable_argv_bytes_is_valid_text() -> None:
    task = b"fix caf\xe9".decode("utf-8", "surrogateescape")  # how Python hands such argv over
    assert parse_args([task]).task_text == "fix caf\ufffd"
    assert parse_args(["fix café"]).task_text == "fix café"
    assert parse_args(["x\ud800"]).task_text == "x\ufffd"


def test_help_states_spec_1_modes_and_the_init_uses_of_model_and_session() -> None:
    text = " ".join(build_parser().format_help().split())
    assert "TASK, stdin a pipe one-shot with the piped text attached" in text
    assert 'git diff | minicode "review this"' in text
    assert "with --init: the model to write" in text
    assert "alone it just opens the session" in text
    assert "--init [--user]" in text


def test_output_formats() -> None:
    assert parse_args([]).output == "text"
    assert parse_args(["--output", "json", "go"]).output == "json"
    assert parse_args(["go", "--output=stream-json"]).output == "stream-json"


@pytest.mark.parametrize("argv", [["--output", "xml", "go"], ["--output", "json", "--init"],
                                  ["--output", "stream-json", "--doctor"]])
def test_output_usage_errors(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        parse_args(argv)
    assert exc.value.code == 2 and "--output" in capsys.readouterr().err


def test_double_dash_makes_the_rest_task_words() -> None:
    assert parse_args(["--", "-x"]).task == ("-x",)
    options = parse_args(["--yes", "fix", "--", "-x", "--yes", "--"])
    assert options.yes and options.task == ("fix", "-x", "--yes", "--")
    assert parse_args(["--", "--help"]).task_text == "--help"  # a task, not the flag


def test_a_dash_task_without_double_dash_is_still_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        parse_args(["-x"])
    assert info.value.code == 2
    assert "unrecognized arguments: -x" in capsys.readouterr().err


@pytest.mark.parametrize(("argv", "hint"), [
    (["-p", "fix it"], 'a TASK given as words runs once and prints the answer: minicode "fix the bug"'),
    (["--print", "fix it"], "a TASK given as words"),
    (["--resume"], "--session ID resumes a session"),
    (["--dangerously-skip-permissions", "fix"], "--yes approves every call"),
    (["fix", "--full-auto"], "--yes approves every call"),
])
def test_another_agents_option_is_refused_with_minicodes_way(argv: list[str], hint: str,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    # trial: `minicode -p "task"` (Claude Code's print mode) said only "unrecognized arguments: -p"
    with pytest.raises(SystemExit) as exit_info:
        parse_args(argv)
    err = capsys.readouterr().err
    assert exit_info.value.code == 2 and "unrecognized arguments" in err and f"(in minicode: {hint}" in err


def test_an_unknown_option_of_no_other_agent_gets_no_hint(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        parse_args(["--bogus", "x"])
    err = capsys.readouterr().err
    assert err.rstrip().endswith("unrecognized arguments: --bogus") and "in minicode" not in err
