"""``cli/early_start.py``: when the early first request is sent, what it is built from, and
what is (not) imported by the time it leaves; ``provider/early_http.py``'s body framing."""

from __future__ import annotations

import io
import json
import socket
import subprocess
import sys
import textwrap
import zlib
from pathlib import Path
from typing import Iterator

import pytest

from minicode.cli import early_start
from minicode.cli.args import Options
from minicode.config import Config, ModelConfig
from minicode.provider import early as early_slot
from minicode.provider.early_http import BodyReader, HTTPFailure, read_head

BASE = "http://127.0.0.1:9/v1"


def config(base_url: str = BASE, api_key: str = "sk-key") -> Config:
    return Config(model=ModelConfig(base_url=base_url, name="m", api_key=api_key), path=Path("config.toml"))


@pytest.fixture(autouse=True)
def nothing_pending() -> None:
    yield
    pending = early_slot.take()
    if pending is not None:
        pending.close()


def sent(options: Options, cfg: Config, env: dict[str, str], tmp_path: Path) -> early_slot.EarlyRequest | None:
    early_start.start(options, cfg, tmp_path, "oneshot", None, {"HOME": str(tmp_path), **env}, None)
    return early_slot.take()


def test_a_one_shot_task_is_sent_early(tmp_path: Path) -> None:
    early = sent(Options(task=("fix", "it")), config(), {}, tmp_path)
    assert early is not None
    body = json.loads(early.wire.body)
    assert body["messages"][0]["role"] == "system" and body["messages"][-1] == {"role": "user", "content": "fix it"}
    assert [t["function"]["name"] for t in body["tools"]] == ["read", "ls", "glob", "grep", "write", "edit", "bash"]
    assert (early.wire.host, early.wire.port, early.wire.target) == ("127.0.0.1", 9, "/v1/chat/completions")
    assert (b"Authorization", b"Bearer sk-key") in early.wire.headers
    early.close()


@pytest.mark.parametrize("env", [
    {"HTTPS_PROXY": "http://proxy:3128"}, {"http_proxy": "http://proxy:3128"}, {"ALL_PROXY": "socks5://p:1"},
    {"all_proxy": "socks5://p:1"}, {"MINICODE_EARLY_REQUEST": "0"},
])
def test_a_proxy_or_the_switch_keeps_the_normal_path(env: dict[str, str], tmp_path: Path) -> None:
    assert sent(Options(task=("t",)), config(), env, tmp_path) is None


def test_no_proxy_alone_does_not_matter(tmp_path: Path) -> None:
    early = sent(Options(task=("t",)), config(), {"NO_PROXY": "*"}, tmp_path)
    assert early is not None
    early.close()


@pytest.mark.parametrize("options", [Options(task=("t",), session="abc"), Options(task=("t",), continue_session=True),
                                     Options(task=("t",), max_turns=0)], ids=["session", "continue", "max-turns-0"])
def test_resumes_and_no_model_turns_keep_the_normal_path(options: Options, tmp_path: Path) -> None:
    assert sent(options, config(), {}, tmp_path) is None


@pytest.mark.parametrize("base_url", ["http://user:pw@127.0.0.1:9/v1", "http://127.0.0.1:9/v1?x=1",
                                      "ftp://127.0.0.1/v1", "http://127.0.0.1:9/v 1", "http://bücher.example/v1"])
def test_unusual_urls_keep_the_normal_path(base_url: str, tmp_path: Path) -> None:
    assert sent(Options(task=("t",)), config(base_url), {}, tmp_path) is None


def test_a_broken_memory_file_sends_nothing(tmp_path: Path) -> None:
    (tmp_path / "MiniCode.md").write_bytes(b"bad \x00 nul")
    assert sent(Options(task=("t",)), config(), {}, tmp_path) is None


def test_a_body_that_may_need_compaction_is_not_sent_early(tmp_path: Path) -> None:
    small = Config(model=ModelConfig(base_url=BASE, name="m", api_key="k", context_window=4096), path=Path("c"))
    assert sent(Options(task=("t",)), small, {}, tmp_path) is None


