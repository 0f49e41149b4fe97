"""The slash-command table: resolution, near misses, paths as text, help from the table."""

from __future__ import annotations

import pytest

from minicode.cli.frontends.tui.commands import (
    COMMANDS,
    Invocation,
    NearMiss,
    SlashCommand,
    edit_distance,
    find,
    help_text,
    resolve,
)


def test_exact_commands_resolve_with_their_argument() -> None:
    for line, name, argument in (("/help", "/help", ""), (" /exit ", "/exit", ""), ("/quit", "/quit", ""),
                                 ("/compact now please", "/compact", "now please"),
                                 ("/exit\nand more", "/exit", "and more")):
        got = resolve(line)
        assert isinstance(got, Invocation) and got.command.name == name and got.argument == argument


@pytest.mark.parametrize(("typed", "suggestion"), [
    ("/exti", "/exit"), ("/compcat", "/compact"), ("/hlep", "/help"), ("/EXIT", "/exit"),
    ("/qiut", "/quit"), ("/exit2", "/exit"), ("/comapct now", "/compact"), ("/hel", "/help"),
    ("/ex", "/exit"), ("/c", "/compact"), ("/q", "/quit"),
])
def test_near_misses_say_did_you_mean_and_are_not_text(typed: str, suggestion: str) -> None:
    got = resolve(typed)
    assert isinstance(got, NearMiss) and got.suggestion == suggestion
    word = typed.split()[0]
    assert got.message() == f"unknown command {word} — did you mean {suggestion}?"


@pytest.mark.parametrize("line", [
    "/usr/lib is missing", "/etc/hosts looks wrong", "/tmp is full", "/dev is odd", "/ alone",
    "/", "/helpmeplease with this", "/exitcode of the last run?", "hello /exit", "/var/log/syslog",
])
def test_paths_and_far_words_are_text_for_the_model(line: str) -> None:
    assert resolve(line) is None


def test_a_table_entry_added_by_another_feature_is_found_and_suggested() -> None:
    calls: list[str] = []
    extra = COMMANDS + (SlashCommand("/bookmark", "mark this point", lambda c, arg: calls.append(arg), "[NAME]"),)
    got = resolve("/bookmark 1234", extra)
    assert isinstance(got, Invocation) and got.argument == "1234"
    got.command.run(None, got.argument)  # type: ignore[arg-type]
    assert calls == ["1234"]
    near = resolve("/bookmrak", extra)
    assert isinstance(near, NearMiss) and near.suggestion == "/bookmark"
    assert "/bookmark [NAME]" in help_text(extra) and "mark this point" in help_text(extra)


def test_edit_distance_counts_a_swap_as_one() -> None:
    assert edit_distance("exti", "exit") == 1
    assert edit_distance("compcat", "compact") == 1
    assert edit_distance("", "abc") == 3
    assert edit_distance("kitten", "sitting") == 3
    assert edit_distance("abcdefgh", "a") > 2  # far apart: not counted exactly


def test_help_lists_every_command_once_with_its_summary() -> None:
    text = help_text()
    for command in COMMANDS:
        assert sum(line.startswith(command.name + " ") for line in text.splitlines()) == 1
    assert text.splitlines()[-1] == "Any other line starting with / is sent to the model as text."
    assert find("/nope") is None and find("/help") is COMMANDS[0]
