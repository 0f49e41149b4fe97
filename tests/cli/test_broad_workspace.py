"""A home directory or / as the workspace is asked about first, refused without anyone to ask."""

from __future__ import annotations

from pathlib import Path

import pytest

from minicode.cli.broad_workspace import broad_reason, confirm_workspace
from minicode.errors import ConfigError


def test_root_home_and_the_homes_directory_are_broad(tmp_path: Path) -> None:
    home = tmp_path / "home" / "ann"
    home.mkdir(parents=True)
    assert broad_reason(Path("/"), str(home)) == "the root directory /"
    assert broad_reason(home, str(home)) == f"your home directory ({home})"
    assert broad_reason(home.parent, str(home)).startswith("the directory that holds the home directories")
    assert broad_reason(home / "project", str(home)) is None
    assert broad_reason(home, None) is None and broad_reason(home, "relative/home") is None


def _confirm(home: Path, *, explicit: bool = False, answer: str | None = None, can_ask: bool = True) -> list[str]:
    asked: list[str] = []
    warned: list[str] = []

    def ask(question: str) -> str | None:
        asked.append(question)
        return answer

    confirm_workspace(home, explicit=explicit, env={"HOME": str(home)}, ask=ask if can_ask else None,
                      warn=warned.append)
    return asked + warned


def test_a_yes_on_the_terminal_goes_on(tmp_path: Path) -> None:
    said = _confirm(tmp_path, answer="y\n")
    assert len(said) == 1 and said[0].endswith("Use it anyway? [y/N] ")


@pytest.mark.parametrize("answer", ["\n", "n\n", "sure\n", None])
def test_anything_else_stops_before_anything_runs(tmp_path: Path, answer: str | None) -> None:
    with pytest.raises(ConfigError, match="not started: cd into a project directory"):
        _confirm(tmp_path, answer=answer)


def test_without_a_terminal_it_refuses_and_says_how_to_go_on(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=f"name it with -C {tmp_path} to use it anyway"):
        _confirm(tmp_path, can_ask=False)


def test_naming_it_with_dash_c_is_the_choice_made_and_warned_once(tmp_path: Path) -> None:
    said = _confirm(tmp_path, explicit=True, can_ask=False)
    assert said == [f"minicode: warning: the workspace is your home directory ({tmp_path}): the model can read "
                    "any file in it without asking (keys, tokens, other projects)"]
