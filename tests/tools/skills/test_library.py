"""Discovery: the four directories, precedence (user over project), hostile files skipped with a notice."""

from __future__ import annotations

import os
from pathlib import Path

from minicode.tools.skills.library import MAX_SKILLS, SKILL_MAX_BYTES, discover_skills, skill_roots
from tests.tools.skills.conftest import Places


def test_all_four_places_are_read_and_sorted_by_name(places: Places) -> None:
    places.skill("~/.config/minicode/skills", "delta")
    places.skill("~/.claude/skills", "charlie")
    places.skill(".agents/skills", "bravo")
    places.skill(".claude/skills", "alpha")
    library = discover_skills(places.workspace, places.env)
    assert [(s.name, s.origin) for s in library.skills] == [
        ("alpha", "project (.claude/skills)"), ("bravo", "project (.agents/skills)"),
        ("charlie", "user (~/.claude/skills)"), ("delta", "user (~/.config/minicode/skills)")]
    assert library.notices == ()
    assert library.get("bravo").location == ".agents/skills/bravo"  # type: ignore[union-attr]
    assert library.get("charlie").location == str(places.home / ".claude/skills/charlie")  # type: ignore[union-attr]


def test_nothing_anywhere_is_no_skill_and_no_notice(places: Places) -> None:
    library = discover_skills(places.workspace, places.env)
    assert library.skills == () and library.notices == ()
    assert [r.label for r in library.roots] == ["~/.config/minicode/skills", "~/.claude/skills", ".agents/skills",
                                                ".claude/skills"]


def test_xdg_config_home_moves_the_minicode_directory_and_a_relative_one_is_ignored(places: Places,
                                                                                    tmp_path: Path) -> None:
    xdg = tmp_path / "xdg"
    (xdg / "minicode/skills/mine").mkdir(parents=True)
    (xdg / "minicode/skills/mine/SKILL.md").write_text("---\nname: mine\ndescription: d\n---\n")
    library = discover_skills(places.workspace, {**places.env, "XDG_CONFIG_HOME": str(xdg)})
    assert [(s.name, s.root.label) for s in library.skills] == [("mine", str(xdg / "minicode/skills"))]
    relative = skill_roots(places.workspace, {**places.env, "XDG_CONFIG_HOME": "rel"})
    assert relative[0].label == "~/.config/minicode/skills"
    assert [r.label for r in skill_roots(places.workspace, {})] == [".agents/skills", ".claude/skills"]
    assert [r.label for r in skill_roots(places.workspace, {"HOME": "home"})] == [".agents/skills", ".claude/skills"]


def test_a_user_skill_wins_over_a_project_skill_of_the_same_name_with_a_notice(places: Places) -> None:
    places.skill(".agents/skills", "deploy", "The repository's deploy.")
    places.skill(".claude/skills", "deploy", "The other project copy.")
    places.skill("~/.claude/skills", "deploy", "The user's own deploy.")
    library = discover_skills(places.workspace, places.env)
    assert [(s.name, s.description, s.root.label) for s in library.skills] == [
        ("deploy", "The user's own deploy.", "~/.claude/skills")]
    assert library.notices == (
        "skill deploy in .agents/skills is not used: the one in ~/.claude/skills has the same name "
        "(user skills win over project ones)",
        "skill deploy in .claude/skills is not used: the one in ~/.claude/skills has the same name "
        "(user skills win over project ones)")


def test_agents_skills_win_over_claude_skills_in_the_project(places: Places) -> None:
    places.skill(".claude/skills", "lint", "claude copy")
    places.skill(".agents/skills", "lint", "agents copy")
    library = discover_skills(places.workspace, places.env)
    assert [s.description for s in library.skills] == ["agents copy"] and len(library.notices) == 1