@pytest.mark.parametrize(("configured", "remembered", "max_tokens"), [
    (None, None, 8192),  # nothing known: the default window
    (None, 16384, 4096),  # the server's remembered answer, as the session will use it
    (12000, 16384, 3000),  # the config wins
])
def test_the_output_limit_is_the_sessions(configured: int | None, remembered: int | None, max_tokens: int,
                                          tmp_path: Path) -> None:
    from minicode.provider.wire import WireProfileCache, default_cache_path

    if remembered is not None:
        WireProfileCache(default_cache_path(tmp_path)).put_window("127.0.0.1:9", "m", remembered, "llama.cpp /props")
    cfg = Config(model=ModelConfig(base_url=BASE, name="m", api_key="k", context_window=configured), path=Path("c"))
    early = sent(Options(task=("t",)), cfg, {}, tmp_path)
    assert early is not None and json.loads(early.wire.body)["max_tokens"] == max_tokens
    early.close()


def test_the_pipe_read_ahead_keeps_every_line_for_the_reader(tmp_path: Path) -> None:
    data = b"\n   \n/compact\nthe task\nnext\n"
    tasks: list[str] = []
    stream = io.TextIOWrapper(io.BytesIO(data))
    ahead = early_start.ReadAhead(stream, tasks.append)
    ahead.start()
    lines, failure = early_start.read_ahead_lines(stream) or ([], None)
    assert failure is None and tasks == []  # the first non-blank line is a command: nothing sent
    assert lines == [b"\n", b"   \n", b"/compact\n"]
    assert stream.buffer.read() == b"the task\nnext\n"  # the rest is left for the reader
    stream2 = io.TextIOWrapper(io.BytesIO(b"\nfirst task\r\nsecond\n"))
    early_start.ReadAhead(stream2, tasks.append).start()
    assert early_start.read_ahead_lines(stream2) == ([b"\n", b"first task\r\n"], None)
    assert tasks == ["first task"]
    assert early_start.read_ahead_lines(stream2) is None  # taken once


def test_the_early_request_leaves_before_asyncio_httpx_and_the_agent_load(tmp_path: Path) -> None:
    workspace = tmp_path / "project"
    (workspace / "config").mkdir(parents=True)
    (workspace / "config" / "config.toml").write_text(f'[model]\nbase_url = "{BASE}"\nname = "m"\napi_key = "k"\n')
    code = textwrap.dedent("""
        import os, sys
        import minicode.provider.early as early
        def start(self):
            os.write(1, " ".join(sorted(sys.modules)).encode())
            os._exit(0)
        early.EarlyRequest.start = start
        sys.argv = ["minicode", "say hi"]
        from minicode.entry import run
        run()
    """)
    proc = subprocess.run([sys.executable, "-c", code], cwd=workspace, capture_output=True, text=True, timeout=60,
                          env={"HOME": str(tmp_path), "PATH": "/usr/bin:/bin"}, stdin=subprocess.DEVNULL)
    loaded = set(proc.stdout.split())
    assert "minicode.cli.early_start" in loaded, proc.stderr
    heavy = {"asyncio", "httpx", "httpcore", "http.client", "email", "prompt_toolkit", "rich", "opentelemetry",
             "langfuse", "minicode.agent.loop", "minicode.agent.context", "minicode.session", "minicode.tools.base",
             "minicode.tools.registry", "minicode.permissions.store", "minicode.provider.openai", "minicode.telemetry"}
    assert not heavy & loaded


# --- early_http: the body as httpx would hand it over -------------------------------------


@pytest.fixture
def pair() -> Iterator[tuple[socket.socket, socket.socket]]:
    client, server = socket.socketpair()
    with client, server:
        yield client, server


