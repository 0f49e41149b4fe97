"""``/check``: list the acceptance checks, add one, or ``--clear`` them — the full screen and
pipe mode share the rule and the words. Standard library only (plus the config's validation)."""

from __future__ import annotations

__all__ = ["edit_checks"]


def edit_checks(checks: list[str], argument: str, later: str = "") -> tuple[bool, str]:
    """Apply ``/check ARGUMENT`` to ``checks`` (in place); (done, what to tell the user).
    ``later`` (" from the next task on") is said when a task is already running."""
    from minicode.config import check_command
    from minicode.errors import ConfigError

    if argument == "--clear":
        checks.clear()
        return True, f"acceptance checks cleared{later}"
    if argument:
        try:
            command = check_command(argument, "/check")
        except ConfigError as e:
            return False, str(e)
        if command in checks:
            return False, f"already a check: {command}"
        checks.append(command)
        return True, f"check added{later}: {command} — it runs when the model says it is done"
    if checks:
        listed = "\n".join(f"  {i}. {c}" for i, c in enumerate(checks, start=1))
        return True, f"acceptance checks (run when the model says it is done):\n{listed}"
    return True, "no acceptance checks; /check CMD adds one (e.g. /check pytest -q)"
