"""End-to-end wire profiles (SPEC 3.4): the real `minicode` executable against FakeOpenAI —
thinking fields per `--think`/config, a MiniMax-style 400 patched and retried once, the
learned profile cached in `$HOME/.minicode/wire-profiles.json` and used by the next run."""

from __future__ import annotations

import json
import re

from tests.e2e.conftest import Env
from tests.support.fake_openai import Reply

MINIMAX_400 = {"error": {"message": 'invalid params, invalid thinking.type: "enabled" (allowed: adaptive, disabled) (2013)',
                         "type": "bad_request_error", "param": "", "code": None}}
THINKING_FIELDS = ("thinking", "reasoning_effort")


def _cache(e2e: Env) -> dict:  # type: ignore[type-arg]
    return json.loads((e2e.home / ".minicode" / "wire-profiles.json").read_text())


def _set_thinking(e2e: Env, level: str) -> None:
    config = e2e.workspace / "config" / "config.toml"
    config.write_text(config.read_text().replace("[model]\n", f'[model]\nthinking = "{level}"\n'))


def test_think_high_sends_thinking_enabled_and_effort(e2e: Env) -> None:
    e2e.server.script(Reply.text("ok"))
    r = e2e.run("--think", "high", stdin="hi\n")
    assert r.code == 0 and r.stdout == "ok\n", r.stderr
    body = e2e.server.requests[0].body
    assert body["thinking"] == {"type": "enabled"} and body["reasoning_effort"] == "high"
    assert body["max_tokens"] == 8192


def test_think_off_disables_thinking(e2e: Env) -> None:
    e2e.server.script(Reply.text("ok"))
    r = e2e.run("--think", "off", stdin="hi\n")
    assert r.code == 0, r.stderr
    body = e2e.server.requests[0].body
    assert body["thinking"] == {"type": "disabled"} and body["reasoning_effort"] == "none"


def test_no_think_and_no_config_thinking_sends_no_thinking_fields(e2e: Env) -> None:
    e2e.server.script(Reply.text("ok"))
    r = e2e.run(stdin="hi\n")
    assert r.code == 0, r.stderr
    body = e2e.server.requests[0].body
    assert not [f for f in THINKING_FIELDS if f in body]
    assert not (e2e.home / ".minicode" / "wire-profiles.json").exists()


def test_config_thinking_is_used_and_think_overrides_it(e2e: Env) -> None:
    _set_thinking(e2e, "low")
    e2e.server.script(Reply.text("one"), Reply.text("two"))
    assert e2e.run(stdin="hi\n").code == 0
    assert e2e.server.requests[0].body["reasoning_effort"] == "low"
    assert e2e.run("--think", "max", stdin="hi\n").code == 0
    assert e2e.server.requests[1].body["reasoning_effort"] == "max"


def test_minimax_400_is_patched_retried_once_and_cached(e2e: Env) -> None:
    e2e.server.script(Reply.error(400, MINIMAX_400), Reply.text("adapted"))
    r = e2e.run("--think", "high", stdin="hi\n")
    assert r.code == 0, r.stderr
    assert r.stdout == "adapted\n"
    first, second = e2e.server.requests
    assert first.body["thinking"] == {"type": "enabled"}
    assert second.body["thinking"] == {"type": "adaptive"} and second.body["reasoning_effort"] == "high"
    assert second.body["messages"] == first.body["messages"]
    said = re.sub(r"[0-9a-f]{8}(-[0-9a-f]{4}){3}-[0-9a-f]{12}", "ID", r.stderr)  # a random id may hold "400"
    assert "400" not in said and "thinking" not in said  # the user never sees the retry
    cache = _cache(e2e)
    assert cache["version"] == 1
    [(key, entry)] = cache["profiles"].items()
    host = e2e.server.base_url.split("//")[1].split("/")[0]  # 127.0.0.1:PORT: the port is kept
    assert key == f"{host}::fake-model" and entry["profile"]["thinking_on"] == "adaptive"

    # A second run uses the cached profile at once: one request, already patched.
    e2e.server.script(Reply.text("cached"))
    r2 = e2e.run("--think", "high", stdin="again\n")
    assert r2.code == 0 and r2.stdout == "cached\n", r2.stderr
    assert len(e2e.server.requests) == 3
    assert e2e.server.requests[2].body["thinking"] == {"type": "adaptive"}


def test_unparseable_400_is_not_retried(e2e: Env) -> None:
    e2e.server.script(Reply.error(400, {"error": {"message": "something odd happened", "type": "bad_request_error"}}))
    r = e2e.run("--think", "high", stdin="hi\n")
    assert r.code == 1 and r.stdout == ""
    assert len(e2e.server.requests) == 1
    assert "something odd happened" in r.stderr
    assert not (e2e.home / ".minicode" / "wire-profiles.json").exists()


def test_second_400_after_the_patch_is_an_error_not_a_loop(e2e: Env) -> None:
    e2e.server.script(Reply.error(400, MINIMAX_400), Reply.error(400, MINIMAX_400), Reply.text("never"))
    r = e2e.run("--think", "high", stdin="hi\n")
    assert r.code == 1 and r.stdout == ""
    assert len(e2e.server.requests) == 2
