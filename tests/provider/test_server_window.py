"""The context window asked of the server (provider/server_window.py), through the mock router:
each server kind's answer, the most specific one winning, and every kind of useless answer."""

from __future__ import annotations

import asyncio
import json

import httpx2
import pytest

from minicode.provider.http import USER_AGENT
from minicode.provider.server_window import (
    MAX_BODY_BYTES,
    ServerWindow,
    ask_server_window,
    from_lmstudio,
    from_models,
    from_ollama_show,
    from_props,
    output_cap,
    server_root,
)

BASE = "http://127.0.0.1:8080/v1"
ROOT = "http://127.0.0.1:8080"
MODEL = "qwen2.5-coder-1.5b"
# what llama-server (b6xxx, --jinja, -c 32768) answers, trimmed
LLAMA_PROPS = {"default_generation_settings": {"n_ctx": 32768, "params": {"n_predict": -1}}, "total_slots": 1}
LLAMA_MODELS = {"models": [{"name": MODEL, "model": MODEL}], "object": "list",
                "data": [{"id": MODEL, "object": "model", "owned_by": "llamacpp",
                          "meta": {"n_ctx": 32768, "n_ctx_train": 32768, "n_vocab": 151936}}]}


def ask(router, **kw) -> ServerWindow:
    if "rest" not in router.routes:  # added last: routes are tried in order
        router.route(name="rest").mock(return_value=httpx2.Response(404, json={"error": "Not Found"}))
    return asyncio.run(ask_server_window(BASE, MODEL, "sk-local", **kw))


def test_llama_cpp_props_win_over_its_model_list(router):
    router.get(f"{ROOT}/props").mock(return_value=httpx2.Response(200, json=LLAMA_PROPS))
    models = router.get(f"{BASE}/models").mock(return_value=httpx2.Response(200, json=LLAMA_MODELS))
    assert ask(router) == ServerWindow(32768, "llama.cpp /props", output_cap=-1, output_cap_source="llama.cpp n_predict")
    assert models.calls.last.request.headers["Authorization"] == "Bearer sk-local"
    assert models.calls.last.request.headers["User-Agent"] == USER_AGENT  # the provider's, not httpx2's


def test_llama_cpp_model_meta_without_props(router):
    router.get(f"{BASE}/models").mock(return_value=httpx2.Response(200, json=LLAMA_MODELS))
    assert ask(router) == ServerWindow(32768, "llama.cpp meta.n_ctx")


def test_ollama_num_ctx_before_the_models_trained_length(router):
    show = router.post(f"{ROOT}/api/show").mock(return_value=httpx2.Response(200, json={
        "parameters": "stop                           \"<|im_end|>\"\nnum_ctx                        8192",
        "model_info": {"general.architecture": "qwen2", "qwen2.context_length": 32768}}))
    assert ask(router) == ServerWindow(8192, "ollama num_ctx")
    assert json.loads(show.calls.last.request.content) == {"model": MODEL}


def test_ollama_context_length_when_no_num_ctx(router):
    router.post(f"{ROOT}/api/show").mock(return_value=httpx2.Response(200, json={
        "parameters": "temperature 0.2", "model_info": {"llama.context_length": 131072}}))
    assert ask(router) == ServerWindow(131072, "ollama /api/show")


def test_vllm_max_model_len(router):
    router.get(f"{BASE}/models").mock(return_value=httpx2.Response(200, json={
        "object": "list", "data": [{"id": MODEL, "object": "model", "owned_by": "vllm", "max_model_len": 16384}]}))
    assert ask(router) == ServerWindow(16384, "vllm max_model_len")


def test_lm_studio_loaded_then_max_context(router):
    lm = router.get(f"{ROOT}/api/v0/models")
    lm.mock(return_value=httpx2.Response(200, json={"data": [
        {"id": "other", "loaded_context_length": 2048},
        {"id": MODEL, "state": "loaded", "loaded_context_length": 12000, "max_context_length": 32768}]}))
    assert ask(router) == ServerWindow(12000, "lm studio loaded_context_length")
    lm.mock(return_value=httpx2.Response(200, json={"data": [{"id": MODEL, "max_context_length": 32768}]}))
    assert ask(router) == ServerWindow(32768, "lm studio max_context_length")


