"""The diagnosis: run the probes in order and collect the report.

Order: reach the host (DNS, TCP, TLS) → ``GET /models`` (HTTP latency, the key, the model
list) → a tiny streamed answer → a streamed tool call → what the wire profile learned; the
context window is asked of the server (``provider/server_window.py``) meanwhile and
remembered for the sessions. A failure that makes the rest pointless (unreachable host, rejected key)
marks the remaining checks "skipped" instead of piling up errors. Two model requests at
most; their usage is summed for the report.
"""

from __future__ import annotations

import asyncio
import ssl
import time
from dataclasses import replace
from pathlib import Path
from typing import Awaitable, Callable, Mapping, Sequence, TypeVar
from urllib.parse import urlsplit

from minicode.config import DEFAULT_CONTEXT_WINDOW, Config, ModelConfig
from minicode.doctor import findings
from minicode.doctor.report import Check, Report, Status
from minicode.doctor.streams import PROBE_TOOL, Streamed, call_problem, probe_answer, probe_tool_call
from minicode.errors import APIError, ConfigError, ProtocolError
from minicode.provider.base import ProbeableProvider
from minicode.provider.catalog import ModelInfo, parse_models
from minicode.provider.reach import Resolver, reach
from minicode.provider.server_window import ServerWindow, ask_server_window
from minicode.provider.wire import WireProfileCache, heuristic_profile, host_key, output_limit

__all__ = ["CHECK_NAMES", "diagnose", "misconfigured"]
from minicode.provider.types import ToolSpec

HTTP_PROBE_SECONDS = 10.0
"""How long ``GET /models`` may take: a server that accepted the connection answers at once;
one that says nothing in this time is not the API (wrong port, stuck proxy)."""
CHECK_NAMES = ("endpoint", "key", "model", "answer", "tool call", "parameters", "context", "quirks")
T = TypeVar("T")
Failure = APIError | ProtocolError | TimeoutError
TextCalls = Callable[[str, Sequence[ToolSpec]], Sequence[tuple[str, str]] | None]
"""A text answer and the tools offered -> the calls it is, as (name, arguments), or None."""


async def diagnose(
    config: Config,
    *,
    env: Mapping[str, str],
    provider: ProbeableProvider,
    tls_context: Callable[[], ssl.SSLContext],
    wire_cache: Path | None,
    timeout: float,
    resolve: Resolver | None = None,
    clock: Callable[[], float] = time.perf_counter,
    text_calls: TextCalls | None = None,
) -> Report:
    """Probe ``config.model``'s endpoint through ``provider``; never raises for what the
    server does (every failure is a report line), only for cancellation and bugs.
    ``text_calls`` reads the calls a text answer is (the run's own recovery, handed in: the
    doctor knows no agent); without it a tool call answered in text fails the check."""
    model = config.model
    reached = await reach(model.base_url, env=env, tls_context=tls_context, resolve=resolve, clock=clock)
    if not reached.ok:
        return _report(config, [findings.endpoint_check(reached, None, None, model)], "the endpoint is unreachable")
    listed, list_error, http_ms = await _list_models(provider, min(timeout, HTTP_PROBE_SECONDS), clock)
    endpoint = findings.endpoint_check(reached, http_ms, list_error, model)
    if endpoint.status is Status.FAILED:
        return _report(config, [endpoint], "the endpoint does not answer HTTP")
    if findings.is_auth_error(list_error):
        return _report(config, [endpoint, findings.key_check(model, list_error, False, False)], "the key was rejected")

    # the context window, asked of the server while the model answers (never a model request)
    window = asyncio.create_task(ask_server_window(model.base_url, model.name, model.api_key, env=env))
    try:
        return await _probe_model(config, env, provider, timeout, clock, wire_cache, listed, list_error, endpoint,
                                  window, text_calls)
    finally:
        window.cancel()


