"""The sockets of a provider's exchanges: which exchange owns each one, and shutting one down
so that a thread blocked on it wakes at once (``exchange.py``, ``early.py``). Standard library only.
"""

from __future__ import annotations

import socket
import threading

__all__ = ["SocketRegistry", "shut_down"]


class SocketRegistry:
    """The sockets a provider's client has opened, and which exchange uses each one.

    An exchange that is aborted while a reused keep-alive connection waits for the response
    head cannot know which socket that is; it is one of those no live exchange claims, so
    those are the ones shut down (they are idle or it, and an idle one is simply reopened).
    """

    def __init__(self) -> None:
        self._owners: dict[socket.socket, object | None] = {}
        self._lock = threading.Lock()

    def claim(self, sock: socket.socket, owner: object) -> None:
        with self._lock:
            for known in [s for s in self._owners if s.fileno() == -1]:
                del self._owners[known]  # closed: forget it
            self._owners[sock] = owner

    def release(self, owner: object) -> None:
        with self._lock:
            for sock, current in self._owners.items():
                if current is owner:
                    self._owners[sock] = None

    def release_one(self, sock: socket.socket) -> None:
        with self._lock:
            if sock in self._owners:
                self._owners[sock] = None

    def shutdown_unclaimed(self) -> None:
        with self._lock:
            idle = [s for s, owner in self._owners.items() if owner is None]
        for sock in idle:
            shut_down(sock)


def shut_down(sock: socket.socket) -> None:
    """End the connection at once, waking a thread blocked reading or writing it."""
    # The plain socket method, also for an SSLSocket: its own shutdown() would detach the
    # TLS object under the reading thread; this only ends the connection, waking the read.
    try:
        socket.socket.shutdown(sock, socket.SHUT_RDWR)
    except OSError:  # already closed or never connected
        pass
