"""The one keymap of the full-screen session: ``KEYMAP`` (keys → action, when) and its bindings.

Every key the UI reacts to is in the table below; no widget checks keys on its own. Where two
rows' conditions hold at once, the later row wins (prompt_toolkit runs the last matching
binding), so the table goes from general to specific: the draft's own keys, then history,
then the approval's choices, then the completion menu.
Printable keys are never bound — they always go into whatever has focus (the draft, a denial
reason, an answer, a search), so no typed text can answer a question — but for the digits 1-9
while the model's question has the keys (the draft empty): they only move its highlight.
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

from minicode.cli.frontends.tui.controller import Controller

__all__ = ["KEYMAP", "Action", "When", "create_key_bindings"]


class Action(enum.Enum):
    SUBMIT = "submit the draft (or queue it while a task runs)"
    NEWLINE = "insert a newline"
    PASTE = "paste: one edit, large ones as a placeholder"
    TOGGLE_PASTE = "expand/collapse paste placeholders"
    TOGGLE_REASONING = "show the latest reasoning in full, or collapse it"
    PAGE_UP = "scroll up a page"
    PAGE_DOWN = "scroll down a page"
    FOLLOW = "jump to the bottom and follow new output"
    TOP = "jump to the top of the transcript"
    HISTORY_BACK = "recall the previous message of the input history"
    HISTORY_FORWARD = "recall the next message (past the newest: the empty draft)"
    SEARCH = "search the input history"
    SEARCH_OLDER = "the next older match"
    SEARCH_NEWER = "the next newer match"
    SEARCH_ACCEPT = "keep the match in the draft"
    SEARCH_CANCEL = "leave the search, the draft as it was"
    INTERRUPT = "interrupt the running task"
    CLEAR_OR_EXIT = "clear the draft; on an empty draft leave"
    EOF_EXIT = "leave (empty draft)"
    CHOICE_PREVIOUS = "highlight the previous answer"
    CHOICE_NEXT = "highlight the next answer"
    CHOICE_FOCUS = "go to the answers (the highlighted answer stays as it is)"
    CHOICE_CONFIRM = "answer with the highlighted choice"
    SEND_REASON = "send the denial (with the reason typed, if any)"
    REASON_BACK = "back to the answers"
    QUESTION_PREVIOUS = "highlight the question's previous row"
    QUESTION_NEXT = "highlight the question's next row"
    QUESTION_DIGIT = "highlight the question's row of that number"
    QUESTION_CONFIRM = "answer with the highlighted row (Other…: type the answer)"
    QUESTION_DECLINE = "decline to answer the model's question"
    SEND_ANSWER = "send the typed answer"
    ANSWER_BACK = "back to the question's rows"
    COMPLETION_ACCEPT = "take the highlighted command"
    PICK_UP = "move up in the open list"
    PICK_DOWN = "move down in the open list"
    PICK = "choose the selected row of the open list"
    PICK_CANCEL = "close the open list without choosing"
    SUSPEND = "suspend minicode to the shell (fg resumes it)"


class When(enum.Enum):
    ALWAYS = "always"
    DRAFT = "the draft has focus"
    EMPTY_DRAFT = "the draft has focus and is empty"
    REASON = "typing a denial reason"
    SEARCH = "searching the input history"
    TASK = "a task is running"
    SCROLLED_UP = "the transcript is scrolled up (else End moves in the draft)"
    NOT_EDITING = "the draft is empty or the transcript is scrolled up (else Home moves in the draft)"
    RECALLING = "the draft is empty or holds an unchanged recalled message (else Up/Down move in it)"
    CHOOSING = "a question waits and the draft is empty (or Tab moved to the answers)"
    CAN_CHOOSE = "a question waits (Tab moves to its answers; it never changes the highlighted one)"
    QUESTION = "the model's question waits with its rows shown (Tab moves to them, Esc declines)"
    QUESTION_CHOOSING = "the model's question waits and the draft is empty (or Tab moved to the rows)"
    ANSWER = "typing the answer to the model's question"
    COMPLETING = "the command menu is open with a highlighted command"
    PICKER = "a list to choose from is open (/resume, /rewind, /undo): typing filters it"


KEYMAP: tuple[tuple[tuple[str, ...], Action, When], ...] = (
    (("enter",), Action.SUBMIT, When.DRAFT),
    (("c-j",), Action.NEWLINE, When.DRAFT),
    (("escape", "enter"), Action.NEWLINE, When.DRAFT),
    (("escape", "[", "1", "3", ";", "2", "u"), Action.NEWLINE, When.DRAFT),
    ((Keys.BracketedPaste.value,), Action.PASTE, When.DRAFT),
    (("c-o",), Action.TOGGLE_PASTE, When.DRAFT),
    (("c-t",), Action.TOGGLE_REASONING, When.ALWAYS),
    (("pageup",), Action.PAGE_UP, When.ALWAYS),
    (("pagedown",), Action.PAGE_DOWN, When.ALWAYS),
    (("end",), Action.FOLLOW, When.SCROLLED_UP),
    (("c-end",), Action.FOLLOW, When.ALWAYS),
    (("home",), Action.TOP, When.NOT_EDITING),
    (("c-home",), Action.TOP, When.ALWAYS),
    (("escape",), Action.INTERRUPT, When.TASK),
    (("c-c",), Action.CLEAR_OR_EXIT, When.ALWAYS),
    (("c-d",), Action.EOF_EXIT, When.EMPTY_DRAFT),
    # prompt_toolkit types Ctrl+Z into the draft as a raw ^Z (the model would get it); it
    # suspends instead, as in other terminal programs (fg brings the screen back)
    (("c-z",), Action.SUSPEND, When.ALWAYS),
    (("up",), Action.HISTORY_BACK, When.RECALLING),
    (("down",), Action.HISTORY_FORWARD, When.RECALLING),
    (("c-r",), Action.SEARCH, When.DRAFT),
    (("c-r",), Action.SEARCH_OLDER, When.SEARCH),
    (("up",), Action.SEARCH_OLDER, When.SEARCH),
    (("down",), Action.SEARCH_NEWER, When.SEARCH),
    (("enter",), Action.SEARCH_ACCEPT, When.SEARCH),
    (("escape",), Action.SEARCH_CANCEL, When.SEARCH),
    (("c-g",), Action.SEARCH_CANCEL, When.SEARCH),
    # Tab only moves to the answers, never the highlight: "Tab moves to the answers" then
    # Enter must answer with what was highlighted, never "allow for this session" (T3).
    (("tab",), Action.CHOICE_FOCUS, When.CAN_CHOOSE),
    (("up",), Action.CHOICE_PREVIOUS, When.CHOOSING),
    (("down",), Action.CHOICE_NEXT, When.CHOOSING),
    (("enter",), Action.CHOICE_CONFIRM, When.CHOOSING),
    (("enter",), Action.SEND_REASON, When.REASON),
    (("escape",), Action.REASON_BACK, When.REASON),
    (("tab",), Action.CHOICE_FOCUS, When.QUESTION),
    (("escape",), Action.QUESTION_DECLINE, When.QUESTION),  # after INTERRUPT: Esc declines, the task goes on
    (("up",), Action.QUESTION_PREVIOUS, When.QUESTION_CHOOSING),
    (("down",), Action.QUESTION_NEXT, When.QUESTION_CHOOSING),
    *(((digit,), Action.QUESTION_DIGIT, When.QUESTION_CHOOSING) for digit in "123456789"),
    (("enter",), Action.QUESTION_CONFIRM, When.QUESTION_CHOOSING),
    (("enter",), Action.SEND_ANSWER, When.ANSWER),
    (("escape",), Action.ANSWER_BACK, When.ANSWER),
    (("enter",), Action.COMPLETION_ACCEPT, When.COMPLETING),
    (("up",), Action.PICK_UP, When.PICKER),
    (("down",), Action.PICK_DOWN, When.PICKER),
    (("enter",), Action.PICK, When.PICKER),
    (("escape",), Action.PICK_CANCEL, When.PICKER),  # after INTERRUPT: Esc in a list only closes it
)


def _filters(c: Controller) -> dict[When, Filter]:
    draft = has_focus(c.draft)
    menu = Condition(lambda: c.draft.complete_state is not None)
    picked = Condition(lambda: c.draft.complete_state is not None
                       and c.draft.complete_state.current_completion is not None)
    asking = Condition(lambda: c.pending is not None and not c.pending.asking_reason)
    questioned = Condition(lambda: c.question is not None and not c.question.typing)
    return {
        When.ALWAYS: Condition(lambda: True),
        When.DRAFT: draft,
        When.EMPTY_DRAFT: draft & Condition(lambda: not c.draft.text),
        When.REASON: has_focus(c.reason),
        When.SEARCH: has_focus(c.editor.search),
        When.TASK: Condition(lambda: c.busy),
        When.SCROLLED_UP: Condition(lambda: not c.scroll.follow),
        When.NOT_EDITING: draft & Condition(lambda: not c.draft.text or not c.scroll.follow),
        When.RECALLING: draft & Condition(c.recalling) & ~menu,
        When.CHOOSING: draft & Condition(c.choosing) & ~menu,
        When.CAN_CHOOSE: draft & asking & ~menu,
        When.QUESTION: draft & questioned & ~menu,
        When.QUESTION_CHOOSING: draft & Condition(c.question_choosing) & ~menu,
        When.ANSWER: has_focus(c.editor.answer),
        When.COMPLETING: draft & picked,
        When.PICKER: has_focus(c.chooser.filter) & Condition(lambda: c.chooser.open),
    }


def _handlers(c: Controller) -> dict[Action, Callable[[KeyPressEvent], None]]:
    def submit(event: KeyPressEvent) -> None:
        if event.key_sequence[0].data.startswith("\x1b"):  # Shift+Enter via modifyOtherKeys
            c.draft.newline(copy_margin=False)
        else:
            c.submit()

    def take_completion(event: KeyPressEvent) -> None:
        state = c.draft.complete_state
        if state is not None and state.current_completion is not None:
            c.draft.apply_completion(state.current_completion)

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
        Action.SEARCH: lambda e: c.start_search(),
        Action.SEARCH_OLDER: lambda e: c.editor.search_older(),
        Action.SEARCH_NEWER: lambda e: c.editor.search_newer(),
        Action.SEARCH_ACCEPT: lambda e: c.end_search(accept=True),
        Action.SEARCH_CANCEL: lambda e: c.end_search(accept=False),
        Action.INTERRUPT: lambda e: c.interrupt(),
        Action.CLEAR_OR_EXIT: lambda e: c.ctrl_c(),
        Action.EOF_EXIT: lambda e: c.leave(),
        Action.CHOICE_PREVIOUS: lambda e: c.choose(-1),
        Action.CHOICE_NEXT: lambda e: c.choose(1),
        Action.CHOICE_FOCUS: lambda e: c.focus_choices(),
        Action.CHOICE_CONFIRM: lambda e: c.confirm_choice(),
        Action.SEND_REASON: lambda e: c.submit_reason(),
        Action.REASON_BACK: lambda e: c.reason_back(),
        Action.QUESTION_PREVIOUS: lambda e: c.question_move(-1),
        Action.QUESTION_NEXT: lambda e: c.question_move(1),
        Action.QUESTION_DIGIT: lambda e: c.question_digit(e.data),
        Action.QUESTION_CONFIRM: lambda e: c.question_confirm(),
        Action.QUESTION_DECLINE: lambda e: c.question_decline(),
        Action.SEND_ANSWER: lambda e: c.send_answer(),
        Action.ANSWER_BACK: lambda e: c.answer_back(),
        Action.COMPLETION_ACCEPT: take_completion,
        Action.PICK_UP: lambda e: c.chooser.move(-1),
        Action.PICK_DOWN: lambda e: c.chooser.move(1),
        Action.PICK: lambda e: c.chooser.pick(),
        Action.PICK_CANCEL: lambda e: c.chooser.cancel(),
        Action.SUSPEND: lambda e: e.app.suspend_to_background(),
    }


def create_key_bindings(c: Controller) -> KeyBindings:
    """Bindings for every KEYMAP row, in table order (a later row wins where both apply)."""
    kb = KeyBindings()
    filters = _filters(c)
    handlers = _handlers(c)
    for keys, action, when in KEYMAP:
        kb.add(*keys, filter=filters[when])(handlers[action])
    return kb
