"""The fake server itself must behave like an OpenAI-compatible endpoint, or every e2e test lies."""

import json

import httpx2

from tests.support.fake_openai import FakeOpenAI, Reply


def _events(text: str) -> list[str]:
    return [line[len("data: "):] for line in text.splitlines() if line.startswith("data: ")]


def test_streams_text_then_done_and_records_request() -> None:
    with FakeOpenAI() as server:
        server.script(Reply.text("hello world"))
        r = httpx2.post(f"{server.base_url}/chat/completions", json={"stream": True, "messages": [{"role": "user", "content": "hi"}]})
        events = _events(r.text)
        assert events[-1] == "[DONE]"
        text = "".join(json.loads(e)["choices"][0]["delta"].get("content") or "" for e in events[:-1] if json.loads(e)["choices"])
        assert text == "hello world"
        assert server.requests[0].messages == [{"role": "user", "content": "hi"}]


def test_tool_call_arguments_reassemble_and_plain_json_mode() -> None:
    with FakeOpenAI() as server:
        server.script(Reply.tool("write", path="a.txt", content="x" * 50), Reply.tool("ls"))
        r = httpx2.post(f"{server.base_url}/chat/completions", json={"stream": True})
        args = "".join(
            c["function"].get("arguments", "")
            for e in _events(r.text)[:-1]
            for ch in json.loads(e)["choices"]
            for c in ch["delta"].get("tool_calls", [])
        )
        assert json.loads(args) == {"path": "a.txt", "content": "x" * 50}
        plain = httpx2.post(f"{server.base_url}/chat/completions", json={}).json()
        assert plain["choices"][0]["message"]["tool_calls"][0]["function"]["name"] == "ls"


def test_exhausted_script_is_a_500_and_errors_are_sent_as_scripted() -> None:
    with FakeOpenAI() as server:
        server.script(Reply.error(401, {"error": {"message": "bad key"}}))
        assert httpx2.post(f"{server.base_url}/chat/completions", json={}).status_code == 401
        assert httpx2.post(f"{server.base_url}/chat/completions", json={}).status_code == 500


def test_models_key_check_rejected_fields_and_whole_tool_calls() -> None:
    with FakeOpenAI() as server:
        assert httpx2.get(f"{server.base_url}/models").json()["data"][0]["id"] == "fake-model"
        server.models_reply = Reply.error(404, {"error": {"message": "no such route"}})
        assert httpx2.get(f"{server.base_url}/models").status_code == 404
        assert len(server.gets) == 2
        server.api_key = "sk-right"
        assert httpx2.post(f"{server.base_url}/chat/completions", json={}).status_code == 401
        server.api_key = None
        server.reject_fields = {"max_tokens"}
        refused = httpx2.post(f"{server.base_url}/chat/completions", json={"max_tokens": 5})
        assert refused.status_code == 400 and refused.json()["error"]["param"] == "max_tokens"
        assert len(server.requests) == 2  # refused requests are recorded too
        server.script(Reply(kind="tools", calls=[("get_weather", '{"city": "Paris"}')], whole_calls=True))
        r = httpx2.post(f"{server.base_url}/chat/completions", json={"stream": True})
        pieces = [c for e in _events(r.text)[:-1] for ch in json.loads(e)["choices"]
                  for c in ch["delta"].get("tool_calls", [])]
        assert len(pieces) == 1 and pieces[0]["function"] == {"name": "get_weather", "arguments": '{"city": "Paris"}'}
