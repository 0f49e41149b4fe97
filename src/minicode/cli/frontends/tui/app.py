"""The interactive full-screen session: wires Session, Controller, layout and keys, and runs them.

``run`` is what ``cli.main`` calls when stdin and stdout are terminals and no TASK is given.
One ``Application(full_screen=True, mouse_support=True)`` runs on the same asyncio loop as
the agent. prompt_toolkit restores the terminal (main screen, cursor, echo and line mode,
mouse and bracketed paste) when ``run_async`` returns or raises; only after that do we print
the transcript of this run to the normal screen, any crash, and the resume command.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import shutil
import signal
import sys
import threading
import time
import traceback
from pathlib import Path
from typing import TYPE_CHECKING, Any, Awaitable, Callable, Mapping, TextIO

from prompt_toolkit import print_formatted_text
from prompt_toolkit.application import Application
from prompt_toolkit.data_structures import Size
from prompt_toolkit.formatted_text import FormattedText, StyleAndTextTuples
from prompt_toolkit.input import Input, create_input
from prompt_toolkit.output import Output
from prompt_toolkit.output.vt100 import Vt100_Output

from minicode.cli.frontends.tui.burst import BurstInput
from minicode.cli.frontends.tui.inputlog import InputLog
from minicode.cli.frontends.tui.keys import create_key_bindings
from minicode.cli.frontends.tui.layout import STYLE, build_layout
from minicode.cli.frontends.tui.markdown import MarkdownRenderer, warm_up
from minicode.cli.frontends.tui.pt_private import resize_ok, screen_diff_ok
from minicode.cli.frontends.tui.repaint import RepaintRenderer
from minicode.cli.frontends.tui.controller import Controller
from minicode.cli.frontends.tui.session_like import SessionLike
from minicode.cli.frontends.tui.items import Line
from minicode.exitcodes import EXIT_INTERRUPTED
from minicode.cli.frontends.tui.view import Transcript, exit_lines, plain_text

if TYPE_CHECKING:
    from minicode.cli.args import Options
    from minicode.config import Config, ModelConfig
    from minicode.provider.base import Provider
    from minicode.provider.deferred import DeferredProvider

__all__ = ["create_application", "print_transcript", "run", "run_controller"]

REDRAW_INTERVAL = 0.05  # the streaming entry is redrawn at most every 50 ms
ESCAPE_WAIT = 0.25  # how long a lone Esc waits for the rest of an Alt/CSI sequence
LEAVE_SIGNALS = (signal.SIGTERM, signal.SIGHUP, signal.SIGINT)
"""Signals that leave the full screen as a stop (exit 130). The terminal is in raw mode, so
Ctrl+C is a key there, never SIGINT: a SIGINT comes from outside (``kill -INT``) and stops
minicode like SIGTERM, as docs/usage.md says."""
"""Signals that leave the app as Ctrl+C does (exit 130; a running task is stopped and saved)."""


class _Application(Application[int]):
    """prompt_toolkit's Application, except that a resize keeps bracketed paste and mouse
    reporting on: its resize erases the screen, which switches both off until the next frame
    is out, and a paste in that window would arrive as plain keys."""

    def _on_resize(self) -> None:
        if not resize_ok():  # private API (pt_private.py): another prompt_toolkit gets its own resize
            super()._on_resize()
            return
        self.renderer.erase(leave_alternate_screen=False)
        renderer: Any = self.renderer
        self.output.enable_bracketed_paste()
        renderer._bracketed_paste_enabled = True
        if self.mouse_support():
            self.output.enable_mouse_support()
            renderer._mouse_support_enabled = True
        self.output.flush()
        self._request_absolute_cursor_position()
        self._redraw()


def create_application(controller: Controller, *, input: Input | None = None,
                       output: Output | None = None) -> Application[int]:
    """The Application for ``controller``; ``input``/``output`` are injectable for tests.
    The input is read through ``BurstInput``: a burst of plain keys is a paste."""
    layout = build_layout(controller)
    app: Application[int] = _Application(
        layout=layout.layout,
        key_bindings=create_key_bindings(controller),
        style=STYLE,
        full_screen=True,
        mouse_support=True,
        min_redraw_interval=REDRAW_INTERVAL,
        input=BurstInput(input if input is not None else create_input(), controller.clock),
        output=output,
    )
    app.timeoutlen = ESCAPE_WAIT
    app.ttimeoutlen = 0.05
    stock = app.renderer  # the same renderer, plus scrolling the terminal and equal-row skipping
    if screen_diff_ok():  # its private screen diff is the one repaint.py was written for (pt_private.py)
        app.renderer = RepaintRenderer(stock.style, stock.output, full_screen=stock.full_screen,
                                       mouse_support=stock.mouse_support,
                                       cpr_not_supported_callback=stock.cpr_not_supported_callback,
                                       scroll_hint=layout.transcript_window.take_scroll)
    controller.attach(app, layout.focus)
    return app


async def run_controller(controller: Controller, app: Application[int]) -> int:
    """Run the app until it exits; SIGTERM, SIGHUP (the terminal closed) and an outside SIGINT
    leave like Ctrl+C.
    The task never outlives it."""
    loop = asyncio.get_running_loop()
    installed: list[signal.Signals] = []
    # prompt_toolkit and asyncio leave SIGINT/SIGTERM at their own defaults when they remove
    # their handlers; the handlers found before (minicode.entry's: exit 130) come back after.
    previous = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, *LEAVE_SIGNALS)}
    try:
        for sig in LEAVE_SIGNALS:
            loop.add_signal_handler(sig, controller.exit, EXIT_INTERRUPTED)
            installed.append(sig)
    except (NotImplementedError, RuntimeError, ValueError):
        pass  # not the main thread (tests) or no signal support: nothing to restore
    try:
        code = await app.run_async(handle_sigint=False)  # ours above: prompt_toolkit's would swallow it
    finally:
        for sig in installed:
            loop.remove_signal_handler(sig)
        _restore(previous)
        task = controller.task
        if task is not None:  # the app died under a running task: stop it so it saves
            controller.exiting = True
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
    return controller.exit_code if code is None else code


def _after_first_render(app: Application[int], action: Callable[[], None]) -> None:
    done = False

    def fire(_: object) -> None:
        nonlocal done
        if not done:
            done = True
            action()

    app.after_render += fire


def _after_first_frame(first_frame: Callable[[], None] | None) -> None:
    """Work the first frame did not wait for: rich and its company load on a thread (the
    first answer would otherwise load them while it streams), then the caller's own."""
    threading.Thread(target=warm_up, name="minicode-markdown", daemon=True).start()
    if first_frame is not None:
        first_frame()


