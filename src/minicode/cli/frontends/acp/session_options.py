"""What an editor session can switch: the modes (ask / act) and the config options (model,
thinking level), as ACP states them and as they change minicode's session."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from acp.schema import SessionConfigOptionSelect, SessionConfigSelectOption, SessionMode, SessionModeState

from minicode.config import THINKING_LEVELS

if TYPE_CHECKING:
    from minicode.session.session import Session

__all__ = ["DEFAULT_THINKING", "MODES", "config_options", "modes_state", "set_option"]

MODES = {
    "ask": "Ask before every file change and command (permission rules still decide first)",
    "act": "Change files and run commands without asking, as --yes (deny rules still deny)",
    "plan": "Read only: the model looks and proposes a plan as a task list; switch to ask or act to carry it out",
}
"""The session modes: ``EditorApprover`` reads ask/act; plan is the session's plan mode
(``session.planning``: read-only tools), left by accepting the proposed list."""

DEFAULT_THINKING = "default"
"""The thinking option's value while no level is sent (the server's default)."""


def modes_state(current: str) -> SessionModeState:
    return SessionModeState(current_mode_id=current, available_modes=[
        SessionMode(id=mode, name=mode.capitalize(), description=description) for mode, description in MODES.items()])


def config_options(session: Session, configured_model: str) -> list[Any]:
    """The model (the session's and the configured one; any name can be set, as /model) and
    the thinking level ("default" only while none is sent: there is no going back to it)."""
    models = list(dict.fromkeys((session.model, configured_model)))
    thinking = [DEFAULT_THINKING, *THINKING_LEVELS] if session.thinking is None else list(THINKING_LEVELS)
    return [
        SessionConfigOptionSelect(id="model", name="Model", category="model", type="select",
                                  current_value=session.model,
                                  options=[SessionConfigSelectOption(value=m, name=m) for m in models]),
        SessionConfigOptionSelect(id="thinking", name="Thinking", category="thought_level", type="select",
                                  current_value=session.thinking or DEFAULT_THINKING,
                                  options=[SessionConfigSelectOption(value=level, name=level) for level in thinking]),
    ]


async def set_option(session: Session, config_id: str, value: str | bool) -> None:
    """Switch it for the rest of the session (recorded in its file, as /model and /think do);
    ValueError for an option or value minicode has not, SessionError for a bad name or level."""
    if not isinstance(value, str) or config_id not in ("model", "thinking"):
        raise ValueError(f"unknown option {config_id!r}: minicode has model and thinking")
    if config_id == "model":
        await session.set_model(value)
    elif value != DEFAULT_THINKING:
        await session.set_thinking(value)
    elif session.thinking is not None:
        raise ValueError("a thinking level is sent in this session; switch to another level (off sends none)")
