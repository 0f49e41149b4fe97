"""End-to-end tracing: the real `minicode` executable (pipe mode) exporting to a local
Langfuse stand-in, a dead Langfuse host, and no tracing imports without `[langfuse]`."""

from __future__ import annotations

import base64
import time

from tests.e2e.conftest import API_KEY, Env, Run
from tests.support.fake_openai import Reply
from tests.telemetry.otlp_server import OtlpServer, otlp_server, unused_port

LF_PUBLIC = "pk-lf-e2e-public-77"
LF_SECRET = "sk-lf-e2e-SECRET-88aa99bb"
HANG_GUARD = 10.0
"""A generous hang guard for a whole run against a dead host (its own bound is ~2 s)."""
TRACE_WARNING = "minicode: warning: trace export to "


def _with_langfuse(e2e: Env, host: str) -> None:
    config = e2e.workspace / "config" / "config.toml"
    config.write_text(
        config.read_text()
        + f'\n[langfuse]\npublic_key = "{LF_PUBLIC}"\nsecret_key = "{LF_SECRET}"\nhost = "{host}"\n'
    )


def _script_write_then_answer(e2e: Env) -> None:
    e2e.server.script(Reply.tool("write", path="hello.txt", content="hi\n"), Reply.text("Wrote hello.txt."))


def _exported(server: OtlpServer) -> bytes:
    return b"".join(post.body for post in server.posts)


def test_spans_reach_langfuse_with_basic_auth_and_no_secret(e2e: Env) -> None:
    _script_write_then_answer(e2e)
    with otlp_server() as server:
        _with_langfuse(e2e, server.url)
        r = e2e.run("--yes", stdin="write hello.txt\n")
    assert r.code == 0, r.stderr
    assert r.stdout == "Wrote hello.txt.\n"
    names = server.span_names()
    assert sorted(names) == ["minicode.model_call", "minicode.model_call", "minicode.tool", "minicode.turn"]
    post = server.posts[0]
    assert post.path == "/api/public/otel/v1/traces"
    expected = base64.b64encode(f"{LF_PUBLIC}:{LF_SECRET}".encode()).decode()
    assert all(p.headers["authorization"] == f"Basic {expected}" for p in server.posts)
    body = _exported(server)
    assert r.session_id.encode() in body and b"fake-model" in body and b"write" in body
    for secret in (API_KEY, LF_SECRET):
        assert secret.encode() not in body
        assert secret not in r.stderr
        assert secret not in e2e.session_file(r.session_id).read_text()
    assert TRACE_WARNING not in r.stderr


def test_secret_in_the_task_and_file_never_reaches_the_exported_spans(e2e: Env) -> None:
    (e2e.workspace / "creds.txt").write_text(f"{API_KEY}\n{LF_SECRET}\n")
    e2e.server.script(Reply.tool("read", path="creds.txt"), Reply.text("done"))
    with otlp_server() as server:
        _with_langfuse(e2e, server.url)
        r = e2e.run("--yes", stdin=f"check the key {API_KEY}\n")
    assert r.code == 0, r.stderr
    sent = e2e.server.requests[1].messages
    assert API_KEY in sent[1]["content"]  # the user's own text is sent as typed: it went through the loop
    assert sent[-1]["content"] == "     1\t[redacted]\n     2\t[redacted]\n[end of file; lines 1-2]"  # tool output is not
    body = _exported(server)
    assert server.span_names() and API_KEY.encode() not in body and LF_SECRET.encode() not in body
    assert b"check the key" not in body  # no message text at all, secret or not


def test_dead_langfuse_host_is_one_warning_and_does_not_hold_up_exit(e2e: Env) -> None:
    _script_write_then_answer(e2e)
    host = f"http://127.0.0.1:{unused_port()}"
    _with_langfuse(e2e, host)
    started = time.monotonic()
    r = e2e.run("--yes", stdin="write hello.txt\n", timeout=60)
    elapsed = time.monotonic() - started
    print(f"pipe run with a dead Langfuse host: {elapsed:.2f} s")
    assert r.code == 0, r.stderr
    assert r.stdout == "Wrote hello.txt.\n"
    warnings = [line for line in r.stderr.splitlines() if line.startswith(TRACE_WARNING)]
    assert warnings == [f"{TRACE_WARNING}{host} failed (connection refused); continuing without it"]
    assert sum("warning" in line.lower() for line in r.stderr.splitlines()) == 1
    assert "Traceback" not in r.stderr and LF_SECRET not in r.stderr
    assert elapsed < HANG_GUARD


def test_rejecting_langfuse_host_is_one_warning_and_exit_0(e2e: Env) -> None:
    _script_write_then_answer(e2e)
    with otlp_server(status=401) as server:
        _with_langfuse(e2e, server.url)
        r = e2e.run("--yes", stdin="write hello.txt\n")
    assert r.code == 0 and r.stdout == "Wrote hello.txt.\n"
    warnings = [line for line in r.stderr.splitlines() if line.startswith(TRACE_WARNING)]
    assert len(warnings) == 1 and "(HTTP 401)" in warnings[0]


# --- start-up cost: no tracing imports unless [langfuse] is configured -------------------


def _imported_modules(e2e: Env, task: str) -> tuple[Run, set[str]]:
    return e2e.run_listing_imports("--yes", stdin=task)


def _tracing(modules: set[str]) -> set[str]:
    return {m for m in modules if m.split(".")[0] in ("opentelemetry", "langfuse")}


def test_pipe_run_without_langfuse_imports_no_tracing_packages(e2e: Env) -> None:
    _script_write_then_answer(e2e)
    proc, modules = _imported_modules(e2e, "write hello.txt\n")
    assert proc.code == 0, proc.stderr[-2000:]
    assert proc.stdout == "Wrote hello.txt.\n" and len(e2e.server.requests) == 2
    assert "minicode.session.session" in modules and "minicode.provider.openai" in modules  # a real run
    assert _tracing(modules) == set()
    assert not {m for m in modules if m.split(".")[0] in ("prompt_toolkit", "rich", "acp")}  # the ACP SDK: --acp only


def test_pipe_run_with_langfuse_does_import_them(e2e: Env) -> None:
    """The control for the test above: the same parse does see the SDKs when configured."""
    _script_write_then_answer(e2e)
    with otlp_server() as server:
        _with_langfuse(e2e, server.url)
        proc, modules = _imported_modules(e2e, "write hello.txt\n")
    assert proc.code == 0, proc.stderr[-2000:]
    assert "opentelemetry.sdk.trace" in modules and "minicode.telemetry.langfuse" in modules
