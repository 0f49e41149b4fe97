"""What the frontends say about plan mode: each switch, and what to do with a proposed plan."""

from __future__ import annotations

__all__ = ["MODE_LINES", "PLAN_READY", "PLAN_READY_PIPE"]

MODE_LINES = {
    "entered": "plan mode: read-only tools; the model proposes a plan as a task list, nothing is written",
    "accepted": "plan accepted: acting on it with every tool (approvals as usual)",
    "rejected": "plan rejected: back to acting, the task list is cleared",
}
"""By ``ModeChanged.why``."""

PLAN_READY = "plan ready: /plan accept to act on it, /plan reject to drop it, or type what to change"
PLAN_READY_PIPE = ("plan ready (nothing was changed): to act on it, echo /plan accept | minicode -c; "
                   "/plan reject drops it, any other line is feedback on it")
