"""The early frame: the full screen drawn before prompt_toolkit, rich and the agent load.

Importing the application costs a few hundred milliseconds; the screen need not wait for
it. As soon as the arguments and the configuration say "full screen on a terminal" (after
any question asked on the plain terminal: the workspace, the first-run setup), ``show``
switches to the alternate screen and draws, in plain ANSI, the layout the application draws
a moment later (``early_frame.py``): the opening note, a resumed session's last entries
(read from the end of its file only: ``early_tail.py``), the status bar and the empty input.
The application's first render then replaces it in one write (same rows: nothing jumps).

The terminal is put in the input mode prompt_toolkit uses (no echo, no line editing, no
CR→NL translation) at that moment, with signals still on: keys typed meanwhile stay in the
terminal's buffer, unechoed, and the application reads them as its first input (a burst is a
paste there, so a typed Enter does not submit). prompt_toolkit restores the mode it found —
this one — so the attributes from before are restored here, on every way out: ``restore``
after the application (``cli.main``), at exit (``atexit``), on a stop signal before the
application has its handlers (``minicode.entry.on_stop``); if the application ends without
ever drawing, ``release_screen`` leaves the alternate screen before anything is printed, and
what was typed for it is discarded (it was meant for the draft, not for the shell).

No early frame (the application starts as before) when the terminal is dumb or unknown,
smaller than ``MIN_SIZE``, not a terminal, or the session to resume cannot be found by name
(the application reports that). Light: no prompt_toolkit, rich, agent or session modules.
"""

from __future__ import annotations

import os
import sys

from minicode.cli.tui.early_frame import LEAVE, frame_bytes, status_text, transcript_lines

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any, Mapping

    from minicode.cli.args import Options
    from minicode.cli.tui.early_tail import Entry, Tail
    from minicode.config import Config

__all__ = ["MIN_SIZE", "EarlyFrame", "handed_over", "release_screen", "restore", "show"]

MIN_SIZE = (20, 5)
"""Columns and rows below which no early frame is drawn (the application copes alone)."""
_DUMB = ("", "dumb", "unknown")


class EarlyFrame:
    """The early frame on screen and the terminal attributes it replaced."""

    def __init__(self, fd_in: int, fd_out: int, saved: list[Any], new_id: str | None) -> None:
        self.fd_in, self.fd_out = fd_in, fd_out
        self.saved = saved
        self.new_id = new_id
        """The id a new session gets (the frame showed it), or None when resuming."""
        self.screen_ours = True
        """The alternate screen is ours to leave (the application has not drawn yet)."""
        self.app_drew = False
        self.restored = False

    def handed_over(self) -> None:
        """The application has drawn: the screen (and leaving it) is prompt_toolkit's now."""
        self.screen_ours = False
        self.app_drew = True

    def release_screen(self) -> None:
        """Leave the alternate screen if the application never drew (it failed first)."""
        if self.screen_ours:
            self.screen_ours = False
            _write(self.fd_out, LEAVE.encode())

    def restore(self) -> None:
        """The terminal as it was before the frame: main screen, attributes (once)."""
        if self.restored:
            return
        self.restored = True
        self.release_screen()
        import termios

        try:
            if not self.app_drew:  # keys typed for a draft that never came: not for the shell
                termios.tcflush(self.fd_in, termios.TCIFLUSH)
            termios.tcsetattr(self.fd_in, termios.TCSANOW, self.saved)
        except (termios.error, OSError):  # the terminal is gone (hung up): nothing to restore
            pass


_active: EarlyFrame | None = None


def restore() -> None:
    if _active is not None:
        _active.restore()


def handed_over() -> None:
    if _active is not None:
        _active.handed_over()


def release_screen() -> None:
    if _active is not None:
        _active.release_screen()


