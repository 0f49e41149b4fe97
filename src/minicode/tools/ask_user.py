"""The ``ask_user`` tool: the model's question put to the person at the frontend.

The tool bounds what a person is shown (the model's arguments are untrusted: a question of a
megabyte, five hundred options) and refuses what cannot be asked with a message the model
can act on; the asking itself is ``ToolContext.ask``, which the agent loop fills in with the
frontend's ``Asker`` (``agent.asking``). Without it nobody can be asked: "no answer" at once.
Not a side effect: nothing changes, so no approval is needed.
"""

from __future__ import annotations

from typing import Any, Mapping

from minicode.tools.base import ToolContext, ToolPreview, ToolResult
from minicode.tools.specs import ASK_USER

__all__ = ["MAX_OPTIONS", "MAX_OPTION_CHARS", "MAX_QUESTION_CHARS", "AskUserTool", "checked"]

MAX_QUESTION_CHARS = 2000
"""A question longer than this is refused: a person reads it in a panel, not a file."""
MAX_OPTIONS = 9
"""Options are chosen with the digits 1-9 (and "other…" is always offered besides)."""
MAX_OPTION_CHARS = 120
_DETAIL_CHARS = 200


def checked(args: Mapping[str, Any]) -> tuple[str, tuple[str, ...]] | str:
    """The question and its options as a person is shown them (stripped; blank lines at the
    ends dropped), or why they cannot be asked."""
    question = str(args.get("question", "")).strip()
    if not question:
        return "ask_user: the question is empty; write the question in 'question'"
    if len(question) > MAX_QUESTION_CHARS:
        return (f"ask_user: the question has {len(question):,} characters; ask it in at most "
                f"{MAX_QUESTION_CHARS:,} (a sentence or two of context, then the question)")
    raw = args.get("options") or []
    if len(raw) > MAX_OPTIONS:
        return f"ask_user: {len(raw)} options; offer at most {MAX_OPTIONS} (the user can always type another answer)"
    options: list[str] = []
    for index, option in enumerate(raw, start=1):
        text = " ".join(str(option).split())  # one line: newlines and runs of spaces squeezed
        if not text:
            return f"ask_user: option {index} is empty; give each option a few words"
        if len(text) > MAX_OPTION_CHARS:
            return (f"ask_user: option {index} has {len(text):,} characters; keep each option under "
                    f"{MAX_OPTION_CHARS} (put details in the question)")
        if text in options:
            return f"ask_user: option {index} repeats option {options.index(text) + 1}; offer each choice once"
        options.append(text)
    return question, tuple(options)


class AskUserTool:
    name = ASK_USER.name
    description = ASK_USER.description
    parameters = ASK_USER.parameters
    side_effects = ASK_USER.side_effects

    def preview(self, args: Mapping[str, Any]) -> ToolPreview:
        first = " ".join(str(args.get("question", "")).split())
        detail = first if len(first) <= _DETAIL_CHARS else first[: _DETAIL_CHARS - 1] + "…"
        return ToolPreview(target="", detail=detail)

    async def run(self, args: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
        asked = checked(args)
        if isinstance(asked, str):
            return ToolResult(text=asked, is_error=True, summary="invalid question")
        if ctx.ask is None:
            return ToolResult(text="No answer available: nobody can be asked here. Decide yourself and "
                              "say what you assumed.", summary="no answer")
        return await ctx.ask(*asked)
