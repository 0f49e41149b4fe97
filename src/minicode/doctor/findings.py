"""Turning what the probes measured into report lines: pure functions, one per check.

Each function gets measurements (a ``Reach``, the parsed ``/models`` list, a ``Streamed``
answer, an ``APIError``) and returns a ``Check`` with a summary and, for warnings and
failures, what to do. Nothing here sends anything; ``doctor.diagnose`` runs the probes.
"""

from __future__ import annotations

import re
from typing import Sequence

from minicode.config import DEFAULT_CONTEXT_WINDOW, ModelConfig, is_loopback_url
from minicode.doctor.report import Check, Status
from minicode.doctor.streams import PROBE_MAX_TOKENS, Streamed, call_problem
from minicode.errors import APIError
from minicode.provider.api_errors import NOT_THE_API, WEB_PAGE
from minicode.provider.catalog import ModelInfo, near_names
from minicode.provider.reach import Reach
from minicode.provider.server_window import DEFAULT_SOURCE, ServerWindow
from minicode.provider.wire import WireProfile, profile_fields

__all__ = [
    "answer_check",
    "context_check",
    "endpoint_check",
    "error_fix",
    "is_auth_error",
    "is_model_missing",
    "key_check",
    "model_check",
    "parameters_check",
    "quirks_check",
    "tool_check",
]

_MODEL_MISSING = re.compile(
    r"model\W.*\b(?:not found|does not exist|not exist|unknown|not available|no such|invalid)"
    r"|(?:unknown|invalid|unsupported) model|no (?:such )?model|model_not_found",
    re.IGNORECASE,
)


def ms(value: float | None) -> str:
    """Milliseconds, compact: "0.4 ms", "35 ms", "1.2 s"."""
    if value is None:
        return "?"
    if value >= 1000:
        return f"{value / 1000:.1f} s"
    return f"{value:.1f} ms" if value < 10 else f"{value:.0f} ms"


def seconds(value: float) -> str:
    return ms(value * 1000)


def is_auth_error(error: BaseException | None) -> bool:
    return isinstance(error, APIError) and error.status in (401, 403)


def is_model_missing(error: BaseException | None) -> bool:
    if not isinstance(error, APIError) or error.status in (401, 403):
        return False
    return error.status == 404 or error.code == "model_not_found" or bool(_MODEL_MISSING.search(error.message))


def error_fix(error: BaseException) -> str:
    """What to do about a failed request, by its kind."""
    if isinstance(error, TimeoutError):
        return "the server is slow or overloaded; rerun with --timeout SECONDS to wait longer"
    if not isinstance(error, APIError):
        return "the server's answer breaks the protocol minicode expects; check its OpenAI compatibility"
    if error.quota_exhausted:
        return "the account's quota or balance is used up: add credit, or use another key or model"
    if error.status == 429:
        return "rate limited: wait a moment and run --doctor again"
    if error.status == 400:
        return "the server rejected the request; its message above says which field or value"
    if error.network:
        return "the connection failed after it was established; check proxies and the server's logs"
    if error.status is not None and error.status >= 500:
        return "the server failed; check its status or logs and try again"
    return "check [model].base_url and [model].name in the config"


