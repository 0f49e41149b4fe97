"""The "did you mean" rule both frontends share."""

from __future__ import annotations

import pytest

from minicode.cli.frontends.shared.near_miss import edit_distance, nearest

NAMES = ("/undo", "/new", "/model", "/think", "/check", "/compact", "/permissions")


@pytest.mark.parametrize("word, meant", [
    ("/compcat", "/compact"), ("/undoo", "/undo"), ("/modle", "/model"), ("/perm", "/permissions"),
    ("/nwe", "/new"), ("/CHECK", "/check"),
])
def test_typos_and_unfinished_names_point_to_the_command(word: str, meant: str) -> None:
    assert nearest(word, NAMES) == meant


@pytest.mark.parametrize("word", ["/usr/lib", "/dev", "/", "/somethingelse", "undo", "/x/undo"])
def test_paths_and_far_words_are_no_command(word: str) -> None:
    assert nearest(word, NAMES) is None


def test_a_swap_of_neighbours_is_one_edit() -> None:
    assert edit_distance("exti", "exit") == 1 and edit_distance("abc", "abc") == 0
