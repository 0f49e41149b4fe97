"""Which command guard server this process uses: started on first use, replaced when it dies,
ended at exit.

``current()`` starts the server (``guardclient.GuardServer``) on first use and hands it out
until it dies; the next use then starts a new one, up to ``_MAX_FAILED_STARTS`` servers that die
before they ever answer (then None: each command runs under its own guard, ``tools.spawn``).
At exit minicode ends it and reaps it. A forked child (``owner``) never uses
or stops its parent's server.
"""

from __future__ import annotations

import atexit
import os
import socket
import sys
import threading

from minicode.tools.guardclient import GuardServer

__all__ = ["current"]

_MAX_FAILED_STARTS = 2
_EXIT_WAIT_S = 1.0  # the server's grace for commands still running is 0.5 s

_current: GuardServer | None = None
_failed_starts = 0
_exit_hook = False
_starting = threading.Lock()
"""Held while a server starts (a few ms): two commands at once never start two."""


def current() -> GuardServer | None:
    """This process's server, started if needed; None where none can run (then the caller
    guards each command on its own)."""
    with _starting:
        return _current_or_new()


def _current_or_new() -> GuardServer | None:
    global _current, _failed_starts
    server = _current
    if server is not None and server.unsupported:
        return None
    if server is not None and server.alive and server.owner == os.getpid():
        return server
    if server is not None and server.owner == os.getpid():
        server.close()
        if not server.ready:
            _failed_starts += 1  # it died before it ever answered
    _current = None
    if not sys.executable or _failed_starts >= _MAX_FAILED_STARTS or not hasattr(socket, "SOCK_SEQPACKET"):
        return None
    try:
        _current = GuardServer()
    except (OSError, ValueError):
        _failed_starts += 1
        return None
    global _exit_hook
    if not _exit_hook:
        _exit_hook = True
        atexit.register(_stop_at_exit)
    return _current


def _stop_at_exit() -> None:
    """At minicode's exit: end the server and reap it (~1 ms), so it never outlives minicode
    and its CPU (and its commands') counts as minicode's, as a guard per command's did. Also
    reaps a server that died (the wait returns at once once reaped)."""
    server = _current
    if server is not None and server.owner == os.getpid():
        server.stop()
        server.wait(_EXIT_WAIT_S)
