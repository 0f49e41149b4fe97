"""The fake server itself must behave like an OpenAI-compatible endpoint, or every e2e test lies."""

import json

import httpx

from tests.support.fake_openai import FakeOpenAI, Reply


def _events(text: str) -> list[str]:
    return [line[len("data: "):] for line in text.splitlines() if line.startswith("data: ")]


def test_streams_text_then_done_and_records_request() -> None:
    with FakeOpenAI() as server:
        server.script(Reply.text("hello world"))
        r = httpx.post(f"{server.base_url}/chat/completions", json={"stream": True, "messages": [{"role": "user", "content": "hi"}]})
        events = _events(r.text)
        assert events[-1] == "[DONE]"
        text = "".join(json.loads(e)["choices"][0]["delta"].get("content") or "" for e in events[:-1] if json.loads(e)["choices"])
        assert text == "hello world"
        assert server.requests[0].messages == [{"role": "user", "content": "hi"}]


def test_tool_call_arguments_reassemble_and_plain_json_mode() -> None:
    with FakeOpenAI() as server:
        server.script(Reply.tool("write", path="a.txt", content="x" * 50), Reply.tool("ls"))
        r = httpx.post(f"{server.base_url}/chat/completions", json={"stream": True})
        args = "".join(
            c["function"].get("arguments", "")
            for e in _events(r.text)[:-1]
            for ch in json.loads(e)["choices"]
            for c in ch["delta"].get("tool_calls", [])
        )
        assert json.loads(args) == {"path": "a.txt", "content": "x" * 50}
        plain = httpx.post(f"{server.base_url}/chat/completions", json={}).json()
        assert plain["choices"][0]["message"]["tool_calls"][0]["function"]["name"] == "ls"


def test_exhausted_script_is_a_500_and_errors_are_sent_as_scripted() -> None:
    with FakeOpenAI() as server:
        server.script(Reply.error(401, {"error": {"message": "bad key"}}))
        assert httpx.post(f"{server.base_url}/chat/completions", json={}).status_code == 401
        assert httpx.post(f"{server.base_url}/chat/completions", json={}).status_code == 500
