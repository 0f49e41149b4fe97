"""SKILL.md front matter: what real skills write is read as YAML reads it; the rest is an error naming the line."""

from __future__ import annotations

import pytest

from minicode.tools.skills.frontmatter import FrontMatterError, parse_skill


def skill(front: str, body: str = "Do the thing.\n") -> str:
    return f"---\n{front}---\n{body}"


def test_plain_values_and_the_body() -> None:
    parsed = parse_skill(skill("name: pdf-tools\ndescription: Extract text from PDFs.\n", "# PDF\nRun it.\n"), "pdf-tools")
    assert (parsed.name, parsed.description, parsed.body) == ("pdf-tools", "Extract text from PDFs.", "# PDF\nRun it.")


def test_quoted_folded_and_continued_values() -> None:
    assert parse_skill(skill('name: "a-b"\ndescription: "Say \\"hi\\" \\u00e9"\n'), "a-b").description == 'Say "hi" é'
    assert parse_skill(skill("name: 'a-b'\ndescription: 'it''s: fine' # note\n"), "a-b").description == "it's: fine"
    folded = parse_skill(skill("name: a\ndescription: >-\n  Line one\n  line two.\n\n  Para.\n"), "a")
    assert folded.description == "Line one line two.\nPara."
    literal = parse_skill(skill("name: a\ndescription: |\n  one\n  two\n"), "a")
    assert literal.description == "one\ntwo"
    continued = parse_skill(skill("name: a\ndescription: Starts here\n  and goes on. # comment\n"), "a")
    assert continued.description == "Starts here and goes on."


def test_other_keys_are_skipped_whatever_they_hold() -> None:
    front = ("name: a\nlicense: MIT\nmetadata:\n  author: x\n  version: \"1.0\"\nallowed-tools: [Bash, Read]\n"
             "# a comment\n\ndescription: Does a.\n")
    assert parse_skill(skill(front), "a").description == "Does a."


def test_a_bom_and_crlf_line_ends_are_fine() -> None:
    parsed = parse_skill("\ufeff---\r\nname: a\r\ndescription: d\r\n---\r\nbody\r\n", "a")
    assert (parsed.description, parsed.body) == ("d", "body")


@pytest.mark.parametrize(("text", "why"), [
    ("# no front matter\n", "does not start with front matter"),
    ("---\nname: a\ndescription: d\n", "no closing '---'"),
    (skill("description: d\n"), "no name"),
    (skill("name: a\n"), "no description"),
    (skill("name: a\ndescription: ''\n"), "no description"),
    (skill("name: A-b\ndescription: d\n"), "lowercase letters"),
    (skill("name: -ab\ndescription: d\n"), "lowercase letters"),
    (skill("name: a--b\ndescription: d\n"), "lowercase letters"),
    (skill("name: " + "a" * 65 + "\ndescription: d\n"), "lowercase letters"),
    (skill("name: other\ndescription: d\n"), "differs from its folder's name 'a'"),
    (skill("name: a\ndescription: " + "x" * 1025 + "\n"), "1,025 characters; the limit is 1,024"),
    (skill("name: a\nname: a\ndescription: d\n"), "line 3: name is given twice"),
    (skill("name: a\ndescription: Use when: a PR\n"), "contains ': '"),
    (skill("name: a\ndescription: [a, b]\n"), "must be a string"),
    (skill("name: a\ndescription:\n  - a\n"), "must be a string"),
    (skill("name: a\ndescription: *ref\n"), "aliases"),
    (skill("name: a\ndescription: \"open\n"), "no closing \""),
    (skill("name: a\ndescription: \"x\" y\n"), "text after its closing quote"),
    (skill("name: a\ndescription: \"\\q\"\n"), "invalid escape"),
    (skill("name: a\ndescription: |2\n  x\n"), "block indicator"),
    (skill("name: a\ndescription:\n\tx\n"), "tab"),
    (skill("  stray\nname: a\ndescription: d\n"), "line 2 is indented but belongs to no key"),
    (skill("name: a\n  stray\ndescription: d\n"), "name 'a stray' is not"),  # a continued plain value
    (skill("name: a\njust words\ndescription: d\n"), "line 3 is not 'key: value'"),
])
def test_what_is_wrong_is_said_with_the_line(text: str, why: str) -> None:
    with pytest.raises(FrontMatterError) as raised:
        parse_skill(text, "a")
    assert why in str(raised.value)


def test_front_matter_without_an_end_in_sight_is_refused_without_reading_it_all() -> None:
    text = "---\n" + "x: y\n" * 100_000
    with pytest.raises(FrontMatterError, match="no closing '---' line within 200 lines"):
        parse_skill(text, "a")
