"""``--mcp-config PATH`` and the trust of MCP servers, applied to a loaded configuration.

A server's ``trust = true`` counts only from a file the user chose (their own config, one named
with ``--config``, or ``--mcp-config``): a project's file was confirmed for starting its
servers, not for sparing their calls the question (``trust.project_config``).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Mapping

from minicode.trust.project_config import untrusted_project_servers
from minicode.config import Config, load_mcp_file, merge_mcp

if TYPE_CHECKING:
    from minicode.permissions.rules import SourcedRule

__all__ = ["add_mcp_config"]


def add_mcp_config(config: Config, workspace: Path, env: Mapping[str, str], extra: Path | None, *,
                   explicit: bool) -> Config:
    """``config`` with a project's server trust dropped, then ``extra``'s servers merged in
    (a relative ``extra`` is relative to the workspace, like ``--config``). ConfigError if bad."""
    config = untrusted_project_servers(config, workspace, explicit=explicit)
    if extra is not None:
        config = replace(config, mcp=merge_mcp(config.mcp, load_mcp_file(workspace / extra, env)))
    return replace(config, permissions=(*config.permissions, *_trust_rules(config)))


def _trust_rules(config: Config) -> list[SourcedRule]:
    """A trusted server is an allow rule ``mcp(NAME__*)`` of the file that trusts it (a deny
    rule still wins, as for every allow rule)."""
    from minicode.permissions.rules import Effect, Origin, SourcedRule, parse_rule

    return [SourcedRule(parse_rule(f"mcp({server.name}__*)"), Effect.ALLOW, Origin.USER, server.file)
            for server in config.mcp if server.trust and not server.disabled]
