"""The diagnosis in-process: the real provider against server shapes the e2e tests don't cover."""

from __future__ import annotations

import asyncio
import json
import ssl
from pathlib import Path
from typing import Any, AsyncIterator, Callable

import pytest

from minicode.config import Config, ModelConfig
from minicode.doctor.diagnose import diagnose
from minicode.doctor.report import Report, Status
from minicode.provider.openai import OpenAIProvider
from tests.support.fake_openai import FakeOpenAI, RecordedRequest, Reply

KEY = "sk-doctor-test-key-0123456789"
WEATHER = ("get_weather", '{"city": "Paris", "unit": "celsius"}')


def config_for(base_url: str, **model: Any) -> Config:
    fields: dict[str, Any] = {"base_url": base_url, "name": "fake-model", "api_key": KEY, **model}
    return Config(model=ModelConfig(**fields), path=Path("/nonexistent/config.toml"))


def competent(**reply: Any) -> Reply:
    def answer(request: RecordedRequest) -> Reply:
        if request.has_tools:
            return Reply(kind="tools", calls=[WEATHER], **reply)
        return Reply.text("one two three four five six seven eight nine ten", **reply)

    return Reply.dynamic(answer)


class NoSleep:
    def __init__(self) -> None:
        self.waits: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)


@pytest.fixture
def server() -> Any:
    with FakeOpenAI() as s:
        yield s


@pytest.fixture
def run(server: FakeOpenAI, tmp_path: Path) -> Callable[..., Any]:
    async def _run(*, timeout: float = 10.0, base_url: str | None = None, text_calls: Any = None,
                   **model: Any) -> Report:
        config = config_for(base_url or server.base_url, **model)
        provider = OpenAIProvider(base_url=config.model.base_url, api_key=KEY, model=config.model.name,
                                  thinking=config.model.thinking, wire_cache=tmp_path / "wire.json",
                                  sleep=NoSleep(), max_retries=1)
        try:
            return await diagnose(config, env={}, provider=provider, tls_context=ssl.create_default_context,
                                  wire_cache=tmp_path / "wire.json", timeout=timeout, text_calls=text_calls)
        finally:
            await provider.aclose()

    return _run


def by_name(report: Report) -> dict[str, Any]:
    return {c.name: c for c in report.checks}


async def test_thinking_refused_field_by_field_is_learned_and_reported(server: FakeOpenAI, run: Any) -> None:
    def strict(request: RecordedRequest) -> Reply:
        body = request.body
        if body.get("thinking", {}).get("type") == "enabled":
            return Reply.error(400, {"error": {"message": 'invalid thinking.type: "enabled" (allowed: adaptive, disabled)'}})
        if "reasoning_effort" in body:
            return Reply.error(400, {"error": {"message": "Unsupported parameter: reasoning_effort"}})
        return competent().make(request)  # type: ignore[misc]

    server.default = Reply.dynamic(strict)
    report = await run(thinking="high")
    parameters = by_name(report)["parameters"]
    assert report.usable and parameters.status is Status.OK
    assert "thinking=high sent as thinking.type=adaptive" in parameters.summary
    assert "reasoning_effort" not in parameters.summary and "learned now, saved to" in parameters.summary
    assert parameters.data["learned_now"] is True


async def test_a_server_that_takes_no_thinking_field_warns_that_thinking_does_nothing(
    server: FakeOpenAI, run: Any
) -> None:
    server.reject_fields = {"thinking", "reasoning_effort"}
    server.default = competent()
    parameters = by_name(await run(thinking="low"))["parameters"]
    assert parameters.status is Status.WARNING
    assert "accepts no thinking fields" in parameters.summary and "remove [model].thinking" in (parameters.fix or "")


async def test_a_server_that_ignores_stream_true(server: FakeOpenAI, run: Any) -> None:
    server.default = competent(ignore_stream=True)
    report = await run()
    answer = by_name(report)["answer"]
    assert answer.status is Status.WARNING and "ignored stream: true" in answer.summary
    assert "one JSON body (not streamed)" in answer.summary
    assert by_name(report)["tool call"].status is Status.OK


async def test_a_silent_server_times_out_with_a_hint(server: FakeOpenAI, run: Any) -> None:
    server.default = Reply.hang()
    report = await run(timeout=0.3)
    answer = by_name(report)["answer"]
    assert answer.status is Status.FAILED and "no complete answer within 0.3 s" in answer.summary
    assert "--timeout" in (answer.fix or "") and not report.usable


