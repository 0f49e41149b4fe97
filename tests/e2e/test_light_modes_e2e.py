"""What a pipe-mode or one-shot run really loads (issue 24 item 4): never the full screen's
libraries (prompt_toolkit, rich) nor tracing's (opentelemetry, langfuse) — at run time, in the
process of a real run against the scripted server, not only in the import graph that
tests/test_architecture.py walks. The model is asked through the one HTTP stack, httpx2: httpx
0.2x loads its command line (click, rich, pygments) at import when click is installed."""

from __future__ import annotations

import pytest

from tests.e2e.conftest import Env
from tests.support.fake_openai import Reply

NEVER_IN_PLAIN_MODES = ("prompt_toolkit", "rich", "opentelemetry", "langfuse", "httpx", "pygments", "click")
"""The full screen's and tracing's libraries, and httpx with the command line it drags in."""
MODES = {
    "pipe": (("--yes",), "write hello.txt\n"),
    "one-shot": (("--yes", "write hello.txt"), None),
    "one-shot, JSON output": (("--yes", "--output", "json", "write hello.txt"), None),
}


def _never_loaded(modules: set[str]) -> list[str]:
    return sorted(m for m in modules if m.split(".")[0] in NEVER_IN_PLAIN_MODES)


@pytest.mark.parametrize("mode", list(MODES))
def test_a_run_loads_no_ui_tracing_or_second_http_stack(e2e: Env, mode: str) -> None:
    args, stdin = MODES[mode]
    e2e.server.script(Reply.tool("write", path="hello.txt", content="hi\n"), Reply.text("Wrote hello.txt."))
    run, modules = e2e.run_listing_imports(*args, stdin=stdin)
    assert run.code == 0, run.stderr[-2000:]
    assert (e2e.workspace / "hello.txt").read_text() == "hi\n" and len(e2e.server.requests) == 2
    # the report was really read, and the requests went through the provider's client
    assert {"minicode.provider.http", "httpx2", "httpcore2", "minicode.tools.fswrite"} <= modules
    assert _never_loaded(modules) == []


@pytest.mark.parametrize("mode", list(MODES))
def test_a_run_the_endpoint_refuses_loads_none_of_them_either(e2e: Env, mode: str) -> None:
    """The error path (a rejected key: reported at once, exit 1) formats its message without
    the UI's libraries too."""
    args, stdin = MODES[mode]
    rejected = {"error": {"message": "Incorrect API key provided", "type": "invalid_request_error"}}
    e2e.server.default = Reply.error(401, rejected)
    run, modules = e2e.run_listing_imports(*args, stdin=stdin)
    assert run.code == 1, run.stderr[-2000:]
    assert "Incorrect API key provided" in run.stderr + run.stdout
    assert len(e2e.server.requests) == 1 and not (e2e.workspace / "hello.txt").exists()
    assert "minicode.provider.http" in modules
    assert _never_loaded(modules) == []
