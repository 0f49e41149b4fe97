"""``/skills``: the session's skills as lines, the same in the full screen and in pipe mode.

One line per skill (name, where it comes from, its description cut to one line), then what
was skipped and why (``SkillLibrary.notices``). Project skills say that they come with the
repository and are untrusted. The text comes from files: the frontend shows it with
``shown_call.reveal`` (escape sequences and invisible characters made visible). Stdlib only.
"""

from __future__ import annotations

from minicode.tools.skills.library import SkillLibrary

__all__ = ["skill_lines"]

_DESCRIPTION_CHARS = 100


def skill_lines(library: SkillLibrary) -> list[str]:
    """What ``/skills`` says about ``library``."""
    if not library.skills:
        places = ", ".join(root.label for root in library.roots) or "no skill directory (no HOME, no workspace)"
        lines = [f"no skills (looked in {places}; docs/skills.md)"]
    else:
        count = len(library.skills)
        lines = [f"{count} skill{'' if count == 1 else 's'}, loaded by the model with the skill tool when one fits "
                 "(read when the session opened; a new session sees changes):"]
        width = max(len(s.name) for s in library.skills)
        for skill in library.skills:
            where = skill.origin + (", from the repository: untrusted" if skill.root.project else "")
            description = " ".join(skill.description.split())
            if len(description) > _DESCRIPTION_CHARS:
                description = description[: _DESCRIPTION_CHARS - 1].rstrip() + "…"
            lines.append(f"  {skill.name:<{width}}  {where} — {description}")
    lines += [f"  ! {notice}" for notice in library.notices]
    return lines
