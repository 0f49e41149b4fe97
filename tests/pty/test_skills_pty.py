"""/skills in the full screen (a real pseudo-terminal, the real executable): the skills with
where each comes from, and the malformed one named at the start and in the list."""

from __future__ import annotations

from pathlib import Path
from typing import Callable

from tests.pty.conftest import Term
from tests.support.fake_openai import Reply

Start = Callable[..., Term]


def _skill(folder: Path, name: str, front: str, body: str = "steps\n") -> None:
    (folder / name).mkdir(parents=True)
    (folder / name / "SKILL.md").write_text(f"---\n{front}---\n{body}")


def test_slash_skills_lists_the_skills_and_what_was_skipped(term_factory: Start, tmp_path: Path) -> None:
    ws = tmp_path / "ws"  # the workspace term_factory starts minicode in (tests/pty/conftest.py)
    _skill(ws / ".agents/skills", "deploy", "name: deploy\ndescription: Deploy the site to staging.\n")
    _skill(ws / ".agents/skills", "broken", "name: broken\n")
    _skill(tmp_path / ".claude/skills", "review", "name: review\ndescription: Review a change.\n")
    t = term_factory()
    t.wait_text("broken/SKILL.md is skipped")  # the opening warnings
    t.send_line("/skills")
    t.wait_text("2 skills, loaded by the model")
    screen = " ".join(t.screen.text().split())
    assert "deploy project (.agents/skills), from the repository: untrusted — Deploy the site to staging." in screen
    assert "review user (~/.claude/skills) — Review a change." in screen
    assert "! skill .agents/skills/broken/SKILL.md is skipped: its front matter has no description" in screen
    assert t.server.requests == []
    t.server.script(Reply.text("answered"))  # the session goes on as usual
    t.send_line("hello")
    t.wait_answered("answered")
    assert t.server.requests[0].body["tools"][-1]["function"]["name"] == "skill"
    t.send_line("/exit")
    out = t.finish()
    assert "EXIT=0" in out, out[-3000:]
