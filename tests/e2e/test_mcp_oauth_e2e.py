"""A remote MCP server that requires OAuth, end to end: the real executable, the SDK's authorization
server (tests/mcp/oauth_server.py) and the fake model. ``minicode --mcp-login`` shows the address on
stderr and the test follows it as a browser would; a task then calls the server's tool with the stored
token, and no token issued appears in the session file, the output, or the exported trace. Without a
token and without anyone to ask, a run does not wait: the tool answers that the server needs sign-in."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx2

from tests.e2e.conftest import Env
from tests.e2e.test_tracing_e2e import _exported, _with_langfuse
from tests.support.events import check_stream, of_type
from tests.support.fake_openai import Reply
from tests.telemetry.otlp_server import otlp_server

SERVER = Path(__file__).resolve().parents[1] / "mcp" / "oauth_server.py"


@contextmanager
def auth_server(tokens: Path) -> Iterator[str]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen([sys.executable, str(SERVER), str(port)], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True,
                            env={**os.environ, "MCP_TEST_TOKENS": str(tokens)})
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", port)) == 0:
                    break
            time.sleep(0.05)  # waiting for the server to listen, not for a result
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


def _mcp_file(e2e: Env, url: str) -> str:
    path = e2e.home / "mcp.toml"
    path.write_text(f'[mcp.servers.web]\nurl = "{url}"\nstartup_timeout = 30\nsignin_timeout = 60\n')
    return str(path)


def _sign_in(e2e: Env, mcp: str) -> str:
    """``--mcp-login web``, answered like a browser: returns its stdout."""
    proc = e2e.popen("--mcp-login", "web", "--mcp-config", mcp)
    assert proc.stderr is not None
    try:
        line = proc.stderr.readline()
        assert "MCP server web asks you to sign in" in line, line
        with httpx2.Client() as browser:
            consent = browser.get(line.rstrip("\n").rsplit(": ", 1)[1])
            assert consent.status_code == 302
            assert "Signed in" in browser.get(consent.headers["location"]).text
        out, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
        proc.wait()
    assert proc.returncode == 0, err
    assert err == "minicode: MCP server web: signed in (2 tools)\n"
    return out


def test_sign_in_then_a_task_calls_the_tool_and_no_token_is_recorded(e2e: Env, tmp_path: Path) -> None:
    issued = tmp_path / "issued"
    with auth_server(issued) as url:
        mcp = _mcp_file(e2e, url)
        out = _sign_in(e2e, mcp)
        assert out.startswith("web  ready  2 tools\n") and "web__whoami" in out
        token_files = list((e2e.home / ".minicode" / "mcp-oauth").iterdir())
        assert len(token_files) == 1 and token_files[0].stat().st_mode & 0o777 == 0o600

        e2e.server.script(Reply.tools(("web__whoami", {})), Reply.text("Done."))
        with otlp_server() as traces:
            _with_langfuse(e2e, traces.url)
            r = e2e.run("--output", "json", "--mcp-config", mcp, "--allow", "mcp(web__whoami)", "who am I?",
                        timeout=90)
        assert r.code == 0, r.stderr
        (result,) = [m["content"] for m in e2e.server.requests[1].messages if m["role"] == "tool"]
        assert result.startswith("client ")
        (session_file,) = (e2e.workspace / ".minicode" / "sessions").glob("*.jsonl")
        session = session_file.read_text()
        assert "web__whoami" in session
        exported = _exported(traces)
        tokens = issued.read_text().split()
        assert tokens
        for token in tokens:
            assert token not in session and token not in r.stdout + r.stderr + out
            assert token.encode() not in exported


def test_without_a_token_an_unattended_run_does_not_wait(e2e: Env, tmp_path: Path) -> None:
    with auth_server(tmp_path / "issued") as url:
        e2e.server.script(Reply.tools(("web__whoami", {})), Reply.text("It needs a sign-in."))
        started = time.monotonic()
        r = e2e.run("--output", "json", "--mcp-config", _mcp_file(e2e, url), "--allow", "mcp(web__whoami)",
                    "who am I?", timeout=90)
        assert r.code == 0, r.stderr
        assert time.monotonic() - started < 45  # not the 60 s signin_timeout
        (result,) = [m["content"] for m in e2e.server.requests[1].messages if m["role"] == "tool"]
        assert "needs sign-in" in result and "minicode --mcp-login web" in result
        assert "asks you to sign in" not in r.stdout + r.stderr
        finished = of_type(check_stream(r.stdout), "tool_result")
        assert [e["name"] for e in finished] == ["web__whoami"]
        listed = e2e.run("--mcp", "--mcp-config", _mcp_file(e2e, url), timeout=90)
        assert listed.code == 1 and "web  needs sign-in" in listed.stdout


def test_mcp_login_names_only_a_remote_server(e2e: Env) -> None:
    r = e2e.run("--mcp-login", "nope", timeout=30)
    assert r.code == 2 and "--mcp-login nope: that MCP server is not configured" in r.stderr