async def test_an_exhausted_quota_says_add_credit(server: FakeOpenAI, run: Any) -> None:
    server.default = Reply.error(429, {"error": {"message": "You exceeded your current quota", "code": "insufficient_quota"}})
    answer = by_name(await run())["answer"]
    assert answer.status is Status.FAILED and "add credit" in (answer.fix or "")
    assert len(server.requests) == 1  # not retried


async def test_a_retried_server_error_is_mentioned(server: FakeOpenAI, run: Any) -> None:
    server.script(Reply.error(503, {"error": {"message": "overloaded"}}))
    server.default = competent()
    answer = by_name(await run())["answer"]
    assert answer.status is Status.OK and "after 1 retry (HTTP 503 service unavailable)" in answer.summary


async def test_no_model_list_is_fine_when_the_model_answers(server: FakeOpenAI, run: Any) -> None:
    server.models_reply = Reply.error(404, {"error": {"message": "Not Found"}})
    server.default = competent()
    report = await run()
    checks = by_name(report)
    assert report.usable
    assert checks["model"].status is Status.OK
    assert "/models failed: HTTP 404" in checks["model"].summary
    assert checks["key"].status is Status.OK


@pytest.mark.parametrize("chat_status", [404, 405, 501])
async def test_a_url_that_does_not_serve_the_api_fails_the_endpoint_pointing_at_the_path(
        server: FakeOpenAI, run: Any, chat_status: int) -> None:
    server.models_reply = Reply.error(404, "<html><title>404 page not found</title></html>")
    server.default = Reply.error(chat_status, "Error response: Unsupported method ('POST')")
    report = await run()
    endpoint = by_name(report)["endpoint"]
    assert endpoint.status is Status.FAILED and "does not serve an OpenAI-compatible API" in endpoint.summary
    assert f"HTTP 404 and POST /chat/completions HTTP {chat_status}" in endpoint.summary
    assert "base_url" in (endpoint.fix or "") and "/v1" in (endpoint.fix or "")
    assert {c.status for c in report.checks[1:]} == {Status.SKIPPED}
    assert len(server.requests) == 1  # no second model request once that is clear


async def test_a_model_not_found_is_not_mistaken_for_a_wrong_url(server: FakeOpenAI, run: Any) -> None:
    not_found = {"error": {"message": "model not found", "type": "invalid_request_error", "code": "model_not_found"}}
    server.default = Reply.error(404, not_found)
    report = by_name(await run())
    assert report["endpoint"].status is Status.OK and report["answer"].status is Status.FAILED


@pytest.mark.parametrize(("count", "shown"), [
    (3, ": llama-3, mistral-1, qwen-2"),
    (12, ": m-00, m-01, m-02, m-03, m-04, m-05, m-06, m-07 … and 4 more"),
])
async def test_a_missing_model_with_no_near_name_lists_some_the_server_has(server: FakeOpenAI, run: Any,
                                                                           count: int, shown: str) -> None:
    # trial: "set [model].name (or --model) to a model the server has" — without naming one
    not_found = {"error": {"message": "model not found", "type": "invalid_request_error", "code": "model_not_found"}}
    server.models = [{"id": i} for i in (["llama-3", "mistral-1", "qwen-2"] if count == 3
                                         else [f"m-{n:02}" for n in range(count)])]
    server.default = Reply.error(404, not_found)
    model = by_name(await run())["model"]
    assert model.status is Status.FAILED and model.fix == f"set [model].name (or --model) to a model the server has{shown}"


async def test_an_alias_not_in_the_list_is_a_warning(server: FakeOpenAI, run: Any) -> None:
    server.models = [{"id": "fake-model-2024"}]
    server.default = competent()
    model = by_name(await run())["model"]
    assert model.status is Status.WARNING and "does not list it; did you mean fake-model-2024?" in model.summary


@pytest.mark.parametrize(("calls", "said"), [
    ([("get_weather", '{"city": "Par')], "not valid JSON"),
    ([("get_weather", '{"town": "Paris"}')], "lack the required string 'city'"),
    ([("bash", '{"command": "ls"}')], "a tool it was not offered"),
])
async def test_broken_tool_calls_fail(server: FakeOpenAI, run: Any, calls: list[tuple[str, str]], said: str) -> None:
    def answer(request: RecordedRequest) -> Reply:
        return Reply(kind="tools", calls=calls) if request.has_tools else Reply.text("one two")

    server.default = Reply.dynamic(answer)
    tool = by_name(await run())["tool call"]
    assert tool.status is Status.FAILED and said in tool.summary


