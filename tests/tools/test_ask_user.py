"""The ask_user tool: bounds on what is asked, the asking hook, no hook: no answer."""

from __future__ import annotations

from pathlib import Path

from minicode.tools.ask_user import AskUserTool, checked
from minicode.tools.base import ToolContext, ToolResult


def test_the_question_and_options_are_cleaned_for_a_person() -> None:
    assert checked({"question": "  Which one?\n", "options": ["a\nb", "  c   d "]}) == ("Which one?", ("a b", "c d"))
    assert checked({"question": "Free?"}) == ("Free?", ())
    assert checked({"question": "Free?", "options": []}) == ("Free?", ())


def test_what_cannot_be_asked_says_what_to_do() -> None:
    assert "the question is empty" in str(checked({"question": "  \n"}))
    assert "at most 2,000" in str(checked({"question": "q" * 2001}))
    assert "10 options; offer at most 9" in str(checked({"question": "q", "options": list("abcdefghij")}))
    assert "option 2 is empty" in str(checked({"question": "q", "options": ["a", " "]}))
    assert "option 1 has 121 characters" in str(checked({"question": "q", "options": ["x" * 121]}))
    assert "option 2 repeats option 1" in str(checked({"question": "q", "options": ["yes", " yes"]}))


def test_the_preview_is_the_question_on_one_line_and_bounded() -> None:
    preview = AskUserTool().preview({"question": "Which\n  database?"})
    assert (preview.target, preview.detail) == ("", "Which database?")
    assert len(AskUserTool().preview({"question": "x" * 5000}).detail) == 200


async def test_the_hook_gets_the_checked_question(tmp_path: Path) -> None:
    asked = []

    async def ask(question: str, options: tuple[str, ...]) -> ToolResult:
        asked.append((question, options))
        return ToolResult("The user answered: 42", summary="answered")

    ctx = ToolContext(workspace=tmp_path, env={}, ask=ask)
    result = await AskUserTool().run({"question": " Why? ", "options": ["a"]}, ctx)
    assert asked == [("Why?", ("a",))] and result.text == "The user answered: 42"


async def test_no_hook_is_no_answer_and_a_bad_question_an_error(tmp_path: Path) -> None:
    ctx = ToolContext(workspace=tmp_path, env={})
    result = await AskUserTool().run({"question": "Why?"}, ctx)
    assert not result.is_error and result.text.startswith("No answer available") and result.summary == "no answer"
    bad = await AskUserTool().run({"question": ""}, ctx)
    assert bad.is_error and "empty" in bad.text