def _restore(handlers: dict[signal.Signals, Any]) -> None:
    for sig, handler in handlers.items():
        if handler is not None:
            with contextlib.suppress(ValueError, OSError):  # not the main thread (tests)
                signal.signal(sig, handler)


def print_transcript(transcript: Transcript, out: TextIO, width: int) -> None:
    """The run's transcript on the normal screen: styled (ANSI) on a terminal, plain otherwise,
    so the terminal's scrollback keeps it looking as it did and a redirect gets clean text."""
    if not _is_terminal(out):
        out.write(plain_text(transcript, width) + "\n")
        out.flush()
        return
    fragments: StyleAndTextTuples = []
    for line in exit_lines(transcript, width):
        fragments.extend(_rstrip(line))
        fragments.append(("", "\n"))
    output = Vt100_Output(out, lambda: Size(rows=24, columns=width))
    print_formatted_text(FormattedText(fragments), style=STYLE, output=output, end="",
                         include_default_pygments_style=False)
    out.flush()


def _rstrip(line: Line) -> Line:
    """``line`` without trailing unstyled padding (it would wrap after the terminal narrows)."""
    frags = list(line)
    while frags and "bg:" not in frags[-1][0] and not frags[-1][1].rstrip():
        frags.pop()
    if frags and "bg:" not in frags[-1][0]:
        frags[-1] = (frags[-1][0], frags[-1][1].rstrip())
    return tuple(frags)


def _is_terminal(out: TextIO) -> bool:
    try:
        return out.isatty()
    except (AttributeError, ValueError):  # closed or not a real stream
        return False


def run(options: Options, config: Config, workspace: Path, env: Mapping[str, str]) -> int:
    """The interactive mode; returns the exit code (0 when left idle, 130 when leaving stopped a
    running task or on SIGTERM, 1 on a crash)."""
    return asyncio.run(_main(options, config, workspace, env))


