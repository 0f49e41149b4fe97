"""``/permissions`` in the full-screen session: the rules in effect, numbered, each with the
file it comes from, ``/permissions remove N|RULE`` for a rule saved in this workspace and
``/permissions trust`` for a saved-rules file minicode did not write
(rules from a configuration file are listed read-only: the message names the file).

The listing and messages are ``cli.frontends.shared.permission_lines``'s, shared with pipe mode; the removal
(a small file write and fsync) runs off the event loop and reports when done.
Imports no prompt_toolkit.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from minicode.cli.frontends.shared.permission_lines import USAGE, permissions_listing, remove_rule, trust_rules
from minicode.cli.frontends.tui.items import HelpItem
from minicode.errors import ConfigError

if TYPE_CHECKING:
    from minicode.cli.frontends.tui.controller import Controller

__all__ = ["permissions_command"]


def permissions_command(c: Controller, argument: str) -> None:
    store = c.session.permissions
    if not argument:
        c.transcript.add(HelpItem("\n".join(permissions_listing(store)), "class:help"))
        return
    verb, _, target = argument.partition(" ")
    if verb == "trust" and not target.strip():
        future = asyncio.get_running_loop().run_in_executor(None, trust_rules, store)
    elif verb == "remove" and target.strip():
        future = asyncio.get_running_loop().run_in_executor(None, remove_rule, store, target)
    else:
        c.notice(USAGE)
        return

    def done(finished: asyncio.Future[str]) -> None:
        try:
            c.transcript.note(finished.result(), "class:notice", "· ")
        except ConfigError as e:
            c.notice(str(e))
        except Exception as e:  # the UI must not die of a failed file write
            c.notice(f"could not change the rules: {e}")
        c.invalidate()

    future.add_done_callback(done)
