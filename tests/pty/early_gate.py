"""``minicode`` with a gate after its early frame, for tests/pty/test_early_frame_pty.py.

Run as the program (``python early_gate.py ARGS``): the same as ``bin/minicode``, except that
right after the early frame is drawn it writes ``$MINICODE_TEST_GATE.reached`` and waits
until ``$MINICODE_TEST_GATE`` exists — so a test can type, resize or signal in the moment
between the early frame and the application, deterministically (the modules loaded by then
go to ``$MINICODE_TEST_GATE.modules``). Nothing of minicode changes.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "src"))

import minicode.cli.tui.early as early  # noqa: E402

_show = early.show


def _gated(*args, **kwargs):  # type: ignore[no-untyped-def]
    frame = _show(*args, **kwargs)
    gate = Path(os.environ["MINICODE_TEST_GATE"])
    Path(f"{gate}.modules").write_text(" ".join(sorted(sys.modules)))  # what the frame cost to import
    # Written whole, then renamed: the test reads it as soon as the name exists.
    Path(f"{gate}.reached.part").write_text("drawn" if frame is not None else "none")
    os.replace(f"{gate}.reached.part", f"{gate}.reached")
    while not gate.exists():  # the test opens it once it has done its part
        time.sleep(0.01)
    return frame


early.show = _gated

if __name__ == "__main__":
    from minicode.entry import run

    run()
