"""The state and actions of the full-screen session: what is shown, sent, queued and scrolled.

Key bindings (``keys.py``) call these actions; the layout (``layout.py``) pulls from this state
at render time. What the user is writing (draft, pastes, history, reason) is the ``Editor``.
Two concepts live in their own modules, as mixins of ``Controller``: the running task — its
launch, its events drawn as they arrive, Esc and leaving (``running.py``) — and the keys of a
waiting approval question (``approval_keys.py``) and of the model's question (``question_keys.py``); the session it drives is ``SessionLike``
(``session_like.py``). Every time the UI measures comes from the injected ``clock``.
"""

from __future__ import annotations

import asyncio
import time
from typing import Awaitable, Callable

from prompt_toolkit.application import Application
from prompt_toolkit.buffer import Buffer

from minicode.agent.approval import ApprovalRequest, Approver
from minicode.agent.asking import Question
from minicode.agent.events import Retrying
from minicode.cli.frontends.shared.permission_lines import startup_lines
from minicode.cli.frontends.tui.approval import ANSWER_WORDS, AutoApprover, PendingApproval, TuiApprover
from minicode.cli.frontends.tui.approval_keys import ApprovalKeys
from minicode.cli.frontends.tui.question import TuiAsker
from minicode.cli.frontends.tui.question_keys import QuestionKeys
from minicode.cli.frontends.tui.chooser import Chooser
from minicode.cli.frontends.tui.commands import Invocation, NearMiss, help_text, resolve
from minicode.cli.frontends.tui.draft import Pastes, Queued
from minicode.cli.frontends.tui.editor import Editor
from minicode.cli.frontends.tui.inputlog import InputLog
from minicode.cli.frontends.tui.items import HelpItem, RenderMarkdown
from minicode.cli.frontends.tui.pacing import StreamPacer
from minicode.cli.frontends.tui.paging import scroll_up
from minicode.cli.frontends.tui.running import TaskRunner
from minicode.cli.frontends.tui.session_like import SessionLike
from minicode.cli.frontends.tui.view import Scroll, Transcript
from minicode.exitcodes import EXIT_INTERRUPTED

__all__ = ["Controller", "Queued", "SessionLike"]

WHEEL_LINES = 3
SETTLE_SLICE = 0.01  # seconds of idle re-wrapping at a time (the rest after a resize) …
SETTLE_PAUSE = 0.01  # … and the pause between two slices, so keys and frames come first
SPINNER = "◐◓◑◒"