def endpoint_check(reach: Reach, http_ms: float | None, http_error: BaseException | None, model: ModelConfig) -> Check:
    where = f"{reach.host}:{reach.port}"
    data: dict[str, object] = {
        "host": reach.host, "port": reach.port, "tls": reach.tls, "proxy": reach.proxy,
        "addresses": list(reach.addresses), "dns_ms": reach.dns_ms, "tcp_ms": reach.tcp_ms,
        "tls_ms": reach.tls_ms, "tls_version": reach.tls_version, "http_ms": http_ms,
    }
    if not reach.ok:
        data["failed_stage"] = reach.failed
        return Check("endpoint", Status.FAILED, f"{reach.failed.upper() if reach.failed else ''}: {reach.error}",
                     _reach_fix(reach), data)
    parts = [where + (f" via proxy {reach.proxy}" if reach.proxy else "")]
    if reach.dns_ms is not None:
        parts.append(f"DNS {ms(reach.dns_ms)}")
    parts.append(f"TCP {ms(reach.tcp_ms)}")
    if reach.tls_version is not None:
        parts.append(f"{reach.tls_version.replace('v', ' ')} {ms(reach.tls_ms)}")
    elif not reach.tls:
        parts.append("plain http")
    if isinstance(http_error, TimeoutError):
        data["http_error"] = "no answer"
        return Check("endpoint", Status.FAILED, " · ".join(parts) + ", but no HTTP answer to GET /models in time",
                     "is this the API's port? Check the host and port in [model].base_url (or a proxy between)",
                     data)
    if isinstance(http_error, APIError) and http_error.network:
        data["http_error"] = str(http_error)
        return Check("endpoint", Status.FAILED, " · ".join(parts) + f", but HTTP failed: {http_error}",
                     "check proxies, the URL's scheme (http/https) and the server's logs", data)
    if http_ms is not None:
        parts.append(f"HTTP {ms(http_ms)}")
    summary = " · ".join(parts)
    if not reach.tls and model.api_key and not is_loopback_url(model.base_url):
        return Check("endpoint", Status.WARNING, summary + " · the key travels unencrypted",
                     "use https:// in [model].base_url", data)
    return Check("endpoint", Status.OK, summary, None, data)


def not_the_api(error: BaseException | None) -> bool:
    """An HTTP answer that means nothing at this URL speaks the API (404/405/501, no API error)."""
    return (isinstance(error, APIError) and error.status in NOT_THE_API and error.code is None
            and error.type in (None, WEB_PAGE))


def not_the_api_check(endpoint: Check, listed: BaseException | None, answered: BaseException | None) -> Check:
    statuses = [e.status for e in (listed, answered) if isinstance(e, APIError)]
    summary = (f"{endpoint.summary}, but GET /models answered HTTP {statuses[0]} and POST /chat/completions "
               f"HTTP {statuses[-1]}: this URL does not serve an OpenAI-compatible API")
    return Check("endpoint", Status.FAILED, summary,
                 "check the path of [model].base_url — most servers want it to end in /v1 "
                 "(e.g. http://localhost:8000/v1)", endpoint.data)


def _reach_fix(reach: Reach) -> str:
    if reach.failed == "dns":
        return "check the host in [model].base_url (a typo?), your network and DNS"
    if reach.failed == "tcp":
        return "start the server, or fix the host and port in [model].base_url" + (
            " (or the proxy in HTTPS_PROXY/HTTP_PROXY)" if reach.proxy else "")
    return "use the server's correct https URL, or trust its CA (SSL_CERT_FILE); a local server may use http://"


def key_check(model: ModelConfig, error: BaseException | None, answered: bool, listed: bool) -> Check:
    """``error``: the first 401/403 seen (None: none); ``answered``: a model request
    succeeded; ``listed``: ``GET /models`` succeeded (some servers list without a key)."""
    where = f"${model.api_key_env}" if model.api_key_env else "[model].api_key"
    data = {"source": where if model.api_key else None, "length": len(model.api_key)}
    if is_auth_error(error):
        what = "no key is configured" if not model.api_key else f"the key from {where} ({len(model.api_key)} characters)"
        fix = ("set [model].api_key_env (or api_key) in the config" if not model.api_key
               else f"check {where}: a wrong, expired or truncated key, or one without access to this model")
        return Check("key", Status.FAILED, f"rejected: {error} — {what}", fix, data)
    origin = f"key from {where}" if model.api_key else "no key configured, none needed"
    if answered:
        return Check("key", Status.OK, f"accepted ({origin})", None, data)
    if listed:
        return Check("key", Status.OK, f"not rejected by GET /models, which may not need one ({origin})", None, data)
    return Check("key", Status.SKIPPED, "not checked: no request got through to the server", None, data)


