"""Skills (issue 27 item 1): what the catalog costs per request, and what discovery costs per start.

- The ``skill`` declaration (name, schema, catalog) by the project's token estimate, for 1, 20
  and 200 skills with short (~90 characters) and longest (1,024) descriptions. Target: ≤ 600
  with 20 skills; with none nothing is declared (0).
- ``discover_skills`` wall time (median of 21) with no skill directory and with 20 skills in
  each of the four directories (80 SKILL.md files; 20 names used, 60 shadowed).

    .venv/bin/python bench/skills.py
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from minicode.provider.types import ToolSpec  # noqa: E402
from minicode.tokens import estimate_tools  # noqa: E402
from minicode.tools.skills.library import discover_skills  # noqa: E402
from minicode.tools.skills.tool import SkillTool  # noqa: E402

ROOTS = (".config/minicode/skills", ".claude/skills", "ws/.agents/skills", "ws/.claude/skills")


def write_skills(base: Path, root: str, count: int, description: str) -> None:
    for i in range(count):
        folder = base / root / f"skill-{i:03d}"
        folder.mkdir(parents=True)
        (folder / "SKILL.md").write_text(f"---\nname: skill-{i:03d}\ndescription: {description}\n---\nSteps.\n")


def declaration_tokens(count: int, description: str) -> tuple[int, int]:
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        (base / "ws").mkdir()
        write_skills(base, ".claude/skills", count, description)
        tool = SkillTool(discover_skills(base / "ws", {"HOME": tmp}))
        shown = sum(line.startswith("- ") for line in tool.description.splitlines())
        return estimate_tools([ToolSpec(tool.name, tool.description, tool.parameters)]), shown


def discovery_ms(per_root: int) -> float:
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        (base / "ws").mkdir()
        for root in ROOTS:
            write_skills(base, root, per_root, "Does one kind of task; use it when the task says so.")
        times = []
        for _ in range(21):
            start = time.perf_counter()
            discover_skills(base / "ws", {"HOME": tmp})
            times.append((time.perf_counter() - start) * 1000)
        return statistics.median(times)


def main() -> None:
    short = "Writes the release notes from the git history; use it when the user asks for a changelog."
    longest = "Handles one part of the release. " * 31  # 1,023 characters
    print("skills  descriptions  declaration tokens  skills named in the catalog")
    for count in (1, 20, 200):
        for label, text in (("short", short), ("1,024 ch", longest.strip())):
            tokens, shown = declaration_tokens(count, text)
            print(f"{count:>6}  {label:<12}  {tokens:>18,}  {shown:>4} of {count}")
    print(f"discovery, no skill directory:       {discovery_ms(0):.2f} ms")
    print(f"discovery, 4 directories x 20 skills: {discovery_ms(20):.2f} ms")


if __name__ == "__main__":
    main()