def show(options: Options, config: Config, workspace: Path, env: Mapping[str, str]) -> EarlyFrame | None:
    """Draw the early frame and take the terminal's input mode, or None (see the module doc)."""
    global _active
    fd_in, fd_out = _descriptors()
    if fd_in is None or fd_out is None or env.get("TERM", "") in _DUMB:
        return None
    try:
        width, height = os.get_terminal_size(fd_out)
    except OSError:
        return None
    if width < MIN_SIZE[0] or height < MIN_SIZE[1]:
        return None
    picked = _session_to_show(options, workspace)
    if picked is None:
        return None
    session_id, path = picked
    area = height - 2
    tail = None
    if path is not None:  # resuming: the end of its file (a new session needs no json, no previews)
        from minicode.cli.tui.early_tail import read_tail

        tail = read_tail(str(path), lambda entries: len(transcript_lines("", entries, width)) > area)
        if tail is None:
            return None
    model = options.model or (tail.model if tail else None) or config.model.name
    thinking = options.think or (tail.thinking if tail else None) or config.model.thinking
    note = f"session {session_id} · model {model} · /help for keys and commands"
    lines = transcript_lines(note, _entries(tail), width)
    frame = _take_terminal(fd_in, fd_out, None if path else session_id)
    if frame is None:
        return None
    _active = frame
    color = "NO_COLOR" not in env
    _write(fd_out, frame_bytes(lines, status_text(model, thinking, session_id, width), width, height, color=color))
    return frame


def _entries(tail: Tail | None) -> list[Entry]:
    if tail is None or not tail.entries:
        return []
    if tail.messages is None:  # only the end was read: the "resumed" note is far above
        return tail.entries
    return [("notice", f"resumed session · {tail.messages:,} messages", "↺ "), *tail.entries]


def _session_to_show(options: Options, workspace: Path) -> tuple[str, Path | None] | None:
    """(session id, its file) to resume, (a new id, None) for a new session, or None when
    the session cannot be told from names alone (the application says why)."""
    from minicode.session.files import SESSIONS_DIR, is_session_id, latest_session_id, random_uuid, session_path

    workspace = workspace.resolve()
    if options.session is None and not options.continue_session:
        return random_uuid(), None
    try:
        if options.session is None:
            found = latest_session_id(workspace)
        else:
            wanted = options.session.strip().lower()
            names = [n.removesuffix(".jsonl") for n in os.listdir(workspace / SESSIONS_DIR)
                     if n.startswith(wanted) and n.endswith(".jsonl")]
            found = names[0] if len(names) == 1 and is_session_id(names[0]) else None
    except Exception:  # noqa: BLE001 - any doubt (unreadable directory …): the application decides
        return None
    return (found, session_path(workspace, found)) if found is not None else None


def _descriptors() -> tuple[int | None, int | None]:
    try:
        fd_in, fd_out = sys.stdin.fileno(), sys.stdout.fileno()
    except (AttributeError, ValueError, OSError):  # replaced (tests) or closed
        return None, None
    return (fd_in, fd_out) if os.isatty(fd_in) and os.isatty(fd_out) else (None, None)


def _take_terminal(fd_in: int, fd_out: int, new_id: str | None) -> EarlyFrame | None:
    """prompt_toolkit's input mode (its ``raw_mode`` minus ISIG: Ctrl+C still stops a start),
    set without flushing what was typed; the restores registered."""
    import atexit
    import termios

    try:
        saved = termios.tcgetattr(fd_in)
        mode = termios.tcgetattr(fd_in)
        mode[0] &= ~(termios.IXON | termios.IXOFF | termios.ICRNL | termios.INLCR | termios.IGNCR)
        mode[3] &= ~(termios.ECHO | termios.ICANON | termios.IEXTEN)
        mode[6][termios.VMIN], mode[6][termios.VTIME] = 1, 0
        termios.tcsetattr(fd_in, termios.TCSANOW, mode)
    except (termios.error, OSError):
        return None
    frame = EarlyFrame(fd_in, fd_out, saved, new_id)
    atexit.register(frame.restore)
    entry = sys.modules.get("minicode.entry")
    if entry is not None:  # started as the executable: its stop handler restores first
        entry.on_stop(frame.restore)
    return frame


def _write(fd: int, data: bytes) -> None:
    try:
        while data:
            data = data[os.write(fd, data):]
    except OSError:  # the terminal hung up: nobody to show it to
        pass