def test_every_question_answered_404_is_the_default_and_lasting(router):
    found = ask(router)
    assert found.tokens is None and found.source == "default (unknown)" and found.lasting
    assert found.note == "not reported by the server (HTTP 404 ×4)"


def test_garbage_answers_are_not_believed(router):
    router.get(f"{ROOT}/props").mock(return_value=httpx2.Response(200, text="<html>hello</html>"))
    router.post(f"{ROOT}/api/show").mock(return_value=httpx2.Response(200, json={"model_info": {"x.context_length": -5}}))
    router.get(f"{ROOT}/api/v0/models").mock(return_value=httpx2.Response(200, json=[1, 2, 3]))
    router.get(f"{BASE}/models").mock(return_value=httpx2.Response(200, json={"data": [
        {"id": MODEL, "max_model_len": 10 ** 15}]}))
    found = ask(router)
    assert found.tokens is None and found.note == "not reported by the server (not JSON, 3 answers without a window)"


def test_a_deeply_nested_or_huge_answer_is_dropped(router):
    router.get(f"{ROOT}/props").mock(return_value=httpx2.Response(200, text="[" * 100_000 + "]" * 100_000))
    router.get(f"{BASE}/models").mock(return_value=httpx2.Response(200, content=b" " * (MAX_BODY_BYTES + 10)))
    found = ask(router)
    assert found.tokens is None and "an answer too large" in found.note and "not JSON" in found.note


def test_a_server_that_hangs_times_out_and_is_not_remembered(router):
    async def never(request):
        await asyncio.sleep(30)

    router.get(f"{ROOT}/props").mock(side_effect=never)
    router.get(f"{BASE}/models").mock(return_value=httpx2.Response(200, json=LLAMA_MODELS))
    found = ask(router, timeout=0.2)
    assert found == ServerWindow(None, note="the server did not answer within 0.2 s", lasting=False)


def test_an_unreachable_server_is_not_remembered(router):
    router.route(name="rest").mock(side_effect=httpx2.ConnectError("refused"))
    found = ask(router)
    assert found.tokens is None and not found.lasting and "not reached ×4" in found.note


def test_the_servers_own_output_limit():
    assert output_cap(LLAMA_PROPS, None) == (-1, "llama.cpp n_predict")
    assert output_cap({"default_generation_settings": {"n_predict": 2048}}, None) == (2048, "llama.cpp n_predict")
    assert output_cap(None, {"parameters": "num_predict 512\nnum_ctx 4096"}) == (512, "ollama num_predict")
    for junk in (None, {"default_generation_settings": {"n_predict": True}}, {"default_generation_settings": 3},
                 {"default_generation_settings": {"n_predict": -7}}):
        assert output_cap(junk, {"parameters": 5}) is None


def test_the_pure_readers_tolerate_any_shape():
    for junk in (None, 1, "x", [], {"default_generation_settings": "x"}, {"n_ctx": True}, {"n_ctx": "12"}):
        assert from_props(junk) is None
        assert from_ollama_show(junk) is None
        assert from_lmstudio(junk, MODEL) is None
        assert from_models(junk, MODEL) is None
    assert from_props({"n_ctx": 4096}) == 4096  # older llama.cpp builds
    assert from_ollama_show({"parameters": "num_ctx 99999999999999"}) is None
    assert from_models({"data": [{"id": "a", "max_model_len": 8192}, {"id": "b", "max_model_len": 4096}]}, MODEL) is None
    assert from_models({"data": [{"id": "served-name", "max_model_len": 8192}]}, MODEL) == (8192, "vllm max_model_len")
    assert server_root("http://h:1/v1/") == "http://h:1" and server_root("http://h/api") == "http://h/api"