async def _probe_model(
    config: Config,
    env: Mapping[str, str],
    provider: ProbeableProvider,
    timeout: float,
    clock: Callable[[], float],
    wire_cache: Path | None,
    listed: tuple[ModelInfo, ...] | None,
    list_error: Failure | None,
    endpoint: Check,
    window_task: asyncio.Task[ServerWindow],
    text_calls: TextCalls | None = None,
) -> Report:
    model = config.model
    before = await provider.wire_profile()
    answer, answer_error = await _attempt(probe_answer(provider, timeout=timeout, clock=clock))
    if findings.not_the_api(list_error) and findings.not_the_api(answer_error):
        return _report(config, [findings.not_the_api_check(endpoint, list_error, answer_error)],
                       "the URL does not serve an OpenAI-compatible API", requests=1)
    tool: Streamed | None = None
    tool_error: Failure | None = None
    if answer is not None:
        tool, tool_error = await _attempt(probe_tool_call(provider, timeout=timeout, clock=clock))
    after = await provider.wire_profile()

    auth_error = next((e for e in (answer_error, tool_error) if findings.is_auth_error(e)), None)
    checks = [
        endpoint,
        findings.key_check(model, auth_error, answer is not None, listed is not None),
        findings.model_check(model, listed, list_error, answer_error, answer is not None),
    ]
    if findings.is_auth_error(answer_error):
        return _report(config, checks, "the key was rejected", requests=1)
    saved = _saved_to(wire_cache, model.base_url, model.name, after) if after != before else None
    heuristic = heuristic_profile(urlsplit(model.base_url).hostname or "", model.name)
    window = await window_task
    remembered = await asyncio.to_thread(_remember_window, wire_cache, model, window)
    limit = output_limit(model.context_window or window.tokens or DEFAULT_CONTEXT_WINDOW)
    notes = findings.endpoint_notes(answer, tool, window, limit)
    noted = await asyncio.to_thread(_remember_notes, wire_cache, model, notes) if answer is not None else None
    as_text = _as_text(tool, text_calls)
    remembered_calls = await _remember_tool_calls(wire_cache, model.base_url, model.name, tool, as_text)
    checks += [
        findings.answer_check(answer, answer_error, model.thinking),
        findings.tool_check(tool, tool_error, None if answer is not None else "the streamed answer failed",
                            as_text, remembered),
        findings.parameters_check(model, before, after, heuristic, saved, checked=answer is not None),
        findings.context_check(model, window, remembered),
        findings.quirks_check(notes, noted, checked=answer is not None),
    ]
    return _report(config, checks, None, requests=1 + (answer is not None), results=(answer, tool))


def misconfigured(config: Config, error: ConfigError) -> Report:
    """The report when the provider cannot be built (a CA bundle variable naming nothing
    readable): that finding, nothing probed, exit 2 — the run would refuse to start the same way."""
    check = Check("endpoint", Status.FAILED, str(error),
                  "a configuration mistake, not a network failure: fix it and run --doctor again")
    report = _report(config, [check], "the configuration must be fixed first")
    return replace(report, misconfigured=True)


async def _list_models(
    provider: ProbeableProvider, timeout: float, clock: Callable[[], float]
) -> tuple[tuple[ModelInfo, ...] | None, Failure | None, float | None]:
    """(models or None, the error, the HTTP round trip in ms — also of an HTTP error answer)."""
    started = clock()
    try:
        async with asyncio.timeout(timeout):
            data = await provider.list_models()
    except (APIError, TimeoutError) as e:
        answered = isinstance(e, APIError) and e.status is not None
        return None, e, round((clock() - started) * 1000, 1) if answered else None
    elapsed = round((clock() - started) * 1000, 1)
    models = parse_models(data)
    if models is None:
        return None, APIError("the answer is not a model list"), elapsed
    return models, None, elapsed