async def test_an_answer_cut_off_while_thinking(server: FakeOpenAI, run: Any) -> None:
    server.default = Reply.text("", reasoning="hmm " * 50, finish_reason="length")
    answer = by_name(await run())["answer"]
    assert answer.status is Status.WARNING and "before any text" in answer.summary


@pytest.mark.parametrize(("configured", "status", "said"), [
    (8192, Status.OK, "compacts earlier"),
    (200000, Status.WARNING, "set [model].context_window = 16384"),
])
async def test_context_window_against_the_configured_one(
    server: FakeOpenAI, run: Any, configured: int, status: Status, said: str
) -> None:
    server.models = [{"id": "fake-model", "meta": {"n_ctx_train": 16384}}]
    server.default = competent()
    context = by_name(await run(context_window=configured))["context"]
    assert context.status is status and said in f"{context.summary} {context.fix}"
    assert "llama.cpp meta.n_ctx_train), the model's own limit" in context.summary


async def test_the_context_window_from_llama_cpp_props_is_used_and_remembered(
    server: FakeOpenAI, run: Any, tmp_path: Path
) -> None:
    from minicode.provider.wire import WireProfileCache, host_key

    server.routes["/props"] = {"default_generation_settings": {"n_ctx": 32768}}
    server.models = [{"id": "fake-model", "meta": {"n_ctx_train": 131072}}]
    server.default = competent()
    context = by_name(await run())["context"]
    assert context.status is Status.OK
    assert context.summary.startswith("32,768 tokens (llama.cpp /props); used (no [model].context_window)")
    assert context.data["used"] == 32768 and context.data["used_source"] == "llama.cpp /props"
    cached = WireProfileCache(tmp_path / "wire.json").get_window(host_key(server.base_url), "fake-model")
    assert cached == (32768, "llama.cpp /props", "")
    assert not any(r.path in ("/props", "/api/show") for r in server.requests)  # never taken for a model call


async def test_a_server_that_reports_no_window_warns_with_the_default(server: FakeOpenAI, run: Any) -> None:
    from minicode.config import DEFAULT_CONTEXT_WINDOW

    server.default = competent()
    context = by_name(await run())["context"]
    assert context.status is Status.WARNING
    assert context.summary == (f"not reported by the server (HTTP 404 ×3, 1 answer without a window); "
                               f"minicode assumes {DEFAULT_CONTEXT_WINDOW:,} tokens (default (unknown))")
    assert "[model].context_window" in (context.fix or "")


async def test_the_configured_window_wins_over_the_servers(server: FakeOpenAI, run: Any) -> None:
    server.routes["/props"] = {"default_generation_settings": {"n_ctx": 32768}}
    server.default = competent()
    context = by_name(await run(context_window=65536))["context"]
    assert context.status is Status.WARNING and context.data["used"] == 65536
    assert "set [model].context_window = 32768" in (context.fix or "")


@pytest.fixture
async def closes_at_once() -> AsyncIterator[int]:
    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.close()

    srv = await asyncio.start_server(handle, "127.0.0.1", 0)
    yield srv.sockets[0].getsockname()[1]
    srv.close()


async def test_tcp_fine_but_no_http_is_an_endpoint_failure(run: Any, closes_at_once: int) -> None:
    report = await run(base_url=f"http://127.0.0.1:{closes_at_once}/v1")
    endpoint = by_name(report)["endpoint"]
    assert endpoint.status is Status.FAILED and "but HTTP failed" in endpoint.summary
    assert all(c.status is Status.SKIPPED for c in report.checks[1:])
    assert json.loads(report.to_json())["usable"] is False


async def test_an_unlearnable_400_with_thinking_set_suggests_think_off(server: FakeOpenAI, run: Any) -> None:
    server.default = Reply.error(400, {"error": {"message": "reasoning is not available for this model tier"}})
    answer = by_name(await run(thinking="high"))["answer"]
    assert answer.status is Status.FAILED and "try --think off (now thinking=high)" in (answer.fix or "")
    assert len(server.requests) == 1  # nothing to learn from it: not retried


