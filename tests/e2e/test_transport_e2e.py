"""The real executable over minicode's own HTTP client and with httpx forced
(``MINICODE_HTTP=httpx``): the same requests at the server, the same session file, the same
stream-json events and the same errors (issue 16: a plain run never imports httpx)."""

from __future__ import annotations

import json
import re
import subprocess

from tests.support.events import check_stream
from tests.support.fake_openai import Reply

from .test_early_request_e2e import _records


def _run(e2e, *args: str, httpx: bool, stdin: str = "", timing: bool = False) -> subprocess.CompletedProcess[str]:
    env = e2e.environ()
    if httpx:
        env["MINICODE_HTTP"] = "httpx"
    if timing:
        env["PYTHONPROFILEIMPORTTIME"] = "1"
    return subprocess.run(e2e.argv(*args), cwd=e2e.workspace, env=env, input=stdin, capture_output=True,
                          text=True, timeout=60, start_new_session=True)


def _imported(stderr: str) -> set[str]:
    return {line.rsplit("|", 1)[-1].strip() for line in stderr.splitlines() if line.startswith("import time:")}


def _numbered(value: object) -> object:
    """``value`` with the server's call numbers (it counts over its lifetime) made equal."""
    return json.loads(re.sub(r"call_\d+", "call_N", json.dumps(value)))


def _script(e2e) -> None:
    e2e.server.requests.clear()
    (e2e.workspace / "notes.txt").write_text("a note\n")
    e2e.server.script(Reply.tool("read", path="notes.txt"), Reply.tool("ls", path="."), Reply.text("read it"))


def test_a_tool_task_gives_the_same_session_and_requests_without_importing_httpx(e2e) -> None:
    files, requests = [], []
    for httpx in (False, True):
        _script(e2e)
        proc = _run(e2e, "read the notes", httpx=httpx, timing=True)
        assert proc.returncode == 0, proc.stderr
        loaded = _imported(proc.stderr)
        assert "minicode.provider.openai" in loaded  # the import list was really read
        assert ("httpx" in loaded) == httpx and ("h11" in loaded) == httpx
        assert ("minicode.provider.socket_transport" in loaded) != httpx
        files.append(_records(e2e, "\n".join(line for line in proc.stderr.splitlines()
                                             if not line.startswith("import time:"))))
        requests.append(_numbered([(r.path, r.body, {k.lower(): v for k, v in r.headers.items()})
                                   for r in e2e.server.requests]))
    assert files[0] == files[1]
    assert len(requests[0]) == len(requests[1]) == 3
    for own, forced in zip(requests[0], requests[1]):  # every path, header and body the same
        assert own[0] == forced[0]
        assert own[2] == forced[2]  # headers (compared apart, so a failure shows which differ)
        assert own[1]["messages"][1:] == forced[1]["messages"][1:]
        assert own[1] == forced[1]


def _events(stdout: str) -> list[dict]:
    events = check_stream(stdout)
    text = re.sub(r"call_\d+", "call_N", json.dumps(events))
    out = []
    for event in json.loads(text):
        for key in ("session", "id", "workspace", "duration_seconds", "stats"):
            event.pop(key, None)
        out.append(event)
    return out


def test_stream_json_events_are_the_same(e2e) -> None:
    streams = []
    for httpx in (False, True):
        _script(e2e)
        proc = _run(e2e, "--output", "stream-json", "read the notes", httpx=httpx)
        assert proc.returncode == 0, proc.stderr
        streams.append(_events(proc.stdout))
    assert streams[0] == streams[1]
    assert [e["type"] for e in streams[0]].count("tool_result") == 2


def test_pipe_mode_tasks_over_one_client_are_the_same(e2e) -> None:
    outputs = []
    for httpx in (False, True):
        e2e.server.requests.clear()
        e2e.server.script(Reply.text("one"), Reply.tool("read", path="notes.txt"), Reply.text("two"))
        (e2e.workspace / "notes.txt").write_text("a note\n")
        proc = _run(e2e, stdin="first\nsecond\n", httpx=httpx)
        assert proc.returncode == 0, proc.stderr
        outputs.append((proc.stdout, _numbered([r.body for r in e2e.server.requests])))
    assert outputs[0] == outputs[1] and outputs[0][0] == "one\ntwo\n"


