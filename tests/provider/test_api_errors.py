"""Error bodies of every shape, context-overflow and quota recognition, Retry-After."""

from __future__ import annotations

import json
from email.utils import formatdate

import pytest

from minicode.provider.api_errors import (
    MAX_RETRY_AFTER_SECONDS,
    ErrorInfo,
    api_error,
    error_info_from_body,
    parse_retry_after,
)


def body(obj: object) -> bytes:
    return json.dumps(obj).encode()


def test_nested_openai_body() -> None:
    info = error_info_from_body(
        body({"error": {"message": "Invalid key", "type": "invalid_request_error", "code": "invalid_api_key", "param": None}})
    )
    assert info == ErrorInfo("Invalid key", "invalid_request_error", "invalid_api_key", None)


def test_flat_and_string_bodies() -> None:
    assert error_info_from_body(body({"object": "error", "message": "bad", "type": "BadRequestError", "code": 400})) == ErrorInfo(
        "bad", "BadRequestError", "400"
    )
    assert error_info_from_body(body({"error": "model 'x' not found"})).message == "model 'x' not found"  # Ollama
    assert error_info_from_body(body({"detail": [{"loc": ["body", "thinking"], "msg": "Extra inputs are not permitted"}]})).message == (
        "body.thinking: Extra inputs are not permitted"
    )


def test_an_html_page_becomes_its_title_and_says_it_was_a_web_page() -> None:
    html = b"<html>\n<head><title>502 Bad\n Gateway</title></head>\n<body>\n<center><h1>502   Bad Gateway</h1></center>" + b" pad" * 200 + b"</body></html>"
    info = error_info_from_body(html, "Bad Gateway")
    assert info.message == "502 Bad Gateway (the server answered with a web page, not an API error)"
    untitled = error_info_from_body(b"<!DOCTYPE HTML><p>nope</p>", "Not Found")
    assert untitled.message.startswith("Not Found (the server answered with a web page")


def test_text_that_is_not_a_page_is_a_short_collapsed_excerpt() -> None:
    info = error_info_from_body(b"upstream   failed:\n" + b" pad" * 200)
    assert info.message.startswith("upstream failed: pad pad") and len(info.message) <= 200


@pytest.mark.parametrize("status, body, hinted", [
    (404, b"<html><title>404 Not Found</title></html>", True),
    (501, b"Unsupported method ('POST')", True),
    (405, b"", True),
    (404, b'{"error": {"message": "model x not found", "type": "invalid_request_error", "code": "model_not_found"}}', False),
    (500, b"<html><title>oops</title></html>", False),
])
def test_a_url_that_is_not_the_api_says_to_check_the_path(status: int, body: bytes, hinted: bool) -> None:
    from minicode.provider.api_errors import api_error

    error = api_error(error_info_from_body(body, "Not Found"), status=status)
    assert ("is [model].base_url the API's URL?" in str(error)) is hinted


def test_empty_body_uses_reason() -> None:
    assert error_info_from_body(b"", "Service Unavailable").message == "Service Unavailable"


@pytest.mark.parametrize(
    "payload",
    [
        # OpenAI
        {"error": {"message": "This model's maximum context length is 128000 tokens. However, your messages resulted in 130000 tokens.", "type": "invalid_request_error", "code": "context_length_exceeded"}},
        # vLLM
        {"object": "error", "message": "This model's maximum context length is 16384 tokens. However, you requested 122946 tokens (112946 in the messages, 10000 in the completion). Please reduce the length of the messages or completion.", "type": "BadRequestError", "code": 400},
        # llama.cpp (new and old wording)
        {"error": {"code": 400, "message": "the request exceeds the available context size, try increasing it", "type": "exceed_context_size_error", "n_prompt_tokens": 14429, "n_ctx": 8192}},
        {"error": {"code": 500, "message": "Context size has been exceeded.", "type": "server_error"}},
        {"error": {"code": 400, "message": "request (4390 tokens) exceeds the available context size (4096 tokens), try increasing it", "type": "invalid_request_error"}},
        # Ollama
        {"error": {"message": "prompt too long; exceeded max context length by 12 tokens", "type": "api_error"}},
        {"error": "input length exceeds maximum context length"},
        # DeepSeek
        {"error": {"message": "This model's maximum context length is 65536 tokens. However, you requested 70000 tokens (61808 in the messages, 8192 in the completion). Please reduce the length of the messages or completion.", "type": "invalid_request_error"}},
        # Mistral
        {"object": "error", "message": "Prompt contains 40000 tokens and 0 draft tokens, too large for model with 32768 maximum context length", "type": "invalid_request_error"},
    ],
)
def test_context_overflow_recognised(payload: object) -> None:
    error = api_error(error_info_from_body(body(payload)), status=400)
    assert error.context_overflow
    assert not error.retryable


@pytest.mark.parametrize(
    "payload",
    [
        {"error": {"message": "Rate limit reached for requests", "type": "requests", "code": "rate_limit_exceeded"}},
        {"error": {"message": "Invalid 'messages[1].content': string too long.", "type": "invalid_request_error"}},
    ],
)
def test_other_errors_are_not_overflow(payload: object) -> None:
    assert not api_error(error_info_from_body(body(payload)), status=400).context_overflow


def test_quota_exhausted_only_on_429() -> None:
    quota = {"error": {"message": "You exceeded your current quota, please check your plan", "type": "insufficient_quota", "code": "insufficient_quota"}}
    error = api_error(error_info_from_body(body(quota)), status=429)
    assert error.quota_exhausted and not error.retryable
    balance = {"error": {"message": "Your account is suspended due to insufficient balance", "type": "exceeded_current_quota_error"}}
    assert api_error(error_info_from_body(body(balance)), status=429).quota_exhausted
    rate = {"error": {"message": "Rate limit reached", "code": "rate_limit_exceeded"}}
    assert api_error(error_info_from_body(body(rate)), status=429).retryable


def test_retry_after_seconds_date_and_garbage() -> None:
    now = 1_700_000_000.0
    assert parse_retry_after("7", now=now) == 7.0
    assert parse_retry_after("0.5", now=now) == 0.5
    assert parse_retry_after(formatdate(now + 20, usegmt=True), now=now) == pytest.approx(20.0, abs=1)
    assert parse_retry_after(formatdate(now - 20, usegmt=True), now=now) == 0.0
    assert parse_retry_after("99999", now=now) == MAX_RETRY_AFTER_SECONDS
    assert parse_retry_after("soon", now=now) is None
    assert parse_retry_after(None, now=now) is None
