"""The silent wire-profile retry after a parseable 400, and the learned-profile cache."""

from __future__ import annotations

import json
from pathlib import Path

import httpx2
import pytest

from minicode.errors import APIError
from minicode.provider.types import StreamEnd

from .helpers import URL, chunk, collect, make_provider, sent_json, sse, sse_response
from .mock_router import Router

MINIMAX_400 = {"error": {"message": 'invalid params, invalid thinking.type: "enabled" (allowed: adaptive, disabled) (2013)',
                         "type": "bad_request_error", "param": "", "code": None}}


def ok() -> httpx2.Response:
    return sse_response(sse(chunk({"content": "ok"})))


async def test_allowed_thinking_types_patch_retry_once_and_cache(router: Router, tmp_path: Path) -> None:
    cache = tmp_path / "wire-profiles.json"
    route = router.post(URL).mock(side_effect=[httpx2.Response(400, json=MINIMAX_400), ok()])
    events = await collect(make_provider(thinking="high", model="M3-Proxy", wire_cache=cache))
    assert isinstance(events[-1], StreamEnd)
    assert route.call_count == 2
    assert sent_json(route, 0)["thinking"] == {"type": "enabled"}
    assert sent_json(route, 1)["thinking"] == {"type": "adaptive"}
    assert sent_json(route, 1)["reasoning_effort"] == "high"
    stored = json.loads(cache.read_text())
    assert stored["version"] == 1
    assert stored["profiles"]["api.example.com::m3-proxy"]["profile"]["thinking_on"] == "adaptive"

    # A new provider (a new run) starts from the learned profile: one request, no 400.
    router.reset()  # forget recorded calls
    route2 = router.post(URL).mock(side_effect=[ok()])
    await collect(make_provider(thinking="high", model="m3-proxy", wire_cache=cache))
    assert route2.call_count == 1 and sent_json(route2, 0)["thinking"] == {"type": "adaptive"}


async def test_unknown_reasoning_effort_retried_without_it(router: Router) -> None:
    body = {"error": {"message": "Unrecognized request argument supplied: reasoning_effort", "type": "invalid_request_error"}}
    route = router.post(URL).mock(side_effect=[httpx2.Response(400, json=body), ok()])
    provider = make_provider(thinking="low")
    await collect(provider)
    assert route.call_count == 2
    assert "reasoning_effort" in sent_json(route, 0) and "reasoning_effort" not in sent_json(route, 1)
    assert sent_json(route, 1)["thinking"] == {"type": "enabled"}
    # The same provider keeps the learned profile in memory for its next request.
    route3 = router.post(URL).mock(side_effect=[ok()])
    await collect(provider)
    assert "reasoning_effort" not in sent_json(route3, -1)


async def test_max_tokens_rejected_uses_max_completion_tokens(router: Router) -> None:
    body = {"error": {"message": "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.",
                      "type": "invalid_request_error", "param": "max_tokens", "code": "unsupported_parameter"}}
    route = router.post(URL).mock(side_effect=[httpx2.Response(400, json=body), ok()])
    await collect(make_provider())  # no thinking configured: the hint still applies to max_tokens
    second = sent_json(route, 1)
    assert route.call_count == 2 and second["max_completion_tokens"] == 8192 and "max_tokens" not in second


async def test_unparseable_400_is_one_request_and_surfaced(router: Router, tmp_path: Path) -> None:
    body = {"error": {"message": "invalid params, chat content has invalid message role: system (2013)", "type": "bad_request_error"}}
    route = router.post(URL).mock(side_effect=[httpx2.Response(400, json=body), ok()])
    cache = tmp_path / "w.json"
    with pytest.raises(APIError, match="invalid message role"):
        await collect(make_provider(thinking="high", wire_cache=cache))
    assert route.call_count == 1 and not cache.exists()


async def test_hint_that_changes_nothing_sent_is_not_retried(router: Router) -> None:
    # No thinking configured: a thinking hint cannot change the request, so no retry.
    route = router.post(URL).mock(side_effect=[httpx2.Response(400, json=MINIMAX_400), ok()])
    with pytest.raises(APIError):
        await collect(make_provider(thinking=None))
    assert route.call_count == 1
    assert "thinking" not in sent_json(route, 0) and "reasoning_effort" not in sent_json(route, 0)


