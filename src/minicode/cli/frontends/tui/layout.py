"""The full-screen layout: transcript, queued line, approval panel, the model's question, status
bar, input (the draft, a denial reason, the question's typed answer or a history search), and the
slash-command menu.

Every control pulls from the ``Controller`` at render time. The transcript is a custom
container (``transcript_window.py``) that hands prompt_toolkit only the visible slice of lines
(never the whole history) as cached rows of cells, and turns the mouse wheel into transcript
scrolling; clicks do nothing anywhere (they never reach the draft). Everything under the
transcript is one inner ``HSplit`` of fixed heights, so dividing the screen between the two
is a couple of steps, not a step per row and child.
"""

from __future__ import annotations

from prompt_toolkit.application.current import get_app
from prompt_toolkit.buffer import Buffer
from prompt_toolkit.filters import Condition
from prompt_toolkit.formatted_text import StyleAndTextTuples
from prompt_toolkit.layout import (
    BufferControl,
    ConditionalContainer,
    Dimension,
    Float,
    FloatContainer,
    FormattedTextControl,
    HSplit,
    Layout,
    Window,
)
from prompt_toolkit.layout.menus import CompletionsMenu
from prompt_toolkit.mouse_events import MouseEvent, MouseEventType
from prompt_toolkit.styles import Style

from minicode.cli.frontends.shared.shown_call import command_parts, reveal
from minicode.cli.frontends.tui.approval import MIN_REVIEW_SIZE
from minicode.cli.frontends.tui.controller import WHEEL_LINES, Controller
from minicode.cli.frontends.tui.draft import input_height, wrapped_line_count
from minicode.cli.frontends.tui.text import Line, cell_width, fit_cells, wrap_plain
from minicode.cli.frontends.tui.todo_panel import panel_lines, panel_rows
from minicode.cli.frontends.tui.transcript_window import TranscriptWindow

__all__ = ["STYLE", "TuiLayout", "approval_height", "approval_panel", "build_layout", "question_panel",
           "status_line"]

PROMPT = "› "
QUESTION_ROWS = 8
"""Lines of the model's question the panel shows at most (the transcript has all of it)."""
SETTLE_PASSES = 8
"""How often one frame re-lays the bottom as estimated heights turn out different (each pass
renders the entries that came into view, so it settles in a few)."""

STYLE = Style.from_dict({
    "user": "bold #87afff",
    "notice": "#8a8a8a",
    "warning": "#d7af00",
    "error": "bold #ff5f5f",
    "help": "#afafaf",
    "reasoning": "italic #6c6c6c",
    "tool.running": "#d7af00",
    "tool.ok": "#5faf5f",
    "tool.error": "#ff5f5f",
    "tool.tail": "#8a8a8a",
    "diff.add": "#5faf5f",
    "diff.del": "#ff5f5f",
    "approval": "bold #ffaf00",
    "approval.detail": "#ffd787",
    "approval.choices": "#ffaf00",
    "approval.head": "bold #ffaf00",
    "approval.choice": "#ffd787",
    "approval.selected": "reverse bold #ffaf00",
    "approval.inactive": "#8a8a8a",
    "approval.hint": "#8a8a8a",
    "compaction": "#5fafaf",
    "stats": "#8a8a8a",
    "dropped": "italic #8a8a8a",
    "status.bad": "#ff8700",
    "status": "reverse",
    "status.new": "reverse bold #ffaf00",
    "queued": "#8a8a8a italic",
    "prompt": "bold #87afff",
    "picker.title": "bold #87afff",
    "picker.hint": "#8a8a8a",
    "picker.group": "bold #afafaf",
    "picker.item": "",
    "picker.selected": "reverse bold",
    "picker.detail": "#8a8a8a",
    "todo.head": "bold #87afaf",
    "todo.pending": "#afafaf",
    "todo.in_progress": "bold #d7af00",
    "todo.done": "#5f875f",
    "todo.blocked": "#ff5f5f",
    "todo.more": "#8a8a8a",
    "status.plan": "reverse bold #5fafd7",
})


