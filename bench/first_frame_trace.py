"""Run minicode with CPU-time marks on the way to its first full-screen frame (bench/resume.py --phases).

Used as the program instead of the ``minicode`` script: ``python bench/first_frame_trace.py ARGS``.
Each mark is one JSON line ``{"mark": name, "cpu": seconds}`` appended to the file named by
``MINICODE_BENCH_TRACE``; ``cpu`` is the process's CPU time since it started (interpreter
start-up included), so the marks add up to what the first frame cost. The hooks wrap a few
functions from outside; nothing of minicode is changed.
"""

from __future__ import annotations

import json
import os
import sys
import time

_OUT = open(os.environ["MINICODE_BENCH_TRACE"], "a", encoding="utf-8")  # noqa: SIM115 - open for the run


def mark(name: str) -> None:
    _OUT.write(json.dumps({"mark": name, "cpu": time.process_time()}) + "\n")
    _OUT.flush()


mark("interpreter up")


class _FirstImport:
    """A meta-path finder that only marks when a watched package is first imported."""

    watched = {"rich": "markdown stack import begins"}

    def find_spec(self, name: str, path: object, target: object = None) -> None:
        label = self.watched.pop(name, None)
        if label is not None:
            mark(label)
        return None


def _install() -> None:
    import minicode.cli.main as cli

    dispatch = cli._dispatch

    def traced_dispatch(options, prepared):  # type: ignore[no-untyped-def]
        mark("arguments and config")
        _hook_app()
        return dispatch(options, prepared)

    cli._dispatch = traced_dispatch


def _hook_app() -> None:
    """Import the interface and session modules (marked), then mark the steps after them."""
    import minicode.cli.frontends.tui.app as app
    from minicode.session.session import Session

    try:
        from minicode.provider.deferred import DeferredProvider
    except ImportError:  # a build from before the deferred provider (--compare)
        DeferredProvider = None  # noqa: N806

    mark("interface and session modules imported")
    sys.meta_path.insert(0, _FirstImport())  # type: ignore[arg-type]
    open_session = Session.open.__func__  # type: ignore[attr-defined]

    async def traced_open(cls, **kwargs):  # type: ignore[no-untyped-def]
        session = await open_session(cls, **kwargs)
        mark("session opened")
        return session

    Session.open = classmethod(traced_open)  # type: ignore[assignment]
    make = app.create_application

    def traced_make(*args, **kwargs):  # type: ignore[no-untyped-def]
        mark("controller started (history replayed)")
        application = make(*args, **kwargs)
        mark("application built")
        application.after_render += _once(lambda: mark("first frame drawn"))
        return application

    app.create_application = traced_make
    if DeferredProvider is not None:
        warm = DeferredProvider.warm

        def traced_warm(self):  # type: ignore[no-untyped-def]
            warm(self)
            mark("provider built (after the first frame)")

        DeferredProvider.warm = traced_warm  # type: ignore[method-assign]


def _once(action):  # type: ignore[no-untyped-def]
    done = []

    def fire(_):  # type: ignore[no-untyped-def]
        if not done:
            done.append(True)
            action()

    return fire


if __name__ == "__main__":
    _install()
    from minicode.entry import main

    sys.exit(main())  # as the minicode executable