def test_invalid_front_matter_is_a_notice_naming_the_file_and_the_rest_still_loads(places: Places) -> None:
    places.skill(".agents/skills", "good")
    places.skill(".agents/skills", "bad", front_name="Bad_Name")
    (places.workspace / ".agents/skills/nofront").mkdir()
    (places.workspace / ".agents/skills/nofront/SKILL.md").write_text("# just markdown\n")
    library = discover_skills(places.workspace, places.env)
    assert [s.name for s in library.skills] == ["good"]
    assert library.notices[0].startswith("skill .agents/skills/bad/SKILL.md is skipped: name 'Bad_Name' is not")
    assert library.notices[1] == ("skill .agents/skills/nofront/SKILL.md is skipped: it does not start with front "
                                  "matter (a '---' line, then name: and description:)")


def test_hostile_files_are_skipped_with_what_is_wrong(places: Places, tmp_path: Path) -> None:
    root = places.workspace / ".agents/skills"
    places.skill(".agents/skills", "huge", body="x" * SKILL_MAX_BYTES)
    places.skill(".agents/skills", "binary")
    (root / "binary/SKILL.md").write_bytes(b"---\nname: binary\ndescription: d\n---\n\0\0\0")
    places.skill(".agents/skills", "latin")
    (root / "latin/SKILL.md").write_bytes(b"---\nname: latin\ndescription: caf\xe9\n---\n")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "SKILL.md").write_text("---\nname: escape\ndescription: secret\n---\n")
    os.symlink(outside, root / "escape")  # a skill folder that is a link out of the workspace
    (root / "fifo").mkdir()
    os.mkfifo(root / "fifo/SKILL.md")  # never blocked on
    (root / "plain-file").write_text("not a folder")  # ignored: only folders are skills
    (root / "helper").mkdir()  # a folder without SKILL.md is not a skill: nothing said
    (root / ".hidden").mkdir()
    places.skill(".agents/skills", "fine")
    library = discover_skills(places.workspace, places.env)
    assert [s.name for s in library.skills] == ["fine"]
    said = "\n".join(library.notices)
    assert f"skill .agents/skills/huge/SKILL.md is skipped: it is {SKILL_MAX_BYTES + 45:,} bytes; the limit is {SKILL_MAX_BYTES:,}" in said
    assert "skill .agents/skills/binary/SKILL.md is skipped: it is binary" in said
    assert "skill .agents/skills/latin/SKILL.md is skipped: it is not UTF-8 text (a bad byte at offset 32)" in said
    assert "skill .agents/skills/escape/SKILL.md is skipped:" in said and "outside" in said
    assert "skill .agents/skills/fifo/SKILL.md is skipped: it is not a regular file" in said
    assert len(library.notices) == 5


def test_a_skill_linked_inside_the_workspace_is_read_from_where_it_leads(places: Places) -> None:
    shared = places.workspace / "shared" / "tidy"
    shared.mkdir(parents=True)
    (shared / "SKILL.md").write_text("---\nname: tidy\ndescription: Tidy up.\n---\nbody\n")
    (places.workspace / ".agents/skills").mkdir(parents=True)
    os.symlink("../../shared/tidy", places.workspace / ".agents/skills/tidy")
    library = discover_skills(places.workspace, places.env)
    assert [(s.name, s.folder) for s in library.skills] == [("tidy", "shared/tidy")]


def test_a_skills_directory_that_leads_out_of_the_workspace_is_a_notice(places: Places, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / "x").mkdir(parents=True)
    (elsewhere / "x/SKILL.md").write_text("---\nname: x\ndescription: d\n---\n")
    (places.workspace / ".agents").mkdir()
    os.symlink(elsewhere, places.workspace / ".agents/skills")
    library = discover_skills(places.workspace, places.env)
    assert library.skills == ()
    assert library.notices[0].startswith("skills in .agents/skills are not read:")


def test_at_most_max_skills_are_kept(places: Places) -> None:
    for i in range(MAX_SKILLS + 3):
        places.skill("~/.claude/skills", f"s{i:03d}")
    library = discover_skills(places.workspace, places.env)
    assert len(library.skills) == MAX_SKILLS
    assert library.notices == (f"3 skill(s) not used: at most {MAX_SKILLS} are",)
