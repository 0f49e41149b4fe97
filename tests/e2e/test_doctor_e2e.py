"""`minicode --doctor` end to end: the real executable against server shapes of the fake server."""

from __future__ import annotations

import json
import socket
from typing import Any

import pytest

from tests.e2e.conftest import API_KEY, KEY_VAR, Env, Run
from tests.support.fake_openai import RecordedRequest, Reply

USAGE = {"prompt_tokens": 40, "completion_tokens": 11, "total_tokens": 51}


def competent(*, usage: dict[str, int] | None = USAGE, whole: bool = False) -> Reply:
    """A model that counts when asked and calls the offered tool when asked."""

    def answer(request: RecordedRequest) -> Reply:
        if request.has_tools:
            call = ("get_weather", '{"city": "Paris", "unit": "celsius"}')
            return Reply(kind="tools", calls=[call], usage=usage, whole_calls=whole)
        return Reply.text("one two three four five six seven eight nine ten", usage=usage)

    return Reply.dynamic(answer)


def set_config(env: Env, **model: Any) -> None:
    fields = {"base_url": env.server.base_url, "name": "fake-model", "api_key_env": KEY_VAR, **model}
    body = "".join(f"{k} = {json.dumps(v)}\n" for k, v in fields.items())
    (env.workspace / "config" / "config.toml").write_text("[model]\n" + body)


def lines(run: Run) -> dict[str, str]:
    """The report's lines by check name: {"endpoint": "ok endpoint ...", ...}."""
    found: dict[str, str] = {}
    for line in run.stdout.splitlines():
        parts = line.split(None, 1)
        if parts and parts[0] in ("ok", "warning", "failed", "skipped"):
            rest = parts[1]
            name = "tool call" if rest.startswith("tool call") else rest.split()[0]
            found[name] = line
    return found


def doctor(env: Env, *args: str) -> Run:
    run = env.run("--doctor", *args)
    assert API_KEY not in run.stdout + run.stderr
    return run


def test_healthy_endpoint_is_usable_and_says_what_it_costs(e2e: Env) -> None:
    e2e.server.default = competent()
    e2e.server.models = [{"id": "fake-model", "object": "model", "max_model_len": 32768}]
    set_config(e2e, context_window=32768)
    r = doctor(e2e)
    assert r.code == 0, r.stdout + r.stderr
    assert "a few hundred tokens" in r.stderr.splitlines()[0]  # said up front, before any request
    found = lines(r)
    assert all(line.startswith("ok ") for line in found.values()), r.stdout
    assert list(found) == ["endpoint", "key", "model", "answer", "tool call", "parameters", "context", "quirks"]
    assert "TCP" in found["endpoint"] and "HTTP" in found["endpoint"] and "plain http" in found["endpoint"]
    assert f"accepted (key from ${KEY_VAR})" in found["key"]
    assert "fake-model is listed by /models" in found["model"]
    assert "first token" in found["answer"] and "tokens/s" in found["answer"]
    assert "[DONE]" in found["answer"] and "usage in the stream" in found["answer"]
    assert 'get_weather({"city": "Paris", "unit": "celsius"})' in found["tool call"]
    assert "valid JSON" in found["tool call"] and "streamed in" in found["tool call"]
    assert "max_tokens accepted" in found["parameters"]
    assert "32,768 tokens (vllm max_model_len); matches" in found["context"]
    assert r.stdout.rstrip().endswith("usable · 2 model requests, 102 tokens")
    assert len(e2e.server.requests) == 2 and len(e2e.server.gets) == 2  # /models: the list, the window
    assert sorted(r.path for r in e2e.server.asked) == ["/api/show", "/api/v0/models", "/props"]
    # the requests are the tiny probes: a streamed answer, then a streamed tool call
    first, second = e2e.server.requests
    assert first.body["stream"] is True and not first.has_tools
    assert second.has_tools and second.body["tools"][0]["function"]["name"] == "get_weather"


def test_json_prints_the_same_report_as_one_object(e2e: Env) -> None:
    e2e.server.default = competent()
    r = doctor(e2e, "--json")
    assert r.code == 0
    report = json.loads(r.stdout)  # stdout is exactly one JSON object
    assert report["usable"] is True and report["model"] == "fake-model"
    assert [c["name"] for c in report["checks"]] == [
        "endpoint", "key", "model", "answer", "tool call", "parameters", "context", "quirks"]
    by_name = {c["name"]: c for c in report["checks"]}
    assert by_name["context"]["status"] == "warning" and "context_window" in by_name["context"]["fix"]
    assert by_name["answer"]["data"]["usage_in_stream"] is True and by_name["answer"]["data"]["done"] is True
    assert by_name["endpoint"]["data"]["tcp_ms"] is not None
    assert report["tokens"] == {"prompt": 80, "completion": 22, "total": 102} and report["requests"] == 2


def test_a_rejected_key_fails_and_skips_the_rest(e2e: Env) -> None:
    e2e.server.api_key = "sk-the-right-key-000"
    e2e.server.default = competent()
    r = doctor(e2e)
    assert r.code == 1
    found = lines(r)
    assert found["key"].startswith("failed") and "HTTP 401" in found["key"]
    assert f"check ${KEY_VAR}" in r.stdout
    assert all(found[n].startswith("skipped") for n in ("model", "answer", "tool call", "parameters", "context", "quirks"))
    assert e2e.server.requests == []  # no model request was wasted
    assert "not usable: 1 check failed" in r.stdout


