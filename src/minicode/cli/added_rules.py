"""Permission rules from outside the chosen configuration file: the per-user file's
``[permissions]`` (project rules add to the user's, whichever file configures the model)
and ``--allow``/``--deny`` for one run; the per-user file's ``[[hooks.*]]`` likewise.

Strict like the configuration: a bad rule anywhere stops the start (exit 2) with the file
(or flag), the key and the entry. Standard library and ``minicode`` modules only.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from minicode.config import Config, is_present, user_config_path
from minicode.errors import ConfigError
from minicode.tomlfile import read_toml

if TYPE_CHECKING:  # the rule parser loads only when there are rules to parse
    from minicode.permissions.rules import SourcedRule

__all__ = ["add_rules"]


def add_rules(config: Config, env: Mapping[str, str], allow: Sequence[str], deny: Sequence[str]) -> Config:
    """``config`` with the per-user file's rules and the command line's added."""
    flags = [*_flag_rules("--allow", allow, deny=False), *_flag_rules("--deny", deny, deny=True)]
    user = user_config_path(env)
    user_rules: list[SourcedRule] = []
    files, hooks = config.rule_files, config.hooks
    if user is not None and is_present(user) and not _same_file(user, config.path):
        data = read_toml(user)
        if "permissions" in data:
            from minicode.permissions.rules import Origin, rules_from_table

            user_rules = rules_from_table(data["permissions"], str(user), Origin.USER, user)
        if "hooks" in data:  # the user's hooks run in every project, before the project's own
            from minicode.hooks.spec import parse_hooks

            hooks = (*parse_hooks(user, data["hooks"]), *hooks)
        files = (*files, user)
    return replace(config, permissions=(*flags, *config.permissions, *user_rules), rule_files=files, hooks=hooks)


def _flag_rules(flag: str, texts: Sequence[str], *, deny: bool) -> list[SourcedRule]:
    if not texts:
        return []
    from minicode.permissions.rules import Effect, Origin, RuleError, SourcedRule, parse_rule

    effect = Effect.DENY if deny else Effect.ALLOW
    found = []
    for text in texts:
        try:
            found.append(SourcedRule(parse_rule(text), effect, Origin.COMMAND_LINE))
        except RuleError as e:
            raise ConfigError(f"{flag} {text!r}: {e}") from None
    return found


def _same_file(a: Path, b: Path) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return os.path.abspath(a) == os.path.abspath(b)
