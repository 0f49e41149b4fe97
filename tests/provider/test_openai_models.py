"""The adapter's extras for probes: GET /models and the current wire profile."""

from __future__ import annotations

import httpx2
import pytest

from minicode.errors import APIError
from minicode.provider.wire import WireProfile

from .helpers import API_KEY, BASE_URL, make_provider
from .mock_router import Router

MODELS = BASE_URL + "/models"


async def test_list_models_returns_the_parsed_body_and_sends_the_key(router: Router) -> None:
    route = router.get(MODELS).mock(return_value=httpx2.Response(200, json={"data": [{"id": "m"}]}))
    provider = make_provider()
    assert await provider.list_models() == {"data": [{"id": "m"}]}
    assert route.calls.last.request.headers["authorization"] == f"Bearer {API_KEY}"
    await provider.aclose()


async def test_list_models_errors_are_api_errors_without_the_key(router: Router) -> None:
    router.get(MODELS).mock(return_value=httpx2.Response(
        401, json={"error": {"message": f"Incorrect API key provided: {API_KEY}", "code": "invalid_api_key"}}))
    provider = make_provider()
    with pytest.raises(APIError) as info:
        await provider.list_models()
    assert info.value.status == 401 and API_KEY not in str(info.value) and "Incorrect API key" in str(info.value)
    assert len(router.calls) == 1  # never retried: a probe reports


async def test_list_models_network_error_and_non_json(router: Router) -> None:
    provider = make_provider()
    router.get(MODELS).mock(side_effect=httpx2.ConnectError("refused"))
    with pytest.raises(APIError) as info:
        await provider.list_models()
    assert info.value.network and "cannot reach the model endpoint" in str(info.value)
    router.get(MODELS).mock(return_value=httpx2.Response(200, text="<html>hello</html>"))
    with pytest.raises(APIError, match="not JSON"):
        await provider.list_models()


async def test_wire_profile_is_the_heuristic_until_something_is_learned() -> None:
    provider = make_provider(base_url="https://api.openai.com/v1")
    assert await provider.wire_profile() == WireProfile(thinking_on=None, thinking_off=None, effort_max="xhigh")
    assert provider.base_url == "https://api.openai.com/v1"
    await provider.aclose()