async def test_a_port_that_accepts_but_never_answers_fails_the_endpoint_at_once(run: Any) -> None:
    held: list[asyncio.StreamWriter] = []

    async def silent(_reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        held.append(writer)  # accepted, never answered

    listener = await asyncio.start_server(silent, "127.0.0.1", 0)
    port = listener.sockets[0].getsockname()[1]
    try:
        report = await run(timeout=0.5, base_url=f"http://127.0.0.1:{port}/v1")
    finally:
        for writer in held:
            writer.close()
        listener.close()
    endpoint = by_name(report)["endpoint"]
    assert endpoint.status is Status.FAILED and "no HTTP answer to GET /models in time" in endpoint.summary
    assert "is this the API's port?" in (endpoint.fix or "")
    assert {c.status for c in report.checks[1:]} == {Status.SKIPPED}  # no model request waited on it


async def test_quirks_met_are_working_with_a_note_and_remembered(server: FakeOpenAI, run: Any, tmp_path: Path) -> None:
    from minicode.provider.wire import WireProfileCache, host_key

    server.routes["/props"] = {"default_generation_settings": {"n_ctx": 32768, "params": {"n_predict": -1}}}
    server.default = competent(whole_calls=True)  # a tool call in one chunk
    report = await run()
    quirks = by_name(report)["quirks"]
    assert report.usable and quirks.status is Status.OK
    assert quirks.summary.startswith("works with: tool calls arrive whole in one chunk")
    assert "no output limit of its own (llama.cpp n_predict -1): minicode always sends max_tokens (8,192 here)" in (
        quirks.summary)
    notes = WireProfileCache(tmp_path / "wire.json").get_notes(host_key(server.base_url), "fake-model")
    assert set(notes) == {"tool_call_whole", "needs_max_tokens"} == set(quirks.data["notes"])
    assert quirks.data["remembered_in"] == str(tmp_path / "wire.json")


async def test_a_server_that_caps_output_below_max_tokens_is_noted(server: FakeOpenAI, run: Any) -> None:
    server.routes["/props"] = {"default_generation_settings": {"n_ctx": 32768, "n_predict": 2048}}
    server.default = competent()
    quirks = by_name(await run())["quirks"]
    assert "stops every answer at 2,048 tokens (llama.cpp n_predict), below minicode's max_tokens 8,192" in (
        quirks.summary)


async def test_no_quirks_when_a_model_request_failed(server: FakeOpenAI, run: Any) -> None:
    server.default = Reply.error(500, {"error": {"message": "boom"}})
    quirks = by_name(await run())["quirks"]
    assert quirks.status is Status.SKIPPED


def _answers_tools_with(text: str) -> Reply:
    return Reply.dynamic(lambda request: Reply.text(text if request.has_tools else "one two three"))


async def test_tool_calls_written_as_text_are_a_working_endpoint_remembered(server: FakeOpenAI, run: Any,
                                                                            tmp_path: Path) -> None:
    from minicode.cli.doctor_command import _calls_in_text
    from minicode.provider.wire import WireProfileCache

    server.default = _answers_tools_with('```json\n{"name": "get_weather", "arguments": {"city": "Paris", "unit": "celsius"}}\n```')
    report = await run(text_calls=_calls_in_text)
    tool = by_name(report)["tool call"]
    assert tool.status is Status.WARNING and report.usable and report.exit_code == 0
    assert tool.summary.startswith("tool calls come as text — minicode recovers them: get_weather(")
    assert tool.data["calls_as_text"] == [{"name": "get_weather", "arguments": '{"city": "Paris", "unit": "celsius"}'}]
    host = server.base_url.split("//")[1].split("/")[0]
    assert WireProfileCache(tmp_path / "wire.json").tool_calls(host, "fake-model") == "text"
    assert tool.data["remembered_in"] == str(tmp_path / "wire.json")
    # a later probe that gets a native call says so in the same entry
    server.default = competent()
    assert by_name(await run(text_calls=_calls_in_text))["tool call"].status is Status.OK
    assert WireProfileCache(tmp_path / "wire.json").tool_calls(host, "fake-model") == "native"


@pytest.mark.parametrize("text", [
    "It is sunny in Paris.",
    'To call it you would send, for example: ```json\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n```',
    '```json\n{"name": "get_weather", "arguments": {"town": "Paris"}}\n```',  # not the tool's arguments
])
async def test_text_that_is_no_recoverable_call_still_fails(server: FakeOpenAI, run: Any, tmp_path: Path,
                                                            text: str) -> None:
    from minicode.cli.doctor_command import _calls_in_text
    from minicode.provider.wire import WireProfileCache

    server.default = _answers_tools_with(text)
    report = await run(text_calls=_calls_in_text)
    tool = by_name(report)["tool call"]
    assert tool.status is Status.FAILED and "answered in text instead of calling the tool" in tool.summary
    assert not report.usable
    host = server.base_url.split("//")[1].split("/")[0]
    assert WireProfileCache(tmp_path / "wire.json").tool_calls(host, "fake-model") is None