def _wheel(controller: Controller, event: MouseEvent) -> None:
    if event.event_type == MouseEventType.SCROLL_UP:
        controller.scroll_lines(-WHEEL_LINES)
    elif event.event_type == MouseEventType.SCROLL_DOWN:
        controller.scroll_lines(WHEEL_LINES)
    # clicks and drags are swallowed on purpose


def transcript_lines(c: Controller, width: int, height: int) -> tuple[int, list[Line]]:
    """The transcript line at the top of the view and the lines on screen at ``width`` x
    ``height``; keeps the controller's view size, line count and scroll position current
    (a new width re-lays the rest later)."""
    old_width = c.view_size[0]
    if width != old_width:  # a resize: the visible part now, the rest in the background
        old_total = c.total_lines
        c.total_lines = c.transcript.total_lines(width)
        c.scroll.rescale(old_total, c.total_lines)
        c.settle_soon()
    else:
        c.total_lines = c.transcript.total_lines(width)
    c.view_size = (width, height)
    top = c.scroll.view_top(c.total_lines, height)
    lines = c.transcript.visible(width, top, height)
    for _ in range(SETTLE_PASSES if c.scroll.follow else 0):
        # entries first shown in this frame may have been counted by an estimate (a
        # resumed history): with the real heights known, the bottom is elsewhere — and
        # the entries that come into view there may have been estimates too
        total = c.transcript.total_lines(width)
        if total == c.total_lines:
            break
        c.total_lines = total
        top = c.scroll.view_top(total, height)
        lines = c.transcript.visible(width, top, height)
    if not c.scroll.follow:
        total = c.transcript.total_lines(width)
        if total != c.total_lines:  # entries seen for the first time replaced their estimates
            c.scroll.settled(total - c.total_lines)
            c.total_lines = total
    return top, lines


class DraftControl(BufferControl):
    """The input: a BufferControl whose mouse events scroll the transcript instead."""

    def __init__(self, controller: Controller, buffer: Buffer) -> None:
        super().__init__(buffer=buffer)
        self.c = controller

    def mouse_handler(self, mouse_event: MouseEvent) -> None:
        _wheel(self.c, mouse_event)


