"""The real executable loads its modules from the bytecode bundle once a run has written it
(``minicode.bytecode_bundle``), and answers the same as with the bundle turned off."""

from __future__ import annotations

import subprocess
import sys

from minicode.bytecode_bundle import DISABLE_VARIABLE
from tests.e2e.conftest import Env
from tests.support.fake_openai import Reply


def _verbose_run(e2e: Env, **extra: str) -> subprocess.CompletedProcess[str]:
    """A one-shot run under ``python -v`` (which names each module's loader on stderr)."""
    e2e.server.script(Reply.tool("read", path="notes.txt"), Reply.text("The note says hello."))
    return subprocess.run([sys.executable, "-v", *e2e.argv("--yes", "what does the note say?")],
                          cwd=e2e.workspace, env=e2e.environ() | extra, capture_output=True, text=True,
                          timeout=60, stdin=subprocess.DEVNULL, start_new_session=True)


def _loader_of(stderr: str, module: str) -> str:
    for line in stderr.splitlines():
        if line.startswith(f"import '{module}' # "):
            return line
    raise AssertionError(f"{module} not imported:\n{stderr[-2000:]}")


def test_a_run_after_the_first_loads_from_the_bundle_and_answers_the_same(e2e: Env) -> None:
    (e2e.workspace / "notes.txt").write_text("hello\n")
    off = _verbose_run(e2e, **{DISABLE_VARIABLE: "0"})
    assert off.returncode == 0, off.stderr[-2000:]
    assert "SourceFileLoader" in _loader_of(off.stderr, "minicode.agent.loop")

    runs = [_verbose_run(e2e) for _ in range(2)]  # the first may write the bundle, the second uses it
    assert [r.returncode for r in runs] == [0, 0], runs[-1].stderr[-2000:]
    assert "_BundledLoader" in _loader_of(runs[-1].stderr, "minicode.agent.loop")
    assert "_BundledLoader" in _loader_of(runs[-1].stderr, "asyncio.base_events")
    assert {r.stdout for r in [off, *runs]} == {"The note says hello.\n"}


def test_version_and_help_leave_the_bundle_alone(e2e: Env) -> None:
    for flag in ("--version", "--help"):
        done = subprocess.run([sys.executable, "-v", *e2e.argv(flag)], cwd=e2e.workspace, env=e2e.environ(),
                              capture_output=True, text=True, timeout=60)
        assert done.returncode == 0 and "minicode" in done.stdout
        assert "minicode.bytecode_bundle" not in done.stderr  # the bundle's index costs more than they do