def model_check(model: ModelConfig, listed: tuple[ModelInfo, ...] | None, list_error: BaseException | None,
                answer_error: BaseException | None, answered: bool) -> Check:
    name = model.name
    ids = [m.id for m in listed] if listed is not None else []
    data: dict[str, object] = {"name": name, "listed": name in ids if listed is not None else None, "count": len(ids)}
    if listed is not None and name in ids:
        return Check("model", Status.OK, f"{name} is listed by /models ({_count(len(ids), 'model')})", None, data)
    near = near_names(name, ids)
    data["near"] = near
    hint = f"; did you mean {', '.join(near)}?" if near else ""
    if _both_404(list_error, answer_error):
        return Check("model", Status.FAILED, "the server answers 404 for /models and /chat/completions alike",
                     "check [model].base_url: it usually ends in /v1 (the part before /chat/completions)", data)
    if is_model_missing(answer_error):
        where = f"not among the {_count(len(ids), 'model')} of /models{hint}" if listed is not None else "unknown to the server"
        fix = f"set [model].name (or --model) to {near[0]}" if near else \
            f"set [model].name (or --model) to a model the server has{_some(ids)}"
        return Check("model", Status.FAILED, f"{name} is {where}", fix, data)
    if listed is None:
        why = f"/models failed: {list_error}" if list_error is not None else "the server lists no models"
        if answered:
            return Check("model", Status.OK, f"{name} answers ({why})", None, data)
        return Check("model", Status.SKIPPED, f"not checked ({why})", None, data)
    if answered:
        return Check("model", Status.WARNING, f"{name} answers, but /models does not list it{hint}",
                     "fine for an alias; otherwise check [model].name", data)
    return Check("model", Status.WARNING, f"{name} is not listed by /models{hint}", "check [model].name", data)


_SHOWN_IDS = 8


def _some(ids: list[str]) -> str:
    """": a, b, c" (the first few ids /models listed, "… and N more"), or "" when it listed none."""
    if not ids:
        return ""
    more = f" … and {len(ids) - _SHOWN_IDS:,} more" if len(ids) > _SHOWN_IDS else ""
    return ": " + ", ".join(ids[:_SHOWN_IDS]) + more


def _both_404(list_error: BaseException | None, answer_error: BaseException | None) -> bool:
    return all(isinstance(e, APIError) and e.status == 404 for e in (list_error, answer_error))


def _count(n: int, word: str) -> str:
    return f"{n:,} {word}{'' if n == 1 else 's'}"


def answer_check(result: Streamed | None, error: BaseException | None, thinking: str | None = None) -> Check:
    if result is None:
        assert error is not None
        fix = error_fix(error)
        if thinking is not None and isinstance(error, APIError) and error.status == 400:
            fix += f"; if it is about thinking or reasoning fields, try --think off (now thinking={thinking})"
        return Check("answer", Status.FAILED, f"streamed answer failed: {error}", fix, {"error": str(error)})
    response = result.response
    usage = response.usage
    rate = result.tokens_per_second()
    data: dict[str, object] = {
        "first_token_s": None if result.first_token is None else round(result.first_token, 3),
        "total_s": round(result.finished, 3), "streamed": result.streamed, "done": True,
        "text_pieces": result.text_pieces, "reasoning_pieces": result.reasoning_pieces,
        "usage_in_stream": usage is not None, "finish_reason": response.finish_reason,
        "tokens_per_second": None if rate is None else round(rate[0], 1), "retries": list(result.retries),
        "text": (response.message.content or "")[:200],
    }
    parts = [f"first token {seconds(result.first_token)}" if result.first_token is not None else "no tokens"]
    if rate is not None:
        parts.append(f"{'≈' if rate[1] else ''}{rate[0]:.0f} tokens/s")
    parts.append("[DONE]" if result.streamed else "one JSON body (not streamed)")
    if usage is not None:
        parts.append("usage in the stream")
    if result.retries:
        n = len(result.retries)
        parts.append(f"after {n} {'retry' if n == 1 else 'retries'} ({result.retries[-1]})")
    summary = " · ".join(parts)
    problem = _answer_problem(result)
    if problem is not None:
        return Check("answer", Status.WARNING, f"{summary} · {problem[0]}", problem[1], data)
    return Check("answer", Status.OK, summary, None, data)