def _unjittered(line: str) -> str:
    """A stderr line without what differs from run to run: the wall time, the retry's jitter."""
    line = re.sub(r"^minicode: \d+\.\ds ·", "minicode: Ns ·", line)
    return re.sub(r"retrying in [\d.]+ s", "retrying in N s", line)


def test_errors_read_the_same(e2e) -> None:
    """A 401 with an HTML page, then a 500 retried into a success, then a stream cut off."""
    page = "<html><body><h1>401 Authorization Required</h1></body></html>"
    results = []
    for httpx in (False, True):
        runs = []
        e2e.server.script(Reply.error(401, page))
        runs.append(_run(e2e, "hello", httpx=httpx))
        e2e.server.script(Reply.error(500, {"error": {"message": "try again"}}), Reply.text("fine"))
        runs.append(_run(e2e, "hello", httpx=httpx))
        results.append([(p.returncode, p.stdout, [_unjittered(line) for line in p.stderr.splitlines()
                                                  if "session" not in line])
                        for p in runs])
    assert results[0] == results[1]
    assert results[0][0][0] != 0 and "401 Authorization Required" in "\n".join(results[0][0][2])
    assert results[0][1][0] == 0 and results[0][1][1] == "fine\n"


def test_a_keep_alive_server_sees_the_whole_run_on_one_connection(tmp_path) -> None:
    """Against a server that keeps connections alive, the early first request's connection
    carries every later request of the run; with httpx forced the run uses one connection too."""
    import os

    from tests.e2e.conftest import minicode_executable
    from tests.provider.helpers import chunk, sse
    from tests.provider.test_exchange import RawServer

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
    workspace = tmp_path / "ws"
    (workspace / "config").mkdir(parents=True)
    (workspace / "notes.txt").write_text("a note\n")
    (workspace / "config" / "config.toml").write_text(
        f'[model]\nbase_url = "{server.base_url}"\nname = "m"\napi_key_env = "KEY"\n')
    from minicode.trust.project_config import confirm_written

    confirm_written(workspace / "config" / "config.toml", workspace, {"HOME": str(tmp_path)})  # as --init does
    try:
        for httpx, connection in ((False, 1), (True, 2)):
            server.requests.clear()
            env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(tmp_path), "KEY": "sk-x"}
            if httpx:
                env["MINICODE_HTTP"] = "httpx"
            proc = subprocess.run([minicode_executable(), "read the notes"], cwd=workspace, env=env,
                                  capture_output=True, text=True, timeout=60, start_new_session=True)
            assert proc.returncode == 0 and proc.stdout == "all read\n", proc.stderr
            assert server.requests == [(connection, i) for i in range(3)]
    finally:
        server.close()


def test_a_compressed_bomb_ends_in_a_clear_error_on_both_clients(tmp_path) -> None:
    """``Content-Encoding: gzip, gzip``: a kilobyte that inflates to 64 MiB of zeros (4 GiB took
    7 KB) ends at the 4 MiB event cap with a stream-json result, not by exhausting memory."""
    import os

    from tests.e2e.conftest import minicode_executable
    from tests.provider.test_content_coding import BOMB, answer
    from tests.provider.test_exchange import RawServer

    server = RawServer(lambda conn, index: answer(BOMB), close_after=True)
    workspace = tmp_path / "ws"
    (workspace / "config").mkdir(parents=True)
    (workspace / "config" / "config.toml").write_text(
        f'[model]\nbase_url = "{server.base_url}"\nname = "m"\napi_key = ""\n')
    try:
        for httpx in (False, True):
            env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(tmp_path)}
            if httpx:
                env["MINICODE_HTTP"] = "httpx"
            proc = subprocess.run([minicode_executable(), "--output", "stream-json", "hello"], cwd=workspace,
                                  env=env, capture_output=True, text=True, timeout=60, start_new_session=True)
            result = json.loads(proc.stdout.strip().splitlines()[-1])
            assert proc.returncode == 1 and result["type"] == "result", proc.stderr
            assert "server-sent event larger than 4 MiB" in result["error"]
    finally:
        server.close()
