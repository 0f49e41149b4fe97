"""Hooks (docs/hooks.md): the user's commands run at four points of a task, Claude Code's convention."""