async def test_a_second_400_naming_another_field_is_learned_too(router: Router, tmp_path: Path) -> None:
    # a strict server refuses thinking.type=enabled, then reasoning_effort: both are learned
    again = {"error": {"message": "Validation: Unsupported parameter(s): reasoning_effort"}}
    route = router.post(URL).mock(side_effect=[httpx2.Response(400, json=MINIMAX_400), httpx2.Response(400, json=again), ok()])
    cache = tmp_path / "w.json"
    await collect(make_provider(thinking="medium", wire_cache=cache))
    assert route.call_count == 3
    assert "reasoning_effort" not in sent_json(route, 2) and sent_json(route, 2)["thinking"] == {"type": "adaptive"}
    saved = json.loads(cache.read_text())["profiles"]
    assert [p["profile"]["reasoning_effort"] for p in saved.values()] == [False]


async def test_a_400_that_teaches_nothing_new_is_surfaced_and_not_learned(
    router: Router, tmp_path: Path
) -> None:
    route = router.post(URL).mock(side_effect=[httpx2.Response(400, json=MINIMAX_400)] * 3 + [ok()])
    cache = tmp_path / "w.json"
    with pytest.raises(APIError, match="thinking"):
        await collect(make_provider(thinking="medium", wire_cache=cache))
    assert route.call_count == 2 and not cache.exists()


async def test_heuristic_profile_is_not_written(router: Router, tmp_path: Path) -> None:
    router.post(URL).mock(side_effect=[ok()])
    cache = tmp_path / "w.json"
    await collect(make_provider(thinking="high", wire_cache=cache))
    assert not cache.exists()


async def test_openai_host_profile_on_the_wire(router: Router) -> None:
    route = router.post("https://api.openai.com/v1/chat/completions").mock(side_effect=[ok()])
    await collect(make_provider(thinking="max", base_url="https://api.openai.com/v1"))
    sent = sent_json(route, 0)
    assert "thinking" not in sent and sent["reasoning_effort"] == "xhigh"


SCHEMA = {"oneOf": [{"type": "object", "properties": {"name": {"const": "read"}}}]}


async def test_an_answer_schema_is_sent_as_response_format_and_a_refusal_of_it_is_learned(
    router: Router, tmp_path: Path,
) -> None:
    from dataclasses import replace

    from .helpers import REQUEST

    # llama.cpp's answer to a schema its grammar converter cannot take
    body = {"error": {"code": 400, "message": "JSON schema conversion failed:\nUnrecognized schema: {\"not\": {}}",
                      "type": "invalid_request_error"}}
    route = router.post(URL).mock(side_effect=[httpx2.Response(400, json=body), ok(), ok()])
    cache = tmp_path / "w.json"
    provider = make_provider(wire_cache=cache)
    request = replace(REQUEST, answer_schema=SCHEMA)
    assert isinstance((await collect(provider, request))[-1], StreamEnd)
    assert sent_json(route, 0)["response_format"] == {"type": "json_schema", "json_schema": {"name": "answer", "schema": SCHEMA}}
    assert "response_format" not in sent_json(route, 1)  # retried once without it
    assert json.loads(cache.read_text())["profiles"]["api.example.com::test-model"]["profile"]["response_format"] is False
    await collect(make_provider(wire_cache=cache), request)  # the next run starts from what was learned
    assert route.call_count == 3 and "response_format" not in sent_json(route, 2)


async def test_a_400_about_a_schema_changes_nothing_for_a_request_without_one(router: Router) -> None:
    body = {"error": {"message": "invalid schema for function 'read'", "type": "invalid_request_error"}}
    route = router.post(URL).mock(side_effect=[httpx2.Response(400, json=body), ok()])
    with pytest.raises(APIError, match="invalid schema"):
        await collect(make_provider())
    assert route.call_count == 1  # nothing to drop: no silent retry


def test_a_profile_cached_before_response_format_existed_still_loads(tmp_path: Path) -> None:
    from minicode.provider.wire import WireProfile, _profile_from_json

    old = {"thinking_on": "enabled", "thinking_off": "disabled", "reasoning_effort": False, "effort_max": "max",
           "max_tokens_field": "max_tokens"}
    assert _profile_from_json(old) == WireProfile(reasoning_effort=False)
    assert _profile_from_json({**old, "response_format": "yes"}) is None


async def test_a_temperature_is_sent_only_when_the_request_has_one(router: Router) -> None:
    from dataclasses import replace

    from .helpers import REQUEST

    route = router.post(URL).mock(side_effect=[ok(), ok()])
    provider = make_provider()
    await collect(provider, replace(REQUEST, temperature=0.2))
    await collect(provider, REQUEST)
    assert sent_json(route, 0)["temperature"] == 0.2
    assert "temperature" not in sent_json(route, 1)  # the server's default, as before