def test_an_unknown_model_names_the_near_ones(e2e: Env) -> None:
    e2e.server.models = [{"id": "fake-model"}, {"id": "fake-model-mini"}, {"id": "other"}]
    e2e.server.default = Reply.error(404, {"error": {"message": "The model `fake-modle` does not exist",
                                                     "code": "model_not_found"}})
    set_config(e2e, name="fake-modle")
    r = doctor(e2e)
    assert r.code == 1
    found = lines(r)
    assert found["model"].startswith("failed") and "did you mean fake-model" in found["model"]
    assert "set [model].name (or --model) to fake-model" in r.stdout
    assert found["answer"].startswith("failed") and "does not exist" in found["answer"]
    assert found["tool call"].startswith("skipped")


def test_a_server_without_usage_in_the_stream_is_usable_with_a_warning(e2e: Env) -> None:
    e2e.server.default = competent(usage=None)
    r = doctor(e2e)
    assert r.code == 0
    found = lines(r)
    assert found["answer"].startswith("warning") and "no usage in the stream" in found["answer"]
    assert "≈" in found["answer"]  # tokens/s estimated from the text
    assert "tokens: unavailable" in r.stdout  # what it means, as the fix says
    assert r.stdout.rstrip().endswith("2 model requests, tokens not reported")


def test_a_server_that_rejects_max_tokens_is_learned_and_saved(e2e: Env) -> None:
    e2e.server.reject_fields = {"max_tokens"}
    e2e.server.default = competent()
    r = doctor(e2e)
    assert r.code == 0, r.stdout
    found = lines(r)
    assert found["parameters"].startswith("ok")
    assert "max_completion_tokens (the server rejects max_tokens)" in found["parameters"]
    cache = e2e.home / ".minicode" / "wire-profiles.json"
    assert f"learned now, saved to {cache}" in found["parameters"]
    learned = json.loads(cache.read_text())["profiles"]
    assert [p["profile"]["max_tokens_field"] for p in learned.values()] == ["max_completion_tokens"]
    bodies = [req.body for req in e2e.server.requests]
    assert "max_tokens" in bodies[0] and "max_completion_tokens" in bodies[1]  # refused, then retried once
    # a second run starts from what was learned: no refused request, "learned earlier"
    again = doctor(e2e)
    assert "learned earlier (cached)" in lines(again)["parameters"]
    assert all("max_tokens" not in req.body for req in e2e.server.requests[len(bodies):])


def test_tool_calls_streamed_in_one_piece_are_fine(e2e: Env) -> None:
    e2e.server.default = competent(whole=True)
    r = doctor(e2e)
    assert r.code == 0
    assert "valid JSON · in one piece" in lines(r)["tool call"]


def test_a_model_that_will_not_call_tools_is_not_usable(e2e: Env) -> None:
    e2e.server.default = Reply.text("It is sunny in Paris.")
    r = doctor(e2e)
    assert r.code == 1
    found = lines(r)
    assert found["tool call"].startswith("failed") and "answered in text instead of calling the tool" in found["tool call"]
    assert "supports tools" in r.stdout


def test_a_model_that_writes_its_tool_calls_as_text_is_usable_and_remembered(e2e: Env) -> None:
    call = '{"name": "get_weather", "arguments": {"city": "Paris", "unit": "celsius"}}'
    e2e.server.default = Reply.dynamic(lambda request: Reply.text(
        f"<tool_call>\n{call}\n</tool_call>" if request.has_tools else "one two three four five six seven eight nine ten"))
    r = doctor(e2e)
    assert r.code == 0, r.stdout
    found = lines(r)
    assert found["tool call"].startswith("warning") and "tool calls come as text — minicode recovers them" in found["tool call"]
    assert "\nusable, 2 warnings" in r.stdout  # the other: the fake server reports no context window
    learned = json.loads((e2e.home / ".minicode" / "wire-profiles.json").read_text())["profiles"]
    assert [entry["tool_calls"]["style"] for entry in learned.values()] == ["text"]


def test_connection_refused_is_diagnosed_as_tcp(e2e: Env) -> None:
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    set_config(e2e, base_url=f"http://127.0.0.1:{port}/v1")
    r = doctor(e2e, "--json", "--config", "config/config.toml")  # named: a changed server is asked otherwise
    assert r.code == 1
    report = json.loads(r.stdout)
    endpoint = report["checks"][0]
    assert endpoint["status"] == "failed" and endpoint["data"]["failed_stage"] == "tcp"
    assert "connection refused" in endpoint["summary"]
    assert {c["status"] for c in report["checks"][1:]} == {"skipped"}


def test_dns_failure_is_diagnosed_as_dns(e2e: Env) -> None:
    set_config(e2e, base_url="https://api.nonexistent-host.invalid/v1")
    r = doctor(e2e, "--config", "config/config.toml")  # named: a project file sending the key elsewhere is asked
    assert r.code == 1
    endpoint = lines(r)["endpoint"]
    # the machine's resolver decides how the name fails (no such host at once, or no DNS server
    # answering within the budget); either way the DNS stage is named, with the host
    assert endpoint.startswith("failed") and "DNS: " in endpoint
    assert "api.nonexistent-host.invalid" in endpoint
    assert "check the host in [model].base_url" in r.stdout


def test_a_bad_config_is_still_exit_2(e2e: Env) -> None:
    (e2e.workspace / "config" / "config.toml").write_text("[model]\nname = 3\n")
    r = e2e.run("--doctor")
    assert r.code == 2 and "minicode: error:" in r.stderr and r.stdout == ""


@pytest.mark.parametrize("argv", [["--doctor", "do a task"], ["--json"]])
def test_doctor_flags_misused_are_usage_errors(e2e: Env, argv: list[str]) -> None:
    assert e2e.run(*argv).code == 2
