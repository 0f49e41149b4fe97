"""The skill catalog the model sees: one line per skill, inside a token budget.

It is the ``skill`` tool's description (declared only when a skill exists), so it sits in the
request's cached prefix beside the other declarations: the same skills give the same bytes
(sorted by name, nothing that changes by itself — no time, no counts of use). The budget is
``CATALOG_BUDGET_TOKENS`` for the whole declaration (name, schema, this text). When the lines
do not fit, every description is cut to the same length (the longest that fits, with "…");
when even names alone do not fit, the first skills by name are listed and the rest counted:
"N more: call skill without a name to list them". Pure.
"""

from __future__ import annotations

from typing import Sequence

from minicode.provider.types import ToolSpec
from minicode.tokens import estimate_tools
from minicode.tools.scrub import scrub
from minicode.tools.skills.library import Skill

__all__ = ["CATALOG_BUDGET_TOKENS", "catalog_description"]

CATALOG_BUDGET_TOKENS = 600
"""Issue 27: what the skill declaration, catalog included, may add to every request (20 skills)."""
_MIN_DESCRIPTION = 24
"""Shorter than this a description says nothing: drop it and list the names."""


def catalog_description(head: str, skills: Sequence[Skill], spec: ToolSpec,
                        budget: int = CATALOG_BUDGET_TOKENS) -> str:
    """``head`` and the catalog lines of ``skills``, so that ``spec`` with it costs at most
    ``budget`` estimated tokens (only ``head`` when not even one name fits)."""

    def fits(text: str) -> bool:
        return estimate_tools([ToolSpec(spec.name, text, spec.parameters)]) <= budget

    full = [_description(s) for s in skills]
    longest = max((len(d) for d in full), default=0)
    text = _text(head, skills, full, longest)
    if fits(text):
        return text
    low, high = _MIN_DESCRIPTION, longest  # the longest cut that fits, if any does
    best: str | None = None
    while low <= high:
        middle = (low + high) // 2
        candidate = _text(head, skills, full, middle)
        if fits(candidate):
            best, low = candidate, middle + 1
        else:
            high = middle - 1
    if best is not None:
        return best
    for count in range(len(skills), 0, -1):  # names only: as many as fit, and a count of the rest
        candidate = _text(head, skills[:count], full, 0, more=len(skills) - count)
        if fits(candidate):
            return candidate
    return _text(head, (), [], 0, more=len(skills))


def _text(head: str, skills: Sequence[Skill], descriptions: Sequence[str], cut: int, more: int = 0) -> str:
    lines = [head]
    for skill, description in zip(skills, descriptions):
        mark = " [project]" if skill.root.project else ""
        shown = description if len(description) <= cut else description[: max(cut - 1, 0)].rstrip() + "…"
        lines.append(f"- {skill.name}{mark}: {shown}" if cut else f"- {skill.name}{mark}")
    if more:
        lines.append(f"{more} more: call skill without a name to list them")
    return "\n".join(lines)


def _description(skill: Skill) -> str:
    """One line of valid text (the file is untrusted: no line breaks, controls or bad Unicode)."""
    return " ".join("".join(c if c.isprintable() else " " for c in scrub(skill.description)).split())
