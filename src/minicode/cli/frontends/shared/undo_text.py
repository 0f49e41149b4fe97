"""How an undo plan and its result are told, as plain lines (pipe mode and the full screen).

Pure, standard library only.
"""

from __future__ import annotations

from minicode.session.undo import FilePlan, UndoPlan, UndoResult

__all__ = ["changes_text", "plan_lines", "result_lines"]

_COMMANDS_NOTE = "ran commands (bash): what they changed is not tracked and stays as it is"


def plan_lines(plan: UndoPlan, what: str = "") -> list[str]:
    """The heading (``what``: e.g. "the last task"), one line per file, notes about commands."""
    titles = [t for t in plan.titles if t]
    named = f" ({_quoted(titles[-1])})" if len(titles) == 1 else ""
    if not what and not plan.latest:  # later tasks changed no file (or were undone): not "the last task"
        what = "an earlier task"
        named = f" ({_quoted(titles[-1])}: the newest one with file changes left to undo)" if len(titles) == 1 \
            else " (the newest one with file changes left to undo)"
    if not what:
        what = "the last task" if len(plan.tasks) == 1 else f"the last {len(plan.tasks)} tasks"
    lines = [f"undo {what}{named}: {len(plan.actionable)} of {len(plan.files)} file(s) can be put back"]
    lines += [f"  {_file_line(f)}" for f in plan.files]
    if plan.ran_commands:
        lines.append(f"  note: {'this task' if len(plan.tasks) == 1 else 'these tasks'} also {_COMMANDS_NOTE}")
    if plan.later_commands:
        lines.append(f"  note: later tasks {_COMMANDS_NOTE}")
    return lines


def result_lines(result: UndoResult) -> list[str]:
    done = []
    if result.restored:
        done.append("restored " + ", ".join(result.restored))
    if result.deleted:
        done.append("deleted " + ", ".join(result.deleted))
    lines = ["; ".join(done) if done else "no file was changed"]
    lines += [f"  not restored: {path}: {why}" for path, why in result.skipped]
    return lines


def changes_text(added: int | None, removed: int | None) -> str:
    """"+3 −1" (lines the undo adds back / takes out), or "" when not counted."""
    if added is None or removed is None:
        return ""
    return f"+{added} −{removed}"


def _file_line(f: FilePlan) -> str:
    counted = changes_text(f.added, f.removed)
    if f.action == "restore":
        return f"restore {f.path}" + (f" ({counted})" if counted else " (binary or large: lines not counted)")
    if f.action == "delete":
        lines = f", {f.removed} line{'' if f.removed == 1 else 's'}" if f.removed is not None else ""
        return f"delete  {f.path} (the task created it{lines})"
    if f.action == "same":
        return f"same    {f.path} (already as before)"
    return f"skip    {f.path}: {f.why}"


def _quoted(text: str) -> str:
    return "“" + (text if len(text) <= 60 else text[:59] + "…") + "”"