def reader(raw: bytes, pieces: int = 1, pair: tuple[socket.socket, socket.socket] | None = None
           ) -> tuple[int, BodyReader]:
    """A response read off a socket pair, the server writing ``raw`` in ``pieces`` parts."""
    assert pair is not None
    client, server = pair
    step = max(1, len(raw) // pieces)
    for i in range(0, len(raw), step):
        server.sendall(raw[i:i + step])
    server.close()
    head, body = read_head(client)
    return head.status, body


@pytest.mark.parametrize("pieces", [1, 7, 1000])
def test_chunked_bodies_with_extensions_and_trailers_are_dechunked(pieces: int, pair) -> None:
    raw = (b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
           b"5;ext=1\r\nhello\r\n1\r\n \r\n5\r\nworld\r\n0\r\nX-Trailer: y\r\n\r\n")
    status, body = reader(raw, pieces, pair)
    assert status == 200 and b"".join(body) == b"hello world" and body.complete


def test_a_sized_body_stops_at_its_length_and_deflate_is_decoded(pair) -> None:
    data = zlib.compress(b"x" * 1000)
    raw = (b"HTTP/1.1 200 OK\r\nContent-Encoding: deflate\r\nContent-Length: %d\r\n\r\n" % len(data)) + data + b"junk"
    _, body = reader(raw, 3, pair)
    assert b"".join(body) == b"x" * 1000


def test_a_body_without_length_runs_to_the_close(pair) -> None:
    _, body = reader(b"HTTP/1.1 200 OK\r\n\r\nall of it", 2, pair)
    assert b"".join(body) == b"all of it"


@pytest.mark.parametrize("raw", [b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhel",
                                 b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nhel",
                                 b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n"])
def test_a_body_cut_short_or_malformed_fails(raw: bytes, pair) -> None:
    _, body = reader(raw, 1, pair)
    with pytest.raises(HTTPFailure):
        b"".join(body)


@pytest.mark.parametrize("raw", [b"", b"HTTP/1.1 200 OK\r\nContent-Le", b"garbage\r\n\r\n"])
def test_no_valid_head_fails(raw: bytes, pair) -> None:
    client, server = pair
    server.sendall(raw)
    server.close()
    with pytest.raises(HTTPFailure):
        read_head(client)


# --- the command guard starts with the early request ----------------------------------------


def _first_prestart(tmp_path: Path, env: dict[str, str]) -> tuple[str, str]:
    """A one-shot run whose first answer is a bash call: whether the agent loop was loaded
    when the command guard was first asked to start (its own log line), and the answer."""
    from tests.support.fake_openai import FakeOpenAI, Reply

    workspace = tmp_path / "project"
    (workspace / "config").mkdir(parents=True, exist_ok=True)
    log = tmp_path / "prestart.txt"
    code = textwrap.dedent(f"""
        import sys
        import minicode.tools.guardlife as guardlife
        original = guardlife.prestart
        def prestart():
            if not guardlife._prestarted:
                with open({str(log)!r}, "w") as f:
                    f.write("agent loaded" if "minicode.agent.loop" in sys.modules else "before the agent")
            original()
        guardlife.prestart = prestart
        sys.argv = ["minicode", "--yes", "run it"]
        from minicode.entry import run
        run()
    """)
    with FakeOpenAI() as server:
        server.script(Reply.tool("bash", command="echo guarded"), Reply.text("done"))
        (workspace / "config" / "config.toml").write_text(
            f'[model]\nbase_url = "{server.base_url}"\nname = "m"\napi_key = "k"\n')
        proc = subprocess.run([sys.executable, "-c", code], cwd=workspace, capture_output=True, text=True, timeout=60,
                              env={"HOME": str(tmp_path), "PATH": "/usr/bin:/bin", **env}, stdin=subprocess.DEVNULL)
        tool_result = next(m for m in server.requests[-1].messages if m.get("role") == "tool")
    assert proc.returncode == 0 and proc.stdout == "done\n", proc.stderr[-2000:]
    assert "guarded" in tool_result["content"] and "[exit code 0]" in tool_result["content"]
    return log.read_text(), tool_result["content"]


def test_the_command_guard_starts_as_the_early_request_leaves(tmp_path: Path) -> None:
    """Issue 16 item 6: the guard server's start-up (a second Python) overlaps the agent's
    imports instead of following them, so a command in the first answer does not wait for it."""
    when, _ = _first_prestart(tmp_path, {})
    assert when == "before the agent"


def test_without_the_early_request_the_agent_starts_the_guard(tmp_path: Path) -> None:
    when, _ = _first_prestart(tmp_path, {"MINICODE_EARLY_REQUEST": "0"})
    assert when == "agent loaded"
