"""The live bench's own parts, without a model: the recording proxy (bytes through unchanged,
llama.cpp's timings read), the task checks (each fails on the untouched workspace, passes on
a solution, catches an edited test), and one whole bench run of minicode against the scripted
server through the proxy (solved, and killed at the time limit)."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import httpx2
import pytest

from tests.support.fake_openai import FakeOpenAI, Reply

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

import live  # noqa: E402
import live_agents  # noqa: E402
from live_proxy import (Exchange, RecordingProxy, RequestStats, ResponseStats, request_stats,  # noqa: E402
                        response_stats, written_call)
from live_tasks import TASKS, by_names  # noqa: E402

# the last chunks of a real llama.cpp stream (b-unknown build, Qwen2.5-Coder, stream_options.include_usage)
LLAMA_SSE = (
    b'data: {"choices":[{"finish_reason":null,"index":0,"delta":{"tool_calls":[{"index":0,"id":"abc","type":'
    b'"function","function":{"name":"ls","arguments":"{\\"path\\""}}]}}],"object":"chat.completion.chunk"}\n\n'
    b'data: {"choices":[{"finish_reason":null,"index":0,"delta":{"tool_calls":[{"index":0,"function":'
    b'{"arguments":": \\".\\"}"}}]}}],"object":"chat.completion.chunk"}\n\n'
    b'data: {"choices":[{"finish_reason":"tool_calls","index":0,"delta":{}}],"object":"chat.completion.chunk"}\n\n'
    b'data: {"choices":[],"object":"chat.completion.chunk","usage":{"completion_tokens":27,"prompt_tokens":160,'
    b'"total_tokens":187,"prompt_tokens_details":{"cached_tokens":148}},"timings":{"cache_n":148,"prompt_n":12,'
    b'"prompt_ms":1465.9,"predicted_n":27,"predicted_ms":12714.1}}\n\n'
    b"data: [DONE]\n\n"
)


def test_a_llama_cpp_stream_gives_usage_timings_and_its_tool_call() -> None:
    stats = response_stats(LLAMA_SSE, "text/event-stream")
    assert (stats.prompt_tokens, stats.evaluated, stats.cached, stats.completion_tokens) == (160, 12, 148, 27)
    assert stats.tool_calls == 1 and stats.finish_reason == "tool_calls"
    assert stats.server_ms == pytest.approx(1465.9 + 12714.1)


def test_without_usage_the_timings_give_the_tokens() -> None:
    body = b'data: {"choices":[{"index":0,"delta":{"content":"hi"},"finish_reason":"stop"}],' \
           b'"timings":{"cache_n":5,"prompt_n":150,"predicted_n":19}}\n\ndata: [DONE]\n\n'
    stats = response_stats(body, "text/event-stream; charset=utf-8")
    assert (stats.prompt_tokens, stats.evaluated, stats.cached, stats.completion_tokens) == (155, 150, 5, 19)
    assert stats.tool_calls == 0 and stats.text == "hi" and stats.server_ms is None  # no prompt_ms, predicted_ms


@pytest.mark.parametrize(("text", "written"), [
    ('```json\n{\n  "name": "grep",\n  "arguments": {"pattern": "port"}\n}\n```', True),
    ('<tool_call>\n{"name": "ls", "arguments": {}}\n</tool_call>', True),
    ('{"type": "function", "function": {"name": "read", "arguments": "{}"}}', True),
    ('The port is 8731 (server/settings.py).', False),
    ('```json\n{"name": "widget", "version": "1.3.0"}\n```', False),  # a package.json quoted, no call
])
def test_a_call_written_as_text_is_counted_apart(text: str, written: bool) -> None:
    body = json.dumps({"choices": [{"index": 0, "message": {"role": "assistant", "content": text}}]}).encode()
    assert written_call(response_stats(body, "application/json")) is written


def test_a_json_response_with_two_calls() -> None:
    body = json.dumps({"choices": [{"index": 0, "finish_reason": "tool_calls", "message": {"role": "assistant",
                       "tool_calls": [{"id": "a", "function": {"name": "read"}}, {"id": "b", "function": {}}]}}],
                       "usage": {"prompt_tokens": 36, "completion_tokens": 5}}).encode()
    stats = response_stats(body, "application/json")
    assert (stats.tool_calls, stats.prompt_tokens, stats.completion_tokens, stats.evaluated) == (2, 36, 5, None)


@pytest.mark.parametrize("body", [b"", b"not json", b"[1, 2]", b"data: {broken\n\ndata: [DONE]\n\n",
                                  b'data: {"choices": [7, {"delta": "x"}], "timings": {"prompt_n": -3}}\n\n'])
def test_a_body_that_is_not_a_chat_response_gives_empty_stats(body: bytes) -> None:
    for content_type in ("text/event-stream", "application/json"):
        stats = response_stats(body, content_type)
        assert (stats.prompt_tokens, stats.evaluated, stats.tool_calls) == (None, None, 0)


def test_request_stats_count_the_tool_results() -> None:
    body = json.dumps({"stream": True, "messages": [{"role": "user", "content": "go"},
                       {"role": "assistant", "tool_calls": []}, {"role": "tool", "content": "x"}, "junk"]})
    assert request_stats(body.encode()) == RequestStats(4, 1, True)
    assert request_stats(b"{not json") == RequestStats() == request_stats(b'"a string"')


def _with_tools(*counts: int) -> list[Exchange]:
    exchanges = []
    for n in counts:
        exchange = Exchange("POST", "/v1/chat/completions", 0.0)
        exchange.request = RequestStats(n + 1, n, True)
        exchanges.append(exchange)
    return exchanges


def test_the_requests_after_the_first_are_summed_apart() -> None:
    exchanges = _with_tools(0, 1, 2)
    for exchange, (sent, evaluated, cached) in zip(exchanges, [(1250, 1240, 10), (1400, 160, 1240), (1500, 90, 1410)]):
        exchange.response = ResponseStats(prompt_tokens=sent, evaluated=evaluated, cached=cached, tool_calls=1)
    result = live.Result("minicode", "t", 1, True, "", 1.0, 0)
    live.summarise_exchanges(result, exchanges)
    assert (result.requests, result.prompt_tokens, result.evaluated, result.cached) == (3, 4150, 1490, 2660)
    assert (result.later_sent, result.later_evaluated, result.native_calls, result.tool_results) == (2900, 250, 3, 2)
    assert "(later eval 250/2,900)" in live.task_line(result)


def test_tool_results_count_each_new_one_once_also_after_a_compaction() -> None:
    assert live.tool_results_run(_with_tools(0, 1, 3, 3)) == 3
    assert live.tool_results_run(_with_tools(0, 2, 1, 2)) == 2 + 1 + 1  # shrank to 1: a new history
    assert live.tool_results_run([]) == 0


async def test_the_proxy_passes_the_stream_through_byte_for_byte_and_records_it() -> None:
    with FakeOpenAI() as server:
        server.script(Reply.raw_sse(LLAMA_SSE), Reply.raw_sse(LLAMA_SSE))
        request = {"model": "m", "stream": True, "messages": [{"role": "user", "content": "hi"},
                                                                {"role": "tool", "content": "r"}]}
        async with httpx2.AsyncClient() as client:
            direct = await client.post(server.base_url + "/chat/completions", json=request)
            async with RecordingProxy(server.base_url) as proxy:
                assert proxy.base_url.endswith("/v1") and proxy.base_url != server.base_url
                proxied = await client.post(proxy.base_url + "/chat/completions", json=request)
                models = await client.get(proxy.base_url + "/models")
    assert proxied.status_code == direct.status_code == 200
    assert proxied.content == direct.content == LLAMA_SSE
    assert proxied.headers["content-type"] == direct.headers["content-type"]
    assert models.json()["data"][0]["id"] == "fake-model"
    chat, listing = proxy.exchanges
    assert chat.is_chat and not listing.is_chat and chat.status == 200 and chat.error is None
    assert chat.request == RequestStats(2, 1, True)
    assert (chat.response.prompt_tokens, chat.response.evaluated, chat.response.cached) == (160, 12, 148)
    assert server.requests[-1].body == request  # the request arrived as sent


async def test_the_proxy_answers_502_with_a_reason_when_the_server_is_gone() -> None:
    with FakeOpenAI() as server:
        gone = server.base_url
    async with RecordingProxy(gone) as proxy, httpx2.AsyncClient() as client:
        response = await client.post(proxy.base_url + "/chat/completions", json={"messages": []})
    assert response.status_code == 502 and "live bench proxy: upstream" in response.json()["error"]["message"]
    assert proxy.exchanges[0].status == 502 and proxy.exchanges[0].error


async def test_an_agent_that_goes_away_mid_answer_ends_the_upstream_request() -> None:
    """A killed agent's request is closed upstream too: a shared server stops working on it."""
    with FakeOpenAI() as server:
        server.script(Reply.hang("partial"))
        async with RecordingProxy(server.base_url) as proxy:
            port = int(proxy.base_url.split(":")[2].split("/")[0])
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            body = json.dumps({"model": "m", "stream": True, "messages": []}).encode()
            writer.write(b"POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n"
                         b"content-length: %d\r\n\r\n%s" % (len(body), body))
            assert b"200" in await reader.readline()
            writer.close()
            assert await proxy.idle(10)
        for _ in range(100):
            if server.disconnects:
                break
            await asyncio.sleep(0.05)
    assert server.disconnects == 1
    assert "closed the connection" in (proxy.exchanges[0].error or "")


