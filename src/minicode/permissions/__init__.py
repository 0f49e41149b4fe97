"""Permission rules: which side-effect calls run without asking, which never run.

``rules`` (the ``tool(pattern)`` syntax, strict ``[permissions]`` tables), ``patterns``
(command and path matchers), ``shell``/``shell_words`` (our own bash parser), ``wrappers``
and ``bash_check`` (every command a bash string runs), ``suggest`` (the rule "always allow"
offers), ``policy`` (the verdict for one call; pure but for ``realpath``), ``listing``
(rows for ``/permissions``) and ``store`` (the rules in effect and the workspace's rules
file). Knows nothing of tools, providers, sessions or terminals (tests/test_architecture.py).

The names below are loaded on first use: ``config`` imports ``permissions.rules`` at every
start, and must not pay for the bash parser until a session checks a call.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from minicode.permissions.policy import PermissionPolicy
    from minicode.permissions.verdict import Outcome, Verdict
    from minicode.permissions.rules import Effect, Origin, Rule, RuleError, SourcedRule, parse_rule
    from minicode.permissions.store import PROJECT_RULES_FILE, PermissionStore

__all__ = [
    "PROJECT_RULES_FILE",
    "Effect",
    "Origin",
    "Outcome",
    "PermissionPolicy",
    "PermissionStore",
    "Rule",
    "RuleError",
    "SourcedRule",
    "Verdict",
    "parse_rule",
]

_HOMES = {
    "Outcome": "verdict", "PermissionPolicy": "policy", "Verdict": "verdict",
    "Effect": "rules", "Origin": "rules", "Rule": "rules", "RuleError": "rules", "SourcedRule": "rules",
    "parse_rule": "rules", "PROJECT_RULES_FILE": "store", "PermissionStore": "store",
}


def __getattr__(name: str) -> Any:
    if name not in _HOMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{_HOMES[name]}"), name)