class Controller(TaskRunner, ApprovalKeys, QuestionKeys):
    """Everything the UI shows and does; the Application is attached with ``attach``."""

    def __init__(self, session: SessionLike, md: RenderMarkdown, *, auto_approve: bool = False,
                 max_turns: int = 500, timeout: float | None = None,
                 clock: Callable[[], float] = time.monotonic, history: InputLog | None = None) -> None:
        self.clock = clock
        """Seconds, monotonic: every time the UI measures comes from here (tests drive it)."""
        self.session = session
        self.transcript = Transcript(md, str(session.workspace))
        self.scroll = Scroll()
        self.editor = Editor(clock, history)
        self.queue: list[Queued] = []
        self.task: asyncio.Task[None] | None = None
        self._exit_task: asyncio.Future[None] | None = None
        self.task_kind = ""
        self.task_started = 0.0
        self._ticker: asyncio.Task[None] | None = None
        self._settler: asyncio.Task[None] | None = None
        self.pacer = StreamPacer()
        """How often streamed output is redrawn (``pacing.py``)."""
        self._stream_frame: asyncio.TimerHandle | None = None
        self._last_stream_frame = 0.0
        self._render_started = 0.0
        self._asked_request: ApprovalRequest | None = None
        self._ctrl_c_task: asyncio.Task[None] | None = None
        """The task a Ctrl+C interrupted: another Ctrl+C while it winds down leaves."""
        self.tui_approver = TuiApprover(self._approval_changed)
        # the draft used while a question waits: the highlight goes back to the first answer
        self.draft.on_text_changed += lambda _buffer: self.tui_approver.unhighlight()
        self.approver: Approver = AutoApprover() if auto_approve else self.tui_approver
        self._asked_question: Question | None = None
        self.tui_asker = TuiAsker(self._question_changed)
        """The model's questions are asked here, --yes or not: a person is at the screen."""
        self.max_turns = max_turns
        self.timeout = timeout
        self.exit_code = 0
        self.exiting = False
        self.view_size = (80, 24)  # transcript (width, height) at the last render
        self.total_lines = 0
        self.context = (0, 1)
        self.context_source = ""
        """Where the context window came from (``Session.context_source``)."""
        self.retry: tuple[Retrying, float] | None = None
        """The retry the provider is waiting for, and when it was announced (``clock``)."""
        self._app: Application[int] | None = None
        self._on_focus: Callable[[str], None] = lambda _name: None
        self.chooser = Chooser(self.invalidate, lambda name: self._on_focus(name), clock=clock,
                               flash=lambda text: self.flash(text), keep_typed=lambda text: self.editor.prepend(text))
        """The list being chosen from (/resume, /rewind, /undo's question), if one is open."""
        self.open_session: Callable[[str | None], Awaitable[SessionLike]] | None = None
        """Opens session ID (an id or unique prefix), or a new one for None (/resume, /new)."""

    def attach(self, app: Application[int], focus: Callable[[str], None]) -> None:
        self._app = app
        self._on_focus = focus
        app.key_processor.before_key_press += self._key_pressed
        app.before_render += self._before_render
        app.after_render += self._after_render

    def _before_render(self, _app: object) -> None:
        self._render_started = time.thread_time()

    def _after_render(self, _app: object) -> None:
        self.pacer.rendered(time.thread_time() - self._render_started)

    def _key_pressed(self, _processor: object) -> None:
        """A status message lasts until the next key (prompt_toolkit calls this before each
        key's handler, so a message the key itself sets stays; a terminal's answer to a
        cursor-position request does not count)."""
        self.editor.end_flash()

    @property
    def app(self) -> Application[int] | None:
        return self._app

    @property
    def draft(self) -> Buffer:
        return self.editor.draft

    @property
    def reason(self) -> Buffer:
        return self.editor.reason

    @property
    def pastes(self) -> Pastes:
        return self.editor.pastes

    def start(self) -> None:
        """The opening lines: session id and warnings."""
        self.transcript.note(f"session {self.session.id} · model {self.session.model}"
                             " · /help for keys and commands", "class:notice")
        for line in startup_lines(self.session.project_files, self.session.permissions.rules):
            self.transcript.note(line.removeprefix("minicode: "), "class:notice")
        self.transcript.replay(self.session.messages, self.session.tool_outcomes())
        for warning in self.session.warnings:
            self.transcript.note(warning, "class:warning", "! ")
        log = self.editor.log
        if log is not None and log.error is not None:
            self.transcript.note(log.error, "class:warning", "! ")
        self._refresh_context()
        try:  # the status line says the server's window as soon as it answers
            self.session.learn_context_window(self._context_learned)
        except RuntimeError:  # no event loop running (a test drawing one frame)
            pass

    def _context_learned(self) -> None:
        self._refresh_context()
        self.invalidate()

    # --- state for the layout -----------------------------------------------------------
    @property
    def busy(self) -> bool:
        return self.task is not None

    @property
    def pending(self) -> PendingApproval | None:
        return self.tui_approver.pending

    def state(self) -> str:
        if self.pending is not None:
            return "awaiting approval"
        if self.question is not None:
            return "awaiting your answer"
        if self.chooser.open:
            return "choosing"
        if self.task is None:
            return "idle"
        if self.retry is not None:
            event, announced = self.retry
            return event.describe(remaining=event.wait_seconds - (self.clock() - announced))
        if self.task_kind == "compact":
            return "compacting"
        if self.transcript.tool_running:
            return f"running tool {self.transcript.tool_running}"
        if self.transcript.checking:
            command = " ".join(self.transcript.checking.split())
            return f"checking {command if len(command) <= 40 else command[:39] + '…'}"
        return "streaming" if self.transcript.streaming else "thinking"

    def activity(self) -> str:
        """The state with a spinner and the elapsed time while a task runs: "◓ thinking 12s"."""
        if self.task is None:
            return self.state()
        seconds = int(self.clock() - self.task_started)
        elapsed = f"{seconds}s" if seconds < 60 else f"{seconds // 60}m {seconds % 60:02d}s"
        return f"{SPINNER[seconds % len(SPINNER)]} {self.state()} {elapsed}"

    def invalidate(self) -> None:
        if self._app is not None:
            self._app.invalidate()  # coalesced by the Application's min_redraw_interval

    def settle_soon(self) -> None:
        """Re-wrap, in the background, what no frame has shown at the current width (after
        a resize, or the blocks a fast stream scrolled past); only while the view follows the
        bottom, so nothing above a scrolled-up view changes height under it."""
        if self._app is not None and (self._settler is None or self._settler.done()):
            self._settler = asyncio.ensure_future(self._settle())

    async def _settle(self) -> None:
        await asyncio.sleep(SETTLE_PAUSE)  # the frame that asked goes out first
        while not self.exiting and self.scroll.follow:
            deadline = self.clock() + SETTLE_SLICE
            if self.transcript.settle(self.view_size[0], lambda: self.clock() < deadline and self.scroll.follow):
                return
            await asyncio.sleep(SETTLE_PAUSE)

    def flash(self, text: str) -> None:
        """A short message in the status bar (it clears itself)."""
        self.editor.flash(text)
        self.invalidate()
        if self._app is not None:
            asyncio.get_running_loop().call_later(4.1, self.invalidate)

    # --- submitting ---------------------------------------------------------------------
    def submit(self) -> None:
        p = self.pending
        if p is not None and not p.asking_reason and self.draft.text.strip().lower() in ANSWER_WORDS:
            # "y" + Enter out of habit: not an answer, and not a task for the model either
            self.flash(f"“{self.draft.text.strip()}” is not an answer: empty the draft, choose with ↑↓, then Enter")
            return
        q = self.question
        typed = self.draft.text.strip().casefold()
        if q is not None and not q.typing and (typed in ANSWER_WORDS or typed in (r.casefold() for r in q.rows)):
            # the question's own words sent as a message: meant as the answer, so neither
            self.flash(f"“{self.draft.text.strip()}” is not an answer: empty the draft, choose with ↑↓ or 1-9, "
                       "then Enter")
            return
        entry = self.editor.take()
        if entry is not None:
            self.dispatch(entry.text, shown=entry.shown, pastes=entry.pastes)

    def dispatch(self, text: str, shown: str | None = None,
                 pastes: tuple[tuple[str, str], ...] = ()) -> None:
        """Run ``text`` (a command or a message); ``shown`` is how the transcript shows it
        (large pastes as their placeholders)."""
        shown = text if shown is None else shown
        resolved = resolve(text)
        if isinstance(resolved, NearMiss):  # a typo of a command is never sent as a task
            self.notice(resolved.message())
            self._give_back(shown, pastes)
        elif isinstance(resolved, Invocation) and resolved.argument and not resolved.command.arguments:
            self.notice(f"{resolved.command.name} takes no arguments")
            self._give_back(shown, pastes)
        elif self.busy and isinstance(resolved, Invocation) and resolved.command.asks:
            # never queued: its question would pop up while the user types the next message
            # (not put back into the draft: what is typed next would run on after it; Up recalls it)
            self.notice(f"{resolved.command.name} asks a question: wait for the task to end, or press Esc to stop it")
        elif self.busy and not (isinstance(resolved, Invocation) and resolved.command.while_busy):
            self.queue.append(Queued(text, shown, pastes))
        elif isinstance(resolved, Invocation):
            self.echo(shown)
            resolved.command.run(self, resolved.argument)
        else:
            self.echo(shown)
            self.launch(self.session.turn(text, approver=self.approver, emit=self.on_event, asker=self.tui_asker,
                                          max_turns=self.max_turns, timeout=self.timeout), "turn")
        self.scroll.to_bottom()
        self.invalidate()

    # --- what commands use (see commands.py) --------------------------------------------
    def echo(self, shown: str) -> None:
        """The user's line in the transcript, as they typed it."""
        self.transcript.note(shown, "class:user", "› ")

    def notice(self, text: str) -> None:
        """A short message for the user (not sent anywhere), in the transcript."""
        self.transcript.note(text, "class:warning", "! ")

    def show_help(self) -> None:
        self.transcript.add(HelpItem(help_text(), "class:help"))

    def compact(self) -> None:
        self.launch(self.session.compact(emit=self.on_event), "compact")

    def edit_checks(self, argument: str) -> None:
        """/check: list the acceptance checks, add ``argument`` as one, or ``--clear`` them.
        A task already running keeps the checks it started with."""
        from minicode.cli.frontends.shared.check_edit import edit_checks

        done, text = edit_checks(self.session.checks, argument, " from the next task on" if self.busy else "")
        if done:
            self.transcript.note(text, "class:notice", "· ")
        else:
            self.notice(text)

    def leave(self) -> None:
        """/exit, Ctrl+D, Ctrl+C on an empty draft: leave; 130 when that stops a running task.
        Queued messages are not sent: the printout says so (the input history keeps them)."""
        if self.queue and not self.exiting:
            count = len(self.queue)
            first = self.queue[0].shown.split("\n", 1)[0][:80]
            self.notice(f"{count} queued message{'s were' if count > 1 else ' was'} not sent (“{first}”"
                        f"{' …' if count > 1 else ''}): Up recalls {'them' if count > 1 else 'it'} next time")
            self.queue.clear()
        self.exit(EXIT_INTERRUPTED if self.busy else 0)

    def _give_back(self, shown: str, pastes: tuple[tuple[str, str], ...]) -> None:
        """Put a refused line back into an empty draft, so fixing a typo is one edit."""
        if not self.draft.text:
            self.editor.set_draft(shown, pastes)

    def _refresh_context(self) -> None:
        try:
            self.context = self.session.context_usage()
            self.context_source = self.session.context_source
        except Exception:  # the status bar must never take the UI down
            pass

    # --- interrupts and exit ------------------------------------------------------------
    def ctrl_c(self) -> None:
        """Ctrl+C: clear what is being written (reason, search, draft); with nothing written,
        interrupt a running task (like Esc: queued messages come back into the draft), and
        leave only when there is no task — or it is the second Ctrl+C for the same task."""
        if self.pending is not None and self.pending.asking_reason:
            if self.reason.text:
                self.reason.reset()
            else:
                self.reason_back()
        elif self.question is not None and self.question.typing:
            if self.editor.answer.text:
                self.editor.answer.reset()
            else:
                self.answer_back()
        elif self.editor.searching:
            self.end_search(accept=False)
        elif self.editor.clear():
            self.flash("draft cleared — Up brings it back")
        elif self.task is not None and self.task is not self._ctrl_c_task:
            self._ctrl_c_task = self.task
            self.interrupt()
            self.flash("interrupted — Ctrl+C again on an empty draft leaves")
        else:
            self.leave()
        self.invalidate()

    # --- history ----------------------------------------------------------------------------
    def recalling(self) -> bool:
        return self.editor.recalling()

    def recall(self, step: int) -> None:
        """Up (``step`` -1) / Down (+1) through the input history; past the newest the draft
        is empty again. Recalled pastes come back as their placeholders."""
        self.editor.recall_step(step)
        self.invalidate()

    def start_search(self) -> None:
        self.editor.start_search()
        self._on_focus("search")
        self.invalidate()

    def end_search(self, accept: bool) -> None:
        self.editor.end_search(accept)
        self._on_focus("draft")
        self.invalidate()

    # --- scrolling ----------------------------------------------------------------------
    def scroll_lines(self, delta: int) -> None:
        width, height = self.view_size
        if delta < 0 and width > 0:  # measured by what the new view shows (paging.py)
            self.total_lines = scroll_up(self.transcript, self.scroll, width, height, -delta)
        else:
            self.scroll.scroll(delta, self.total_lines, height)
        self.invalidate()

    def scroll_page(self, direction: int) -> None:
        self.scroll_lines(direction * max(1, self.view_size[1] - 1))

    def to_top(self) -> None:
        self.scroll_lines(-self.total_lines)

    def follow(self) -> None:
        self.scroll.to_bottom()
        self.invalidate()

    def toggle_reasoning(self) -> None:
        if not self.transcript.toggle_reasoning():
            self.transcript.note("no reasoning to show yet", "class:notice", "· ")
            self.scroll.to_bottom()
        self.invalidate()

    def toggle_paste(self) -> None:
        self.editor.toggle_paste()

    def paste(self, data: str) -> None:
        self.editor.paste(data)