def _answer_problem(result: Streamed) -> tuple[str, str] | None:
    response = result.response
    if not (response.message.content or "").strip():
        if response.finish_reason == "length":
            return (f"cut off at {PROBE_MAX_TOKENS:,} tokens before any text",
                    "the model spent them thinking: lower [model].thinking, or check the server's limits")
        return "the answer was empty", "check that [model].name is a chat model"
    if not result.streamed:
        return ("the server ignored stream: true",
                "answers will appear only when complete; check the server's streaming support")
    if response.usage is None:
        return ("no usage in the stream",
                "statistics will say 'tokens: unavailable' and compaction relies on local estimates"
                " (enable stream_options.include_usage on the server or gateway if it has such an option)")
    return None


def tool_check(result: Streamed | None, error: BaseException | None, skipped: str | None = None,
               as_text: Sequence[tuple[str, str]] | None = None, remembered: str | None = None) -> Check:
    """``as_text``: the calls minicode recovers from the answer's text (``agent.text_calls``,
    as (name, arguments)), None when its text is no call; ``remembered``: the file that now
    says how this endpoint's model makes tool calls."""
    if skipped is not None:
        return Check("tool call", Status.SKIPPED, f"not checked: {skipped}")
    if result is None:
        assert error is not None
        fix = error_fix(error)
        if isinstance(error, APIError) and error.status == 400:
            fix = "the server (or model) may not support tools (function calling); minicode needs them"
        return Check("tool call", Status.FAILED, f"streamed tool call failed: {error}", fix, {"error": str(error)})
    calls = result.response.message.tool_calls
    data: dict[str, object] = {
        "calls": [{"id": c.id, "name": c.name, "arguments": c.arguments} for c in calls],
        "pieces": {str(k): v for k, v in result.call_pieces.items()}, "streamed": result.streamed,
    }
    if remembered is not None:
        data["remembered_in"] = remembered
    problem = call_problem(result.response)
    if problem is not None and not calls and as_text:
        data["calls_as_text"] = [{"name": name, "arguments": arguments} for name, arguments in as_text]
        name, arguments = as_text[0]
        more = f" (+{len(as_text) - 1} more)" if len(as_text) > 1 else ""
        return Check("tool call", Status.WARNING,
                     f"tool calls come as text — minicode recovers them: {name}({_short(arguments)}){more}",
                     "works: such calls run like native ones (approved, shown as recovered); a model or chat"
                     " template that makes native tool calls is more reliable", data)
    if problem is not None:
        return Check("tool call", Status.FAILED, problem,
                     "use a model that supports tools (function calling): minicode works through tool calls", data)
    call = calls[0]
    pieces = result.call_pieces.get(0, 1)
    how = "in one piece" if pieces <= 1 else f"streamed in {pieces} pieces"
    more = f" (+{len(calls) - 1} more)" if len(calls) > 1 else ""
    summary = f"{call.name}({_short(call.arguments)}){more} · id {_short(call.id, 24)} · valid JSON · {how}"
    return Check("tool call", Status.OK, summary, None, data)


def _short(text: str, limit: int = 60) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def parameters_check(model: ModelConfig, before: WireProfile, after: WireProfile, heuristic: WireProfile,
                     saved_to: str | None, checked: bool) -> Check:
    data: dict[str, object] = {
        "max_tokens_field": after.max_tokens_field, "thinking": model.thinking,
        "fields": sorted(profile_fields(after, model.thinking, 1)), "learned_now": after != before,
        "learned_earlier": before != heuristic, "saved_to": saved_to,
    }
    if not checked:
        return Check("parameters", Status.SKIPPED, "not checked: no model request succeeded", None, data)
    parts = ["max_tokens accepted" if after.max_tokens_field == "max_tokens"
             else "max_completion_tokens (the server rejects max_tokens)"]
    thinking = model.thinking
    warning = None
    if thinking is None:
        parts.append("thinking not configured (no thinking fields sent)")
    else:
        sent = {k: v for k, v in profile_fields(after, thinking, 1).items() if k != after.max_tokens_field}
        if sent:
            parts.append(f"thinking={thinking} sent as " + ", ".join(_field(k, v) for k, v in sent.items()))
        else:
            parts.append(f"thinking={thinking}: the server accepts no thinking fields")
            warning = "thinking has no effect here: remove [model].thinking, or use a model with reasoning controls"
    if after != before:
        parts.append("learned now" + (f", saved to {saved_to}" if saved_to else " (not saved)"))
    elif before != heuristic:
        parts.append("learned earlier (cached)")
    status = Status.WARNING if warning else Status.OK
    return Check("parameters", status, " · ".join(parts), warning, data)