async def _attempt(probe: Awaitable[T]) -> tuple[T | None, Failure | None]:
    try:
        return await probe, None
    except (APIError, ProtocolError, TimeoutError) as e:
        return None, e


def _remember_window(cache: Path | None, model: ModelConfig, window: ServerWindow) -> str | None:
    """The server's answer remembered for the sessions (``session.opening.context_window``):
    where, or None (nothing lasting to remember, or no cache)."""
    if cache is None or not window.lasting:
        return None
    store = WireProfileCache(cache)
    store.put_window(host_key(model.base_url), model.name, window.tokens, window.source, window.note)
    return str(cache) if store.get_window(host_key(model.base_url), model.name) is not None else None


def _remember_notes(cache: Path | None, model: ModelConfig, notes: dict[str, str]) -> str | None:
    """The quirks met, remembered per endpoint and model (what was met before is replaced)."""
    if cache is None:
        return None
    store = WireProfileCache(cache)
    store.put_notes(host_key(model.base_url), model.name, notes)
    return str(cache) if notes and store.get_notes(host_key(model.base_url), model.name) == notes else None


def _saved_to(cache: Path | None, base_url: str, model: str, profile: object) -> str | None:
    """Where the provider saved what it learned, if the cache file now holds it."""
    if cache is None:
        return None
    return str(cache) if WireProfileCache(cache).get(_host_key(base_url), model) == profile else None


def _host_key(base_url: str) -> str:
    """The host part of a cache key, as the provider writes it (the port when there is one)."""
    parts = urlsplit(base_url)
    return (parts.hostname or "").lower() + (f":{parts.port}" if parts.port else "")


def _as_text(tool: Streamed | None, text_calls: TextCalls | None) -> Sequence[tuple[str, str]] | None:
    """The calls the tool probe's answer is as text, when it made no native call."""
    if tool is None or text_calls is None or tool.response.message.tool_calls:
        return None
    return text_calls(tool.response.message.content or "", (PROBE_TOOL,)) or None


async def _remember_tool_calls(cache: Path | None, base_url: str, model: str, tool: Streamed | None,
                               as_text: Sequence[tuple[str, str]] | None) -> str | None:
    """Note in the wire-profile cache how this model made its call (natively, or as text
    minicode recovers); the file's path when noted. A probe that got neither notes nothing."""
    if cache is None or tool is None:
        return None
    style = "text" if as_text else "native" if call_problem(tool.response) is None else None
    if style is None:
        return None
    store = WireProfileCache(cache)
    await asyncio.to_thread(store.note_tool_calls, _host_key(base_url), model, style)
    if style == "text":  # the runs of this endpoint and model start with the small-model assists on
        await asyncio.to_thread(store.put_assists, _host_key(base_url), model, "the model writes tool calls as text")
    return str(cache) if await asyncio.to_thread(store.tool_calls, _host_key(base_url), model) == style else None


def _report(
    config: Config,
    checks: list[Check],
    skip_reason: str | None,
    *,
    requests: int = 0,
    results: tuple[Streamed | None, ...] = (),
) -> Report:
    """The report; checks not run are listed as skipped with ``skip_reason``."""
    done = {c.name for c in checks}
    if skip_reason is not None:
        checks = checks + [Check(n, Status.SKIPPED, f"not checked: {skip_reason}") for n in CHECK_NAMES
                           if n not in done]
    usages = [r.response.usage for r in results if r is not None and r.response.usage is not None]
    prompt = sum(u.prompt_tokens or 0 for u in usages)
    completion = sum(u.completion_tokens or 0 for u in usages)
    total = sum(u.total_tokens or (u.prompt_tokens or 0) + (u.completion_tokens or 0) for u in usages)
    return Report(
        endpoint=config.model.base_url,
        model=config.model.name,
        checks=tuple(checks),
        requests=requests,
        prompt_tokens=prompt if usages else None,
        completion_tokens=completion if usages else None,
        total_tokens=total if usages else None,
    )
