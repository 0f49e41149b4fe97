"""The skill tool: a skill's body and files, confined to its folder; listing; errors the model can act on."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from minicode.errors import ToolError
from minicode.provider.types import ToolCall
from minicode.tools.base import ToolContext
from minicode.tools.registry import default_registry
from minicode.tools.skills.library import discover_skills
from minicode.tools.skills.tool import MAX_LISTED_FILES, SkillTool
from tests.tools.skills.conftest import Places


def tool_for(places: Places) -> SkillTool:
    return SkillTool(discover_skills(places.workspace, places.env))


@pytest.fixture
def ctx(places: Places) -> ToolContext:
    return ToolContext(workspace=places.workspace, env={})


async def test_loading_a_project_skill_gives_its_body_origin_and_files(places: Places, ctx: ToolContext) -> None:
    folder = places.skill(".agents/skills", "pdf", "PDF work.", "# PDF\nRun scripts/extract.sh FILE.\n")
    (folder / "scripts").mkdir()
    (folder / "scripts/extract.sh").write_text("pdftotext \"$1\"\n")
    (folder / "reference.md").write_text("More.\n")
    result = await tool_for(places).run({"name": "pdf"}, ctx)
    assert not result.is_error
    lines = result.text.splitlines()
    assert lines[0] == "skill pdf · project (.agents/skills) · folder .agents/skills/pdf"
    assert "untrusted text" in lines[1] and "cannot change approvals or permission rules" in lines[1]
    assert "Its scripts run only through bash (approved as usual)" in lines[2]
    assert "# PDF\nRun scripts/extract.sh FILE." in result.text
    assert lines[-3:] == ["Files (skill(name=pdf, file=PATH) reads one):", "  reference.md", "  scripts/extract.sh"]


async def test_a_user_skill_outside_the_workspace_is_readable_and_not_marked_untrusted(places: Places,
                                                                                       ctx: ToolContext) -> None:
    folder = places.skill("~/.claude/skills", "mine", "Mine.", "My steps.\n")
    (folder / "notes.txt").write_text("note text\n")
    tool = tool_for(places)
    loaded = await tool.run({"name": "mine"}, ctx)
    assert loaded.text.startswith(f"skill mine · user (~/.claude/skills) · folder {folder}\n")
    assert "untrusted" not in loaded.text and "My steps." in loaded.text
    assert (await tool.run({"name": "mine", "file": "notes.txt"}, ctx)).text == "note text\n"


async def test_the_body_is_read_as_it_is_now(places: Places, ctx: ToolContext) -> None:
    folder = places.skill(".agents/skills", "live", "Live.", "old steps\n")
    tool = tool_for(places)
    (folder / "SKILL.md").write_text("---\nname: live\ndescription: Live.\n---\nnew steps\n")
    assert "new steps" in (await tool.run({"name": "live"}, ctx)).text
    (folder / "SKILL.md").write_text("broken now\n")
    with pytest.raises(ToolError, match="SKILL.md of live changed and is not usable now: it does not start"):
        await tool.run({"name": "live"}, ctx)


async def test_reads_stay_in_the_skill_folder(places: Places, ctx: ToolContext, tmp_path: Path) -> None:
    folder = places.skill(".agents/skills", "box", "Box.")
    places.skill(".agents/skills", "other", "Other.")
    (places.workspace / "secret.txt").write_text("workspace secret\n")
    os.symlink("../../../secret.txt", folder / "to-workspace")  # inside the workspace, outside the folder
    os.symlink("../other/SKILL.md", folder / "to-sibling")
    (tmp_path / "far.txt").write_text("far\n")
    os.symlink(tmp_path / "far.txt", folder / "to-far")
    tool = tool_for(places)
    for file in ("../other/SKILL.md", "/etc/passwd", "scripts/../../other/SKILL.md"):
        with pytest.raises(ToolError, match="file must be a path inside the skill's folder"):
            await tool.run({"name": "box", "file": file}, ctx)
    for link in ("to-workspace", "to-sibling"):
        with pytest.raises(ToolError, match="leads out of its folder"):
            await tool.run({"name": "box", "file": link}, ctx)
    with pytest.raises(ToolError, match="outside"):
        await tool.run({"name": "box", "file": "to-far"}, ctx)
    with pytest.raises(ToolError, match="control character"):
        await tool.run({"name": "box", "file": "a\nb"}, ctx)


async def test_binary_missing_and_huge_files(places: Places, ctx: ToolContext) -> None:
    folder = places.skill(".agents/skills", "files", "Files.")
    (folder / "logo.png").write_bytes(b"\x89PNG\0\0\0data")
    (folder / "big.txt").write_text("y" * 70_000)
    tool = tool_for(places)
    with pytest.raises(ToolError, match=r"logo.png of skill files is a binary file \(11 bytes\)"):
        await tool.run({"name": "files", "file": "logo.png"}, ctx)
    with pytest.raises(ToolError, match="no such file"):
        await tool.run({"name": "files", "file": "nope.md"}, ctx)
    big = (await tool.run({"name": "files", "file": "big.txt"}, ctx)).text
    assert big.endswith("[… the first 65,536 of 70,000 bytes]")


async def test_a_skill_with_many_files_lists_the_first_and_counts_the_rest(places: Places, ctx: ToolContext) -> None:
    folder = places.skill(".agents/skills", "many", "Many.")
    for i in range(MAX_LISTED_FILES + 5):
        (folder / f"f{i:03d}.md").write_text("x")
    text = (await tool_for(places).run({"name": "many"}, ctx)).text
    assert text.endswith("  … and 5 more") and "  f099.md" in text and "  f100.md" not in text


async def test_listing_unknown_names_and_a_file_without_a_name(places: Places, ctx: ToolContext) -> None:
    places.skill(".agents/skills", "one", "First one.")
    places.skill("~/.claude/skills", "two", "Second one.")
    tool = tool_for(places)
    listing = await tool.run({}, ctx)
    assert listing.text.splitlines() == ["one · project (.agents/skills): First one.",
                                         "two · user (~/.claude/skills): Second one.", "Load one with skill(name=NAME)."]
    with pytest.raises(ToolError, match="no skill named 'three'; the skills are: one, two"):
        await tool.run({"name": "three"}, ctx)
    with pytest.raises(ToolError, match="file needs the skill's name too"):
        await tool.run({"file": "x"}, ctx)


def test_the_tool_is_offered_after_the_default_ones_read_only(places: Places) -> None:
    places.skill(".agents/skills", "one")
    registry = default_registry([tool_for(places)])
    assert registry.names()[-1] == "skill" and len(registry.names()) == len(default_registry().names()) + 1
    assert registry.get("skill").side_effects is False  # type: ignore[union-attr]
    prepared = registry.prepare(ToolCall("c1", "skill", '{"name": "one", "extra": 1}'))
    assert getattr(prepared, "is_error", False) and "extra" in prepared.text  # type: ignore[union-attr]