async def test_an_agent_that_goes_away_before_the_answer_starts_ends_the_upstream_request() -> None:
    """The server still evaluating the prompt (no headers yet): the agent's close reaches it too."""
    closed = asyncio.Event()

    async def silent(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.read()  # never answers; returns when the proxy closes the connection
        closed.set()

    upstream = await asyncio.start_server(silent, "127.0.0.1", 0)
    port = upstream.sockets[0].getsockname()[1]
    async with upstream, RecordingProxy(f"http://127.0.0.1:{port}/v1") as proxy:
        async with httpx2.AsyncClient() as client:
            with pytest.raises(httpx2.ReadTimeout):
                await client.post(proxy.base_url + "/chat/completions", json={"messages": []}, timeout=0.5)
        await asyncio.wait_for(closed.wait(), 10)
        assert await proxy.idle(10)
    assert proxy.exchanges[0].status == 0 and "closed the connection" in (proxy.exchanges[0].error or "")


def test_a_base_url_that_is_not_http_is_refused() -> None:
    with pytest.raises(ValueError, match="not an http"):
        RecordingProxy("127.0.0.1:8080/v1")


def test_the_task_set_is_large_enough_and_names_are_unique() -> None:
    assert len(TASKS) >= 20 and len({t.name for t in TASKS}) == len(TASKS)
    assert all(t.check or t.answer for t in TASKS)
    assert all(rel in t.files for t in TASKS for rel in t.unchanged)
    assert [t.name for t in by_names("run-count, which-port")] == ["run-count", "which-port"]
    with pytest.raises(ValueError, match="unknown task"):
        by_names("run-count,nope")


async def test_no_task_is_solved_by_doing_nothing(tmp_path: Path) -> None:
    for task in TASKS:
        workspace = tmp_path / task.name
        await live.make_workspace(task, workspace)
        solved, why = await live.judge(task, workspace, "I have made the change.")
        assert not solved and why, task.name


SOLUTIONS = {
    "fix-discount": ("shop/pricing.py", "def discount(price, percent):\n    return price - price * percent / 100\n",
                     ""),
    "run-checksum": (None, None, "The checksum is 1422b8621c."),
    "gitignore": (".gitignore", "*.log\n__pycache__/\n.env\n", ""),
}


@pytest.mark.parametrize("name", sorted(SOLUTIONS))
async def test_a_solved_task_passes_its_check(name: str, tmp_path: Path) -> None:
    (task,) = by_names(name)
    await live.make_workspace(task, tmp_path / "ws")
    rel, text, answer = SOLUTIONS[name]
    if rel is not None and text is not None:
        (tmp_path / "ws" / rel).write_text(text)
    assert await live.judge(task, tmp_path / "ws", answer) == (True, "")


async def test_editing_the_test_instead_of_the_code_fails(tmp_path: Path) -> None:
    (task,) = by_names("fix-discount")
    await live.make_workspace(task, tmp_path / "ws")
    (tmp_path / "ws" / "shop/tests/test_pricing.py").write_text("def test_nothing():\n    pass\n")
    assert await live.judge(task, tmp_path / "ws", "") == (False, "edited shop/tests/test_pricing.py")


async def _bench_minicode(server: FakeOpenAI, task_name: str, tmp_path: Path, timeout: float) -> live.Result:
    (task,) = by_names(task_name)
    async with RecordingProxy(server.base_url) as proxy:
        setup = live_agents.minicode_setup(tmp_path, proxy.base_url, "fake-model", None)
        return await live.run_one(setup, task, 1, tmp_path, proxy, timeout)


async def test_a_minicode_run_through_the_proxy_is_checked_and_counted(tmp_path: Path) -> None:
    with FakeOpenAI() as server:
        server.script(Reply.tool("write", path="hello.py", content="print('Hello, world!')\n"),
                      Reply.text("Created hello.py."))
        result = await _bench_minicode(server, "hello-script", tmp_path, 60)
    assert (result.solved, result.why, result.exit_code) == (True, "", 0)
    assert (result.requests, result.native_calls, result.tool_results) == (2, 1, 1)
    assert result.prompt_tokens > 0 and "Created hello.py." in result.answer


async def test_a_run_past_the_time_limit_is_killed_and_fails(tmp_path: Path) -> None:
    with FakeOpenAI() as server:
        server.script(Reply.hang())
        result = await _bench_minicode(server, "which-port", tmp_path, 3)
    assert not result.solved and result.exit_code is None
    assert result.why.startswith("timed out after 3 s") and result.wall < 15


def test_bad_options_are_usage_errors(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stopped:
        live.parse_args(["--agents", "minicode,claude"])
    assert stopped.value.code == 2 and "--agents" in capsys.readouterr().err
    assert live.main(["--tasks", "nope", "--list"]) == 2


def test_the_table_counts_per_agent() -> None:
    results = [live.Result("minicode", "a", 1, True, "", 3.0, 0, prompt_tokens=1200, evaluated=200, cached=1000),
               live.Result("minicode", "b", 1, False, "x", 9.0, 1, native_calls=2, tool_results=2),
               live.Result("pi", "a", 1, False, "timed out", 5.0, None, written_calls=1)]
    rows = live.summary_rows(results, ["minicode", "pi"])
    assert "| solved | 1 / 2 | 0 / 1 |" in rows and "| median wall per task | 6.0 s | 5.0 s |" in rows
    assert "|   taken from its cache | 1,000 | 0 |" in rows and "| tool calls: native / run | 2 / 2 | 0 / 0 |" in rows
    assert "| answers with a call written as text | 0 | 1 |" in rows
    assert live.task_line(results[2]).split()[:3] == ["pi", "a", "FAILED"] and "timed out" in live.task_line(results[2])


def test_pi_gets_the_documented_local_provider(tmp_path: Path) -> None:
    setup = live_agents.pi_setup(tmp_path, "http://127.0.0.1:9/v1", "qwen", 32768, "/bin/pi")
    models = json.loads((tmp_path / "pi-home/.pi/agent/models.json").read_text())
    provider = models["providers"][live_agents.PI_PROVIDER]
    assert provider["api"] == "openai-completions" and provider["baseUrl"] == "http://127.0.0.1:9/v1"
    assert provider["models"] == [{"id": "qwen", "contextWindow": 32768}]
    assert setup.command("do it", tmp_path / "ws", "t-1")[-2:] == ["-p", "do it"]
    assert setup.env["PI_CODING_AGENT_DIR"] == str(tmp_path / "pi-home/.pi/agent")
