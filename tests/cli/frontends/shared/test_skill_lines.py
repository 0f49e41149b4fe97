"""/skills' lines: one per skill (project ones marked untrusted), descriptions cut to one line, notices after."""

from __future__ import annotations

from pathlib import Path

from minicode.cli.frontends.shared.skill_lines import skill_lines
from minicode.tools.skills.library import Skill, SkillLibrary, SkillRoot

PROJECT = SkillRoot(".agents/skills", Path("/ws"), ".agents/skills", project=True)
USER = SkillRoot("~/.claude/skills", Path("/home/u/.claude/skills"), ".", project=False)


def test_each_skill_with_its_origin_and_a_one_line_description() -> None:
    library = SkillLibrary((Skill("a", "x" * 300, PROJECT, ".agents/skills/a"), Skill("longer-name", "Two\nlines.", USER,
                                                                                    "longer-name")),
                           ("skill b in .agents/skills is not used: …",), (USER, PROJECT))
    lines = skill_lines(library)
    assert lines[0].startswith("2 skills, loaded by the model with the skill tool when one fits")
    assert lines[1] == "  a            project (.agents/skills), from the repository: untrusted — " + "x" * 99 + "…"
    assert lines[2] == "  longer-name  user (~/.claude/skills) — Two lines."
    assert lines[3] == "  ! skill b in .agents/skills is not used: …"


def test_no_skills_names_where_it_looked_and_what_was_wrong() -> None:
    lines = skill_lines(SkillLibrary((), ("skill .claude/skills/x/SKILL.md is skipped: binary",), (USER, PROJECT)))
    assert lines == ["no skills (looked in ~/.claude/skills, .agents/skills; docs/skills.md)",
                     "  ! skill .claude/skills/x/SKILL.md is skipped: binary"]
    assert skill_lines(SkillLibrary())[0].startswith("no skills (looked in no skill directory")
