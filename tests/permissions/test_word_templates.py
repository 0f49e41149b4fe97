"""A shell word as a pattern for deny rules (``word_templates``): decoded text stays text,
what bash computes is a wildcard (``\\x00`` any text, ``\\x02`` any text without a blank)."""

from __future__ import annotations

import pytest

from minicode.permissions.shell import parse_shell
from minicode.permissions.shell_words import Word
from minicode.permissions.word_templates import command_template, name_templates, word_template

S, N = "\x00", "\x02"


def _words(command: str) -> tuple[Word, ...]:
    parsed = parse_shell(command)
    assert parsed.unclear is None, parsed
    return parsed.commands[-1].words  # nested commands ($(…)) come first


@pytest.mark.parametrize(("word", "template"), [
    ("rm", "rm"),
    ("r'm'", "rm"),  # decoded, not a wildcard
    ("$'\\x72m'", "rm"),
    ("r${x}m", f"r{S}m"),
    ("r$x'm'", f"r{S}m"),
    ('r"$x"m', f"r{S}m"),  # quoted: one word, but still any text as an argument
    ("r$(true)m", f"r{S}m"),
    ("/???/rm", f"/{S}{S}{S}/rm"),
    ("/usr/bin/r[m]", f"/usr/bin/r{S}"),
    ("{r,x}m", f"{S}m"),
    ('{r,"x"}m', f"{S}m"),  # a quoted alternative does not stop the brace expansion
    ("~/bin/rm", f"{S}/bin/rm"),
])
def test_a_word_is_its_decoded_text_with_computed_segments_as_wildcards(word: str, template: str):
    assert word_template(_words(word + " x")[0]) == template


def test_braces_that_bash_does_not_expand_stay_text():
    assert word_template(_words("find . -exec ls {} +")[4]) == "{}"
    assert word_template(_words("echo '{r,x}'m")[1]) == "{r,x}m"


@pytest.mark.parametrize(("word", "names"), [
    ("/bin/rm", ("rm",)),
    ("r${x}m", (f"r{S}m", f"{S}m")),  # x=/bin/r: r/bin/rm is called rm
    ("/usr${x}m", (f"usr{S}m", f"{S}m")),  # x=/bin/r: /usr/bin/rm
    ("$dir/ls", ("ls",)),  # whatever the directory, the program is called ls
    ('"r$x"', (f"r{N}", N)),  # a quoted expansion in a name cannot split it
    ("/bin/r?", (f"r{S}",)),  # a glob never holds a /: the name starts after the last one
])
def test_a_command_word_has_every_basename_it_can_have(word: str, names: tuple[str, ...]):
    assert name_templates(_words(word + " x")[0]) == names


def test_a_name_with_many_expansions_is_one_template_that_covers_them_all():
    # each name is matched against every deny rule: their number is bounded
    word = _words('"$a".' * 200 + "z x")[0]
    assert name_templates(word) == (S + ".z",)


def test_a_command_template_drops_the_blank_of_a_wholly_computed_word():
    words = _words("git push $x origin")
    assert command_template((), words) == f"git push{S} origin"
    assert command_template((), words, "g") == f"g push{S} origin"
