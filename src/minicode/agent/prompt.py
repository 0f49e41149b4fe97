"""The system prompt, generated at run time from the tools (never stored).

It names no absolute path: with chat templates that put the tool declarations after the
system text (Qwen's, llama.cpp ``--jinja``), a path there would make every new workspace
re-evaluate the whole prefix on a local server (~1,200 tokens, ~14 s on 2 cores). Pure: it
states the tools, the approval rules, the working method and the
project-memory rules (SPEC 4 and 8), and stays short.
"""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

from minicode.memory import MEMORY_RULES
from minicode.provider.types import Message, ToolSpec

__all__ = ["PROMPT_BUDGET_TOKENS", "SUBAGENT_PROMPT", "system_message", "system_prompt"]

PROMPT_BUDGET_TOKENS = 1500
"""Issues 16 and 27: the system prompt plus the declarations of every tool declared by default,
by the project's token estimate (``tokens.py``), sent with every request. pi spends 1,314 on
four tools."""

# This prompt and the tool declarations together stay within PROMPT_BUDGET_TOKENS
# (tests/agent/test_prompt_budget.py). Say each thing once, where the model reads it: how a
# tool behaves goes in its description, what holds for every task goes here.
_APPROVAL = """\
Approval: write, edit and bash wait for the user's approval (per call or for the session) \
unless a permission rule decides; the other tools run at once. A denied call says why: respect \
it; never retry it unasked or reword a command to get around it. Commands run with the user's \
rights: nothing destructive the task does not need."""

_MCP = """\
MCP servers' tools (server__tool, listed by mcp_tools) wait for approval too, unless a rule or \
the user's trust decides."""

_METHOD = """\
Method: act, don't advise — make changes with the tools instead of showing code for the user \
to apply. Read the relevant code before changing it or answering about it; never guess a \
file's content or a command's output. Verify changes by running the tests, the build or the \
program. Tool errors are information: fix the cause and go on. End with a short, truthful report: files changed, how you verified them and \
the result, what is left undone or unverified. Never claim a check you did not run."""


_SMALL_METHOD = """\
Method: act, don't advise — make changes with the tools instead of showing code for the user \
to apply. Read the relevant code before changing it or answering about it; never guess a \
file's content or a command's output. Verify changes by running the tests or the program. Tool \
errors are information: fix the cause and go on. Fix the code the tests test, not the tests, \
unless the task asks to change tests. When the task is a question, reply with its answer in one \
sentence: the number, the name or the value the tools showed. When the task was a change, reply \
in one or two sentences saying what changed and how you checked it. Never claim a check you did \
not run. Run no git command (commit, push, clone) the task does not ask for."""


def system_prompt(workspace: Path, tools: Sequence[ToolSpec], *, memory_rules: bool = True,
                  small_model: bool = False) -> str:
    """The full system prompt text for a session in ``workspace`` offering ``tools``;
    ``small_model``: the small-model assists' method instead of the usual one."""
    return "\n\n".join(
        [
            "You are minicode, a coding agent in the user's terminal: solve their coding task with "
            "the tools, then answer in Markdown.",
            "Paths are relative to the workspace, the directory commands run in (absolute paths "
            "inside it work too); file tools cannot leave it and skip .git and ignored files.",
            _APPROVAL if tools else "No tools are available for this answer.",
            *([_MCP] if any(spec.name == "mcp_tools" for spec in tools) else []),
            _SMALL_METHOD if small_model else _METHOD,
            *([MEMORY_RULES] if memory_rules else []),
        ]
    )


def system_message(workspace: Path, tools: Sequence[ToolSpec], *, small_model: bool = False) -> Message:
    """The system message; ``small_model`` (the small-model assists, agent/assists.py): without
    the memory rules (they sent a 1.5B model to .minicode/memory), with the rules it breaks most
    in the method — the usual report's four headings it copied into answers to questions
    ("Files changed: calc/core.py … The result: 120"), a long report ended in a loop, and
    unasked it committed, pushed, and cloned ``https://github.com/your-repo.git``."""
    if small_model and tools:
        return Message.system(system_prompt(workspace, tools, memory_rules=False, small_model=True))
    return Message.system(system_prompt(workspace, tools))


SUBAGENT_PROMPT = """\
You are a sub-agent of minicode, a coding agent: it handed you one self-contained task. Paths \
are relative to the workspace; your tools only read it. Read the relevant files before you \
answer; never guess their content. Your final answer is your report, and all minicode sees \
of your work: what it asked for, concretely (paths, line numbers, names), and what you could \
not find or check."""
"""The system prompt of a sub-agent (``agent.subagent``): the task is its only other message."""
