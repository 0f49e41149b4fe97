"""The real executable's HTTP: one httpx2 client a run (its connection kept alive across the
run's requests), minicode's own User-Agent, a compressed bomb cut at the event cap — and the
configuration mistakes httpx2 would trip over (a CA bundle variable naming nothing readable,
a key that is not printable ASCII, a URL it cannot request) refused at start with exit 2,
naming the value, in every mode and in --doctor, before any request."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from minicode import __version__
from minicode.trust.project_config import confirm_written
from tests.e2e.conftest import API_KEY, KEY_VAR, Env, minicode_executable
from tests.provider.helpers import chunk, sse
from tests.provider.test_exchange import RawServer
from tests.support.fake_openai import Reply


def _run(e2e: Env, *args: str, stdin: str = "", **extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(e2e.argv(*args), cwd=e2e.workspace, env={**e2e.environ(), **extra}, input=stdin,
                          capture_output=True, text=True, timeout=60, start_new_session=True)


def _workspace(tmp_path: Path, base_url: str, key: str = 'api_key_env = "KEY"') -> Path:
    workspace = tmp_path / "ws"
    (workspace / "config").mkdir(parents=True)
    (workspace / "notes.txt").write_text("a note\n")
    (workspace / "config" / "config.toml").write_text(f'[model]\nbase_url = "{base_url}"\nname = "m"\n{key}\n')
    confirm_written(workspace / "config" / "config.toml", workspace, {"HOME": str(tmp_path)})  # as --init does
    return workspace


def test_a_run_sends_minicode_s_user_agent_and_one_request_per_step(e2e: Env) -> None:
    e2e.server.script(Reply.tool("read", path="notes.txt"), Reply.text("read it"))
    (e2e.workspace / "notes.txt").write_text("a note\n")
    proc = _run(e2e, "read the notes")
    assert proc.returncode == 0 and proc.stdout == "read it\n", proc.stderr
    assert len(e2e.server.requests) == 2
    for request in e2e.server.requests:
        headers = {k.lower(): v for k, v in request.headers.items()}
        assert headers["user-agent"] == f"minicode/{__version__}"
        assert headers["authorization"] == f"Bearer {API_KEY}" and headers["accept-encoding"] == "gzip, deflate"


def test_a_keep_alive_server_sees_the_whole_run_on_one_connection(tmp_path: Path) -> None:
    def answer(conn: int, index: int) -> bytes:
        if index < 2:
            call = {"index": 0, "id": f"c{index}", "type": "function",
                    "function": {"name": "read", "arguments": json.dumps({"path": "notes.txt"})}}
            body = sse(chunk({"tool_calls": [call]}), chunk({}, finish="tool_calls"))
        else:
            body = sse(chunk({"content": "all read"}), chunk({}, finish="stop"))
        return (b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
                + b"%x\r\n" % len(body) + body + b"\r\n0\r\n\r\n")

    server = RawServer(answer)
    workspace = _workspace(tmp_path, server.base_url)
    try:
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(tmp_path), "KEY": "sk-x"}
        proc = subprocess.run([minicode_executable(), "read the notes"], cwd=workspace, env=env,
                              capture_output=True, text=True, timeout=60, start_new_session=True)
        assert proc.returncode == 0 and proc.stdout == "all read\n", proc.stderr
        assert server.requests == [(1, 0), (1, 1), (1, 2)]  # connection 1 carried all three
    finally:
        server.close()


def test_a_compressed_bomb_ends_in_a_clear_error(tmp_path: Path) -> None:
    """``Content-Encoding: gzip, gzip``: a kilobyte that inflates to 64 MiB of zeros (4 GiB took
    7 KB) ends at the 4 MiB event cap with a stream-json result, not by exhausting memory."""
    from tests.provider.test_content_coding import BOMB, answer

    server = RawServer(lambda conn, index: answer(BOMB), close_after=True)
    workspace = _workspace(tmp_path, server.base_url, 'api_key = ""')
    try:
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(tmp_path)}
        proc = subprocess.run([minicode_executable(), "--output", "stream-json", "hello"], cwd=workspace,
                              env=env, capture_output=True, text=True, timeout=60, start_new_session=True)
        result = json.loads(proc.stdout.strip().splitlines()[-1])
        assert proc.returncode == 1 and result["type"] == "result", proc.stderr
        assert "server-sent event larger than 4 MiB" in result["error"]
    finally:
        server.close()


# --- configuration mistakes: exit 2 at start, never a retry loop or an internal error -------------


MODES = {
    "one-shot": (["hello"], ""),
    "pipe": ([], "hello\n"),
    "json": (["--output", "json", "hello"], ""),
}


def _refused(proc: subprocess.CompletedProcess[str], *said: str) -> str:
    text = proc.stdout + proc.stderr
    assert proc.returncode == 2, text
    for part in said:
        assert part in text, text
    assert "internal error" not in text and "retrying" not in text and "cannot reach" not in text
    return text


def _https(e2e: Env, base_url: str = "https://127.0.0.1:9/v1") -> None:
    """The workspace's endpoint made an https one (by default a port nothing listens on: a
    mistake refused at start never gets as far as connecting)."""
    config = e2e.workspace / "config" / "config.toml"
    config.write_text(config.read_text().replace(e2e.server.base_url, base_url))
    confirm_written(config, e2e.workspace, {"HOME": str(e2e.home)})  # the user's own file


@pytest.mark.parametrize("mode", list(MODES))
def test_a_ca_bundle_file_that_does_not_exist_is_a_config_error(e2e: Env, tmp_path: Path, mode: str) -> None:
    _https(e2e)
    args, stdin = MODES[mode]
    missing = tmp_path / "nonexistent.pem"
    proc = _run(e2e, *args, stdin=stdin, SSL_CERT_FILE=str(missing))
    _refused(proc, f"SSL_CERT_FILE is set to {missing}, which does not exist", "unset it")


def test_a_ca_bundle_directory_that_is_a_file_is_a_config_error(e2e: Env) -> None:
    _https(e2e)
    (e2e.workspace / "ca.pem").write_text("x\n")
    proc = _run(e2e, "hello", SSL_CERT_DIR=str(e2e.workspace / "ca.pem"))
    _refused(proc, "SSL_CERT_DIR is set to", "which is not a directory")


def test_a_ca_bundle_without_certificates_is_a_config_error(e2e: Env) -> None:
    _https(e2e)
    (e2e.workspace / "ca.pem").write_text("not a certificate\n")
    proc = _run(e2e, "hello", SSL_CERT_FILE=str(e2e.workspace / "ca.pem"))
    _refused(proc, "SSL_CERT_FILE is set to", "which holds no CA certificate minicode can load")


def test_the_bundle_the_environment_names_is_the_one_trusted(e2e: Env) -> None:
    """Normal path: an https server whose CA only that bundle holds answers."""
    from tests.provider.test_ca_bundle import TLS, tls_answering

    with tls_answering() as base_url:
        _https(e2e, base_url)
        proc = _run(e2e, "hello", SSL_CERT_FILE=str(TLS / "ca.pem"))
    assert proc.returncode == 0 and proc.stdout == "secure\n", proc.stderr


def test_an_http_endpoint_never_reads_the_bundle(e2e: Env, tmp_path: Path) -> None:
    """A stale SSL_CERT_FILE does not stop a run against a local http:// server: nothing there
    is verified, so nothing is loaded or checked."""
    e2e.server.script(Reply.text("fine"))
    proc = _run(e2e, "hello", SSL_CERT_FILE=str(tmp_path / "nonexistent.pem"))
    assert proc.returncode == 0 and proc.stdout == "fine\n", proc.stderr


@pytest.mark.parametrize("mode", list(MODES))
def test_a_key_with_a_non_breaking_space_is_a_config_error_that_never_shows_the_key(e2e: Env, mode: str) -> None:
    args, stdin = MODES[mode]
    key = "sk-e2e-SECRET\u00a04242"
    proc = _run(e2e, *args, stdin=stdin, **{KEY_VAR: key})
    text = _refused(proc, f"[model].api_key_env {KEY_VAR}", "not printable ASCII at position 14",
                    f"export {KEY_VAR}=")
    assert "SECRET" not in text and e2e.server.requests == []


# two rows through the real executable; every other base URL httpx2 refuses is a row of
# tests/test_config.py and tests/provider/test_http_client.py (in-process, the same check)
@pytest.mark.parametrize("base_url", ["http://127.0.0.1:8080/v\u00a01", "http://[::1/v1"])
def test_a_base_url_httpx2_cannot_use_is_a_config_error(e2e: Env, base_url: str) -> None:
    config = e2e.workspace / "config" / "config.toml"
    config.write_text(config.read_text().replace(e2e.server.base_url, base_url))
    confirm_written(config, e2e.workspace, {"HOME": str(e2e.home)})  # the user's own file
    proc = _run(e2e, "hello")
    _refused(proc, "[model].base_url")


def test_doctor_reports_a_ca_bundle_mistake_as_a_finding_and_exits_2(e2e: Env, tmp_path: Path) -> None:
    _https(e2e)
    missing = tmp_path / "nonexistent.pem"
    for args in ([], ["--json"]):
        proc = _run(e2e, "--doctor", *args, SSL_CERT_FILE=str(missing))
        _refused(proc, f"SSL_CERT_FILE is set to {missing}, which does not exist")
        if args:
            report = json.loads(proc.stdout)
            assert not report["usable"] and report["checks"][0]["status"] == "failed"
            assert report["requests"] == 0
        else:
            assert proc.stdout.splitlines()[2].startswith("failed   endpoint    SSL_CERT_FILE is set to")


def test_doctor_refuses_a_key_that_is_not_printable_ascii_with_exit_2(e2e: Env) -> None:
    proc = _run(e2e, "--doctor", **{KEY_VAR: "sk-\u201cquoted\u201d"})
    text = _refused(proc, f"[model].api_key_env {KEY_VAR}")
    assert "quoted" not in text and e2e.server.requests == []