def _field(key: str, value: object) -> str:
    if isinstance(value, dict):
        return ", ".join(f"{key}.{k}={v}" for k, v in value.items())
    return f"{key}={value}"


def context_check(model: ModelConfig, window: ServerWindow, remembered: str | None) -> Check:
    """The window the server reported (``provider/server_window.py``) against the configured one."""
    configured, reported = model.context_window, window.tokens
    data = {"reported": reported, "source": window.source if reported is not None else None,
            "configured": configured, "remembered_in": remembered,
            "used": configured or reported or DEFAULT_CONTEXT_WINDOW,
            "used_source": "config" if configured is not None else window.source}
    if reported is None:
        why = window.note or "not reported by the server"
        if configured is None:
            return Check("context", Status.WARNING,
                         f"{why}; minicode assumes {DEFAULT_CONTEXT_WINDOW:,} tokens ({DEFAULT_SOURCE})",
                         "set [model].context_window to the model's real window (too large: failed requests"
                         " instead of compaction)", data)
        return Check("context", Status.OK, f"{why}; [model].context_window = {configured:,} (config)", None, data)
    where = f"{reported:,} tokens ({window.source})"
    if window.source.endswith("n_ctx_train") or window.source.endswith("max_context_length"):
        where += ", the model's own limit: the server may run a smaller one"
    elif window.source == "ollama /api/show":
        where += ", the model's own limit: Ollama runs a smaller num_ctx unless the model sets one"
    if configured is None:
        kept = f", remembered in {remembered}" if remembered else ""
        return Check("context", Status.OK, f"{where}; used (no [model].context_window){kept}", None, data)
    if configured > reported:
        return Check("context", Status.WARNING, f"{where}; [model].context_window = {configured:,} is larger",
                     f"set [model].context_window = {reported}, or leave it out to use the server's", data)
    if configured < reported:
        return Check("context", Status.OK, f"{where}; [model].context_window = {configured:,} (compacts earlier)",
                     None, data)
    return Check("context", Status.OK, f"{where}; matches [model].context_window", None, data)



def endpoint_notes(answer: Streamed | None, tool: Streamed | None, window: ServerWindow,
                   max_tokens: int) -> dict[str, str]:
    """What this endpoint does differently that minicode works with: quirk -> note. Each is
    working-with-a-note, not a failure (remembered per endpoint and model)."""
    notes: dict[str, str] = {}
    if tool is not None and tool.response.message.tool_calls and tool.call_pieces.get(0, 1) <= 1:
        notes["tool_call_whole"] = ("tool calls arrive whole in one chunk: nothing shows while the model writes one;"
                                    " they run the same")
    if answer is not None and not answer.streamed:
        notes["no_stream"] = "stream: true is ignored: answers arrive whole at the end"
    if answer is not None and answer.streamed and answer.response.usage is None:
        notes["no_usage"] = "no token usage in the stream: compaction relies on minicode's own estimate"
    if window.output_cap == -1:
        notes["needs_max_tokens"] = (f"no output limit of its own ({window.output_cap_source} -1): minicode always sends"
                                     f" max_tokens ({max_tokens:,} here), so a runaway answer still stops")
    elif window.output_cap is not None and window.output_cap < max_tokens:
        notes["output_cap"] = (f"the server stops every answer at {window.output_cap:,} tokens"
                               f" ({window.output_cap_source}), below minicode's max_tokens {max_tokens:,}")
    return notes


def quirks_check(notes: dict[str, str], remembered: str | None, checked: bool) -> Check:
    """The endpoint's quirks met by the probes: working, with a note each."""
    data = {"notes": dict(notes), "remembered_in": remembered}
    if not checked:
        return Check("quirks", Status.SKIPPED, "not checked: no model request succeeded", None, data)
    if not notes:
        return Check("quirks", Status.OK, "none met", None, data)
    kept = f" · remembered in {remembered}" if remembered else ""
    return Check("quirks", Status.OK, "works with: " + "; ".join(notes.values()) + kept, None, data)
