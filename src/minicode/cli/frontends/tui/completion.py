"""Completion of slash commands in the draft: typing ``/`` offers the commands of
``commands.COMMANDS`` with their one-line help; Tab (or Up/Down) picks one, Enter takes it.

Only a draft that is a single word starting with ``/`` is completed, so a path or a
sentence never opens the menu unless its first word begins like a command.
"""

from __future__ import annotations

from typing import Iterable

from prompt_toolkit.completion import CompleteEvent, Completer, Completion
from prompt_toolkit.document import Document

from minicode.cli.frontends.tui.commands import COMMANDS, SlashCommand

__all__ = ["SlashCompleter"]


class SlashCompleter(Completer):
    def __init__(self, commands: tuple[SlashCommand, ...] = COMMANDS) -> None:
        self.commands = commands

    def get_completions(self, document: Document, complete_event: CompleteEvent) -> Iterable[Completion]:
        typed = document.text_before_cursor
        if not typed.startswith("/") or any(c.isspace() for c in typed) or document.text_after_cursor:
            return
        for command in self.commands:
            if command.name.startswith(typed.lower()) and command.name != typed:
                yield Completion(command.name, start_position=-len(typed), display_meta=command.summary)