async def _main(options: Options, config: Config, workspace: Path, env: Mapping[str, str]) -> int:
    from minicode.session.opening import deferred_provider
    from minicode.session.records import SessionSettings
    from minicode.session.session import Session
    from minicode.telemetry import create_tracer

    # The tracer may warn from a background thread while the screen is ours: keep the
    # lines (list.append is atomic) and show them after the terminal is restored.
    tracer_warnings: list[str] = []
    tracer = create_tracer(config.langfuse, warn=tracer_warnings.append, secrets=[config.model.api_key])
    opened: list[Session] = []
    providers: list[DeferredProvider] = []

    def make_provider(model: ModelConfig) -> Provider:
        """Built on first use: the first frame does not wait for the HTTP client (see warm)."""
        provider = deferred_provider(model, env)
        providers.append(provider)
        return provider

    def warm() -> None:
        """After the first frame: build the first session's provider on a thread meanwhile."""
        if providers:
            threading.Thread(target=providers[0].warm, name="minicode-provider", daemon=True).start()

    async def open_session(resume: str | None, continue_latest: bool = False) -> Session:
        """The first session, and each one /resume or /new switches to (the last is current)."""
        session = await Session.open(
            config=config, workspace=workspace, env=env, resume=resume, continue_latest=continue_latest,
            tracer=tracer if not opened else create_tracer(config.langfuse, warn=tracer_warnings.append,
                                                          secrets=[config.model.api_key]),
            pinned=SessionSettings(options.model, options.think), make_provider=make_provider,
            mcp_attended=not options.yes,  # --yes: an unattended run, a sign-in is not waited for
        )
        opened.append(session)
        return session

    session = await open_session(options.session, options.continue_session)
    try:
        return await _run_session(session, options, open_session=open_session, first_frame=warm)
    finally:
        await opened[-1].aclose()  # the ones before were closed when /resume or /new left them
        with contextlib.suppress(OSError):  # the terminal hung up
            for line in tracer_warnings:
                print(line, file=sys.stderr)


async def _run_session(session: SessionLike, options: Options, *, stdout: TextIO | None = None,
                       stderr: TextIO | None = None, input: Input | None = None,
                       output: Output | None = None, clock: Callable[[], float] = time.monotonic,
                       started: Callable[[Controller], None] | None = None,
                       open_session: Callable[[str | None], Awaitable[SessionLike]] | None = None,
                       first_frame: Callable[[], None] | None = None) -> int:
    """Run the UI over ``session``; the streams, terminal, clock and a hook that gets the
    controller once it is made are injectable for tests. ``first_frame`` runs once the first
    frame is out (work the screen need not wait for)."""
    out = stdout or sys.stdout
    err = stderr or sys.stderr
    controller = Controller(session, MarkdownRenderer(), auto_approve=options.yes,
                            max_turns=options.max_turns, timeout=options.timeout, clock=clock,
                            history=InputLog(session.workspace))
    def show_signin(line: str) -> None:
        controller.transcript.note(line, "class:notice", "· ")
        controller.invalidate()

    def signin_shown(opened: SessionLike) -> SessionLike:
        """A remote MCP server's sign-in address as a notice at once, not with the next task's events."""
        manager = getattr(opened, "mcp", None)
        if manager is not None:
            manager.show_signin(show_signin)
        return opened

    async def switch(resume: str | None) -> SessionLike:
        assert open_session is not None
        return signin_shown(await open_session(resume))

    signin_shown(session)
    controller.open_session = switch if open_session is not None else None  # /resume and /new
    controller.start()
    if options.plan:  # --plan: plan mode from the start, like typing /plan
        controller.dispatch("/plan")
    if started is not None:
        started(controller)
    crash: BaseException | None = None
    code = 1
    try:
        app = create_application(controller, input=input, output=output)
        _after_first_render(app, lambda: _after_first_frame(first_frame))
        code = await run_controller(controller, app)
    except OSError as e:
        if e.errno != errno.EIO:
            crash = e
        else:  # the terminal hung up (closed window, dropped ssh): a stop like SIGHUP, not a crash
            code = controller.exit_code if controller.exiting else EXIT_INTERRUPTED
    except Exception as e:  # the top of the UI: report after the terminal is restored
        crash = e
    # A terminal that hung up (SIGHUP: it was closed) fails these writes: the session is
    # saved already and nobody is left to read them.
    with contextlib.suppress(OSError):
        print_transcript(controller.transcript, out, shutil.get_terminal_size().columns)
    with contextlib.suppress(OSError):
        if crash is not None:
            err.write("minicode: the interactive session crashed:\n")
            err.write("".join(traceback.format_exception(crash)))
        session = controller.session  # /resume and /new may have switched
        if not (session.is_new and session.is_empty):  # else the file is removed: nothing to resume
            err.write(f"minicode: resume with: {session.resume_command}\n")
        err.flush()
    return code
