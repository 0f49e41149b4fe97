"""The one keymap of the full-screen session: ``KEYMAP`` (keys → action, when) and its bindings.

Every key the UI reacts to is in the table below; no widget checks keys on its own.
Shift+Enter: terminals with modifyOtherKeys send ``ESC[27;2;13~``, which prompt_toolkit
reports as Enter — the Enter handler tells it apart by the raw data; the CSI-u form
``ESC[13;2u`` is not parsed by prompt_toolkit, so it is bound as its key sequence.
"""

from __future__ import annotations

import enum
from typing import Callable

from prompt_toolkit.filters import Condition, Filter, has_focus
from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent
from prompt_toolkit.keys import Keys

from minicode.cli.tui.controller import Controller
from minicode.exitcodes import EXIT_INTERRUPTED

__all__ = ["KEYMAP", "Action", "When", "create_key_bindings"]


class Action(enum.Enum):
    SUBMIT = "submit the draft (or queue it while a task runs)"
    NEWLINE = "insert a newline"
    PASTE = "bracketed paste: one edit, large ones as a placeholder"
    TOGGLE_PASTE = "expand/collapse paste placeholders"
    TOGGLE_REASONING = "show the latest reasoning in full, or collapse it"
    PAGE_UP = "scroll up a page"
    PAGE_DOWN = "scroll down a page"
    FOLLOW = "jump to the bottom and follow new output"
    TOP = "jump to the top of the transcript"
    HISTORY_BACK = "recall the previous submission of this run"
    HISTORY_FORWARD = "recall the next submission (past the newest: the empty draft)"
    INTERRUPT = "interrupt the running task"
    CANCEL_EXIT = "cancel the running task (if any) and exit"
    EOF_EXIT = "exit (empty draft)"
    ALLOW_ONCE = "approve once"
    ALLOW_SESSION = "approve this tool for the session"
    DENY = "deny (then an optional reason)"
    SEND_REASON = "send the denial reason"


class When(enum.Enum):
    ALWAYS = "always"
    DRAFT = "the draft has focus"
    EMPTY_DRAFT = "the draft has focus and is empty"
    REASON = "typing a denial reason"
    APPROVAL = "an approval waits for y/a/n (typed into a non-empty draft they are text)"
    TASK = "a task is running"
    SCROLLED_UP = "the transcript is scrolled up (else End moves in the draft)"
    NOT_EDITING = "the draft is empty or the transcript is scrolled up (else Home moves in the draft)"
    RECALLING = "the draft is empty or holds an unchanged recalled submission (else Up/Down move in it)"


KEYMAP: tuple[tuple[tuple[str, ...], Action, When], ...] = (
    (("enter",), Action.SUBMIT, When.DRAFT),
    (("c-j",), Action.NEWLINE, When.DRAFT),
    (("escape", "enter"), Action.NEWLINE, When.DRAFT),
    (("escape", "[", "1", "3", ";", "2", "u"), Action.NEWLINE, When.DRAFT),
    ((Keys.BracketedPaste.value,), Action.PASTE, When.DRAFT),
    (("c-o",), Action.TOGGLE_PASTE, When.DRAFT),
    (("c-r",), Action.TOGGLE_REASONING, When.ALWAYS),
    (("pageup",), Action.PAGE_UP, When.ALWAYS),
    (("pagedown",), Action.PAGE_DOWN, When.ALWAYS),
    (("end",), Action.FOLLOW, When.SCROLLED_UP),
    (("c-end",), Action.FOLLOW, When.ALWAYS),
    (("home",), Action.TOP, When.NOT_EDITING),
    (("c-home",), Action.TOP, When.ALWAYS),
    (("up",), Action.HISTORY_BACK, When.RECALLING),
    (("down",), Action.HISTORY_FORWARD, When.RECALLING),
    (("escape",), Action.INTERRUPT, When.TASK),
    (("c-c",), Action.CANCEL_EXIT, When.ALWAYS),
    (("c-d",), Action.EOF_EXIT, When.EMPTY_DRAFT),
    (("y",), Action.ALLOW_ONCE, When.APPROVAL),
    (("Y",), Action.ALLOW_ONCE, When.APPROVAL),
    (("a",), Action.ALLOW_SESSION, When.APPROVAL),
    (("A",), Action.ALLOW_SESSION, When.APPROVAL),
    (("n",), Action.DENY, When.APPROVAL),
    (("N",), Action.DENY, When.APPROVAL),
    (("enter",), Action.SEND_REASON, When.REASON),
)


def _filters(c: Controller) -> dict[When, Filter]:
    draft = has_focus(c.draft)
    return {
        When.ALWAYS: Condition(lambda: True),
        When.DRAFT: draft,
        When.EMPTY_DRAFT: draft & Condition(lambda: not c.draft.text),
        When.REASON: has_focus(c.reason),
        When.APPROVAL: Condition(lambda: c.pending is not None and not c.pending.asking_reason),
        When.TASK: Condition(lambda: c.busy),
        When.SCROLLED_UP: Condition(lambda: not c.scroll.follow),
        When.NOT_EDITING: draft & Condition(lambda: not c.draft.text or not c.scroll.follow),
        When.RECALLING: draft & Condition(c.recalling),
    }


def _handlers(c: Controller) -> dict[Action, Callable[[KeyPressEvent], None]]:
    def submit(event: KeyPressEvent) -> None:
        if event.key_sequence[0].data.startswith("\x1b"):  # Shift+Enter via modifyOtherKeys
            c.draft.newline(copy_margin=False)
        else:
            c.submit()

    return {
        Action.SUBMIT: submit,
        Action.NEWLINE: lambda e: c.draft.newline(copy_margin=False),
        Action.PASTE: lambda e: c.paste(e.data),
        Action.TOGGLE_PASTE: lambda e: c.toggle_paste(),
        Action.TOGGLE_REASONING: lambda e: c.toggle_reasoning(),
        Action.PAGE_UP: lambda e: c.scroll_page(-1),
        Action.PAGE_DOWN: lambda e: c.scroll_page(1),
        Action.FOLLOW: lambda e: c.follow(),
        Action.TOP: lambda e: c.to_top(),
        Action.HISTORY_BACK: lambda e: c.recall(-1),
        Action.HISTORY_FORWARD: lambda e: c.recall(1),
        Action.INTERRUPT: lambda e: c.interrupt(),
        Action.CANCEL_EXIT: lambda e: c.exit(EXIT_INTERRUPTED),
        Action.EOF_EXIT: lambda e: c.exit(0),
        # the key's own character: when it cannot answer (see Controller.can_answer) it is text
        Action.ALLOW_ONCE: lambda e: c.approval_key(e.data),
        Action.ALLOW_SESSION: lambda e: c.approval_key(e.data),
        Action.DENY: lambda e: c.approval_key(e.data),
        Action.SEND_REASON: lambda e: c.submit_reason(),
    }


def create_key_bindings(c: Controller) -> KeyBindings:
    """Bindings for every KEYMAP row; later rows never shadow earlier ones (filters differ)."""
    kb = KeyBindings()
    filters = _filters(c)
    handlers = _handlers(c)
    for keys, action, when in KEYMAP:
        kb.add(*keys, filter=filters[when])(handlers[action])
    return kb
