"""The system prompt and the tool declarations: within the budget, every SPEC 4 point stated,
each thing said once (issue 16 item 5)."""

from __future__ import annotations

import re
from pathlib import Path

from minicode.agent.prompt import PROMPT_BUDGET_TOKENS, system_prompt
from minicode.tokens import estimate_text, estimate_tools
from minicode.tools.registry import default_registry

WORKSPACE = Path("/home/someone/projects/an-ordinary-project")


def test_prompt_and_tools_stay_within_the_budget() -> None:
    specs = default_registry().specs()
    assert [s.name for s in specs][-3:] == ["agent", "ask_user", "todo"] and len(specs) == 10  # the seven, agent, ask_user, todo
    used = estimate_text(system_prompt(WORKSPACE, specs)) + estimate_tools(specs)
    assert used <= PROMPT_BUDGET_TOKENS, (
        f"system prompt + tool declarations = {used} estimated tokens, over the budget of "
        f"{PROMPT_BUDGET_TOKENS}: say it shorter, or once, where the model reads it"
    )


def test_the_prompt_states_what_spec_4_asks_for() -> None:
    text = " ".join(system_prompt(WORKSPACE, default_registry().specs()).split())
    # the workspace by name, not by its absolute path (a path would change the cached prefix per workspace)
    assert str(WORKSPACE) not in text and "relative to the workspace" in text
    for point in ("write, edit and bash wait for the user's approval", "permission rule",
                  "denied call", "read the relevant code before changing it", "running the tests",
                  "truthful report", "never claim a check you did not run", "Project memory"):
        assert point.lower() in text.lower(), point


def test_each_thing_is_said_once() -> None:
    """No run of six words appears in two places (the prompt, a tool, a parameter)."""
    specs = default_registry().specs()
    texts = {"system prompt": system_prompt(WORKSPACE, specs)}
    for spec in specs:
        texts[spec.name] = spec.description
        for name, schema in spec.parameters.get("properties", {}).items():
            if "description" in schema:
                texts[f"{spec.name}.{name}"] = schema["description"]
    seen: dict[tuple[str, ...], str] = {}
    repeated = []
    for where, text in texts.items():
        words = re.findall(r"[a-z0-9_./*]+", text.lower())
        for i in range(len(words) - 5):
            shingle = tuple(words[i : i + 6])
            if seen.setdefault(shingle, where) != where:
                repeated.append(f"{' '.join(shingle)!r} in {seen[shingle]} and {where}")
    assert repeated == []


def test_a_request_without_tools_does_not_promise_any() -> None:
    text = system_prompt(WORKSPACE, ())
    assert "No tools" in text and "Approval:" not in text