class TuiLayout:
    """The Layout plus the focus switch the controller needs (draft ↔ reason ↔ search)."""

    def __init__(self, controller: Controller) -> None:
        c = controller
        self.c = c
        self.draft_window = Window(
            DraftControl(c, c.draft), height=self._input_height, wrap_lines=True,
            get_line_prefix=lambda line, wrap: [("class:prompt", PROMPT if line == 0 and not wrap else "  ")],
        )
        self.reason_window = Window(
            DraftControl(c, c.reason), height=1,
            get_line_prefix=lambda line, wrap: [("class:approval", "reason (optional, Enter sends): ")],
        )
        self.answer_window = Window(
            DraftControl(c, c.editor.answer), height=1,
            get_line_prefix=lambda line, wrap: [("class:approval", "your answer (Enter sends, Esc goes back): ")],
        )
        self.search_window = Window(
            DraftControl(c, c.editor.search), height=1,
            get_line_prefix=lambda line, wrap: [("class:prompt", self._search_prefix())],
        )
        asking = Condition(lambda: c.pending is not None and c.pending.asking_reason)
        waiting = Condition(lambda: c.pending is not None)
        questioned = Condition(lambda: c.question is not None)
        typing = Condition(lambda: c.question is not None and c.question.typing)
        searching = Condition(lambda: c.editor.searching)
        picking = Condition(lambda: c.chooser.open)
        self.picker_window = Window(
            DraftControl(c, c.chooser.filter), height=1,
            get_line_prefix=lambda line, wrap: [("class:picker.title", self._picker_prefix())],
        )
        self.transcript_window = TranscriptWindow(lambda width, height: transcript_lines(c, width, height),
                                                  lambda e: _wheel(c, e))
        body = HSplit([
            self.transcript_window,
            HSplit([  # fixed heights: see the module docstring
                ConditionalContainer(
                    Window(FormattedTextControl(self._queued), height=self._queued_height, wrap_lines=True),
                    filter=Condition(lambda: bool(c.queue)),
                ),
                ConditionalContainer(
                    Window(FormattedTextControl(self._approval), height=self._approval_height,
                           style="class:approval.panel", wrap_lines=False),
                    filter=waiting,
                ),
                ConditionalContainer(
                    Window(FormattedTextControl(self._question), height=self._question_height,
                           style="class:approval.panel", wrap_lines=False),
                    filter=questioned,
                ),
                ConditionalContainer(
                    Window(FormattedTextControl(self._todo), height=self._todo_height, wrap_lines=False),
                    filter=Condition(lambda: bool(c.session.todo)),
                ),
                Window(FormattedTextControl(self._status), height=1, style="class:status"),
                ConditionalContainer(
                    Window(FormattedTextControl(self._picker), height=self._picker_height), filter=picking,
                ),
                ConditionalContainer(self.reason_window, filter=asking),
                ConditionalContainer(self.answer_window, filter=typing),
                ConditionalContainer(self.search_window, filter=searching & ~asking & ~typing),
                ConditionalContainer(self.picker_window, filter=picking & ~asking & ~typing),
                ConditionalContainer(self.draft_window, filter=~asking & ~picking & ~typing),
            ]),
        ])
        self.container = FloatContainer(body, floats=[
            Float(xcursor=True, ycursor=True, content=CompletionsMenu(max_height=8, scroll_offset=1)),
        ])
        self.layout = Layout(self.container, focused_element=self.draft_window)

    def focus(self, name: str) -> None:
        targets = {"reason": self.reason_window, "search": self.search_window, "picker": self.picker_window,
                   "answer": self.answer_window}
        target = targets.get(name, self.draft_window)
        if self.layout.current_window is not target:
            try:
                self.layout.focus(target)
            except ValueError:
                pass  # not visible yet; the next render's focus call will succeed

    def _picker_prefix(self) -> str:
        picker = self.c.chooser.picker
        return "typed text does not answer: " if picker is not None and picker.question else "filter: "

    def _picker_height(self) -> Dimension:
        """Up to half the screen (at least six rows) for an open list, no more than it needs."""
        picker = self.c.chooser.picker
        rows = get_app().output.get_size().rows
        wanted = picker.needed_rows() if picker is not None else 3
        return Dimension.exact(max(3, min(wanted, max(6, rows // 2))))

    def _picker(self) -> StyleAndTextTuples:
        picker = self.c.chooser.picker
        if picker is None:
            return []
        size = get_app().output.get_size()
        height = self._picker_height().preferred
        out: StyleAndTextTuples = []
        for i, line in enumerate(picker.lines(size.columns, height)):
            if i:
                out.append(("", "\n"))
            out.extend(line)
        return out

    def _input_height(self) -> Dimension:
        size = get_app().output.get_size()
        width = max(1, size.columns - len(PROMPT))
        return Dimension.exact(input_height(wrapped_line_count(self.c.draft.text, width), size.rows))

    def _search_prefix(self) -> str:
        e = self.c.editor
        found = "" if e.recall.hit is not None or not e.search.text else " (no match)"
        return f"search history{found} (Ctrl+R older, Enter keeps, Esc cancels): "

    def _queued_text(self) -> str:
        q = self.c.queue
        if not q:
            return ""
        first = q[0].shown.split("\n", 1)[0][:200]
        more = f" (+{len(q) - 1} more)" if len(q) > 1 else ""
        return f"queued: {first}{more} — sent when the task ends"

    def _queued(self) -> StyleAndTextTuples:
        return [("class:queued", self._queued_text())]

    def _queued_height(self) -> Dimension:
        """As many rows as the strip's text needs at this width, at most three."""
        width = max(1, get_app().output.get_size().columns)
        return Dimension.exact(max(1, min(3, -(-cell_width(self._queued_text()) // width))))

    def _approval(self) -> StyleAndTextTuples:
        return approval_panel(self.c, get_app().output.get_size().columns)

    def _approval_height(self) -> Dimension:
        return Dimension.exact(approval_height(self.c))

    def _question(self) -> StyleAndTextTuples:
        size = get_app().output.get_size()
        return question_panel(self.c, size.columns, size.rows)

    def _question_height(self) -> Dimension:
        return Dimension.exact(self._question().count(("", "\n")) + 1 if self.c.question is not None else 0)

    def _status(self) -> StyleAndTextTuples:
        return status_line(self.c, get_app().output.get_size().columns)

    def _todo_rows(self) -> int:
        """The task list's rows: what the screen leaves once the rest below the transcript
        (status bar, input or its stand-in, an approval or an ask_user question, the queued
        line, an open list) has its rows."""
        c = self.c
        taken = 2 + self._input_height().preferred + approval_height(c)  # +1: reason or search line
        if c.queue:
            taken += self._queued_height().preferred
        if c.chooser.open:
            taken += self._picker_height().preferred
        if c.question is not None:  # an ask_user question and its answer line
            taken += self._question_height().preferred
        return panel_rows(c.session.todo, get_app().output.get_size().rows, taken)

    def _todo_height(self) -> Dimension:
        return Dimension.exact(self._todo_rows())

    def _todo(self) -> StyleAndTextTuples:
        rows = panel_lines(self.c.session.todo, get_app().output.get_size().columns, self._todo_rows())
        out: StyleAndTextTuples = []
        for i, (style, text) in enumerate(rows):
            out += [("", "\n")] if i else []
            out.append((style, text))
        return out


def approval_height(c: Controller) -> int:
    p = c.pending
    if p is None:
        return 0
    if c.too_small_to_review():
        return 1
    return 2 if p.asking_reason else len(p.choices) + 2


def approval_panel(c: Controller, width: int) -> StyleAndTextTuples:
    """The question above the status bar: what is asked, the choices with the highlighted one
    marked, and the keys — dimmed, with how to reach them, while the draft has text."""
    p = c.pending
    if p is None:
        return []
    if c.too_small_to_review():  # the call would be hidden: no question without it
        columns, rows = MIN_REVIEW_SIZE
        says = (f" window too small to review this call: enlarge it to at least {columns}×{rows} to answer",
                f" too small to review: enlarge to {columns}×{rows}", " too small to review", " too small")
        return [("class:approval.head", fit_cells(next((x for x in says if cell_width(x) <= width), says[-1]), width))]
    request = p.request
    target = "" if request.target in (".", c.transcript.workspace) else request.target  # bash: the workspace
    out: StyleAndTextTuples = [("class:approval.head", question_line(request.tool, target, request.detail, width)),
                               ("", "\n")]
    if p.asking_reason:
        out.append(("class:approval.hint", fit_cells("  denying — type why (optional) below; Enter sends,"
                                                " Esc goes back to the answers", width)))
        return out
    active = c.choosing()
    for i, choice in enumerate(p.choices):
        mark = "❯ " if i == p.selected else "  "
        style = "class:approval.selected" if i == p.selected and active else (
            "class:approval.choice" if active else "class:approval.inactive")
        out += [(style, fit_cells(f"  {mark}{reveal(choice.label)}", width)), ("", "\n")]  # a rule holds a path
    if active:
        hint = "  ↑↓ choose · Enter answers · details above (PageUp scrolls)"
    else:
        hint = "  the draft has text: Tab moves to the answers (or empty the draft)"
    out.append(("class:approval.hint", fit_cells(hint, width)))
    return out


def question_panel(c: Controller, width: int, height: int = 1000) -> StyleAndTextTuples:
    """The model's question above the status bar: what it asks (made visible, wrapped, at most
    ``QUESTION_ROWS`` lines, fewer in a low window of ``height`` rows so the transcript, status
    bar and draft keep a few — all of it is in the transcript), its rows numbered with the
    highlighted one marked, and the keys; dimmed, with how to reach them, while the draft has
    text. One line per row: the panel's height is its count of newlines + 1."""
    p = c.question
    if p is None:
        return []
    room = max(1, min(QUESTION_ROWS, height - len(p.rows) - 8))
    lines = wrap_plain(reveal(p.question.text), max(4, width - 4), indent="")
    shown = [fit_cells("  " + "".join(text for _style, text in line), width) for line in lines[:room]]
    if len(lines) > room:
        shown[-1] = fit_cells(f"  … {len(lines) - room + 1} more lines: PageUp shows it all", width)
    out: StyleAndTextTuples = [("class:approval.head", fit_cells(" the model asks:", width))]
    for line in shown:
        out += [("", "\n"), ("class:approval.detail", line)]
    if p.typing:
        out += [("", "\n"), ("class:approval.hint", fit_cells("  type your answer below; Enter sends, Esc goes back", width))]
        return out
    active = c.question_choosing()
    for i, row in enumerate(p.rows):
        mark = "❯ " if i == p.selected else "  "
        style = "class:approval.selected" if i == p.selected and active else (
            "class:approval.choice" if active else "class:approval.inactive")
        out += [("", "\n"), (style, fit_cells(f"  {mark}{i + 1}. {reveal(row)}", width))]
    if active:
        hint = "  ↑↓ or 1-9 choose · Enter answers · Esc: no answer"
    else:
        hint = "  the draft has text: Tab moves to the choices (or empty the draft) · Esc: no answer"
    out += [("", "\n"), ("class:approval.hint", fit_cells(hint, width))]
    return out


def question_line(tool: str, target: str, detail: str, width: int) -> str:
    """`` approve bash echo hello … (+2 more lines, 73 blank)?`` within ``width``: what the
    model sent, revealed (``shown_call``); a cut keeps the size of a multi-line command."""
    if tool == "bash":
        first, size = command_parts(detail)
    else:
        first, size = reveal(detail).split("\n", 1)[0], ""
    what = " ".join(x for x in (tool, reveal(target).split("\n", 1)[0], first) if x)
    tail = f" … {size}?" if size else "?"
    return fit_cells(f" approve {what}", max(1, width - cell_width(tail))) + tail


def status_line(c: Controller, width: int) -> StyleAndTextTuples:
    """The status bar within ``width``: `` PLAN `` in plan mode, the state and "N new lines ↓" stay; the window's size
    and source go first, then the model and the session id, then the context share, then the
    "(End)" hint."""
    used, window = c.context
    context = f" · context {100 * used // window if window else 0}%"
    source = f" of {_tokens_short(window)} ({c.context_source})" if window > 1 else ""
    new = c.scroll.new_lines(c.total_lines)
    scrolled = ("↑ scrolled", " · End to follow") if not c.scroll.follow else None
    marker = (f"{new:,} new lines ↓", " (End)") if new else scrolled
    thinking = c.session.thinking
    ident = f" {c.session.model}{f' · think {thinking}' if thinking else ''} · {c.session.id[:8]} "
    flash = c.editor.flash_text()
    state = f" {flash}" if flash is not None else f" {c.activity()}"
    plan: StyleAndTextTuples = [("class:status.plan", " PLAN ")] if c.session.mode == "plan" else []
    out: StyleAndTextTuples = []
    for keep_ident, keep_source, keep_context, keep_hint in (
        (True, True, True, True), (True, False, True, True), (False, False, True, True),
        (False, False, False, True), (False, False, False, False),
    ):
        shown = (context + (source if keep_source else "")) if keep_context else ""
        out = [*plan, ("", state + shown + " ")]
        if marker is not None:
            out.append(("class:status.new", f" {marker[0]}{marker[1] if keep_hint else ''} "))
        if keep_ident:
            out.append(("", ident))
        if sum(cell_width(fragment[1]) for fragment in out) <= width:
            break
    return out


def _tokens_short(tokens: int) -> str:
    """32768 -> "32k", 262144 -> "256k", 100000 -> "100k", 900 -> "900"."""
    if tokens < 1000:
        return str(tokens)
    return f"{tokens // 1024}k" if tokens % 1024 == 0 else f"{round(tokens / 1000)}k"


def build_layout(controller: Controller) -> TuiLayout:
    return TuiLayout(controller)
