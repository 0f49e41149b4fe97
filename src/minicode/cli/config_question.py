"""The question ``trust.project_config`` has the user answer about a project's config file.

The gate decides what needs the user's word (``trust.project_config.Grants``); the words and how
the file's values are shown are the terminal's (``reveal``: a command or a rule from the file may
hide what it does with escape sequences, blank lines or invisible characters). Stdlib only.
"""

from __future__ import annotations

from minicode.cli.frontends.shared.shown_call import reveal, squeeze_spaces
from minicode.config import WORKSPACE_CONFIG
from minicode.trust.project_config import Grants, shown_url

__all__ = ["config_question"]


def config_question(grants: Grants) -> str:
    """The question about ``grants``: the clauses with the commands and rules themselves, shown
    harmlessly on a terminal, and what to answer."""

    def shown(command: str) -> str:  # one line each: blank lines or spaces must not push a part out of view
        return squeeze_spaces(reveal(command.replace("\n", "\u2424")))

    lines = []
    if grants.key:
        lines.append(f"sends your API key (from ${grants.var}) to {reveal(shown_url(grants.base_url))}")
    if grants.checks:
        lines.append("runs these commands when a task ends, without asking:")
        lines += [f"    {shown(command)}" for command in grants.checks]
    if grants.allow:
        lines.append("allows these calls without asking: " + ", ".join(reveal(rule) for rule in grants.allow))
    if grants.server:
        lines.append(f"sends your prompts, and every file the model reads here, to {reveal(shown_url(grants.base_url))}"
                     " (its answers decide the calls)")
    if grants.mcp:
        lines.append("starts or connects to these MCP servers (the model may call their tools):")
        lines += [f"    {reveal(name)}: {shown(what)}" for name, what in grants.mcp]
    if grants.hooks:
        lines.append("runs these hook commands before and after calls and at each prompt and answer, without asking:")
        lines += [f"    {shown(hook)}" for hook in grants.hooks]
    return (f"{WORKSPACE_CONFIG} in this project:\n  " + "\n  ".join(lines) + "\n"
            "Use it? Answer yes only if you wrote this file or trust whoever did. [y/N] ")
