"""The model's context window, asked of the server when the configuration does not set it.

Local servers say how large a context they run, each in its own place:

- llama.cpp ``llama-server``: ``GET <root>/props`` → ``default_generation_settings.n_ctx``
  (what it runs), and ``/v1/models`` → ``meta.n_ctx`` (or ``meta.n_ctx_train``, the model's
  training context);
- Ollama: ``POST <root>/api/show`` → ``num_ctx`` in ``parameters`` when the model sets it,
  else ``model_info.<arch>.context_length``;
- vLLM: ``/v1/models`` → ``max_model_len``;
- LM Studio: ``GET <root>/api/v0/models`` → ``loaded_context_length``, else
  ``max_context_length``.

``ask_server_window`` sends the four requests at once (``<root>`` is the base URL without a
trailing ``/v1``), each with a short timeout and a bounded body, and takes the most specific
answer: what the server runs before what the model was trained for. Any other answer — an
error status, a body that is not JSON or not the expected shape, a number that is not a
plausible token count, a server that hangs — is "not reported"; the caller then uses the
default and says so. Never raises for what the server does. httpx2 is imported only when
asking.
"""

from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Mapping

from minicode import jsonsafe
from minicode.provider.catalog import ModelInfo, near_names, parse_models, token_count

if TYPE_CHECKING:
    import httpx2

__all__ = [
    "ASK_TIMEOUT",
    "DEFAULT_SOURCE",
    "MAX_BODY_BYTES",
    "ServerWindow",
    "ask_server_window",
    "from_lmstudio",
    "from_models",
    "from_ollama_show",
    "from_props",
    "output_cap",
    "server_root",
]

ASK_TIMEOUT = 3.0
"""Seconds the questions may take together: a local server answers them in milliseconds."""
MAX_BODY_BYTES = 1 << 20
"""The most read of one answer (llama.cpp's /props with its chat template is ~5-50 KiB)."""
MIN_WINDOW, MAX_WINDOW = 256, 1 << 27
"""A reported window outside these is not believed (no model runs in fewer tokens)."""
DEFAULT_SOURCE = "default (unknown)"

# Most specific first: the context the server runs, then the model's own limit.
_RANK = (
    "llama.cpp /props",
    "ollama num_ctx",
    "lm studio loaded_context_length",
    "vllm max_model_len",
    "llama.cpp meta.n_ctx",
    "/models",
    "ollama /api/show",
    "lm studio max_context_length",
    "llama.cpp meta.n_ctx_train",
)
_MODELS_SOURCES = {"max_model_len": "vllm max_model_len", "meta.n_ctx": "llama.cpp meta.n_ctx",
                   "meta.n_ctx_train": "llama.cpp meta.n_ctx_train"}
_UNREACHED = ("timed out", "not reached")
_NUM_CTX = re.compile(r"^\s*num_ctx\s+(\d{1,12})\s*$", re.MULTILINE)
_NUM_PREDICT = re.compile(r"^\s*num_predict\s+(-1|\d{1,12})\s*$", re.MULTILINE)


@dataclass(frozen=True, slots=True)
class ServerWindow:
    """What the server said: ``tokens`` with ``source`` (e.g. ``llama.cpp /props``), or no
    number, ``source`` the default's and ``note`` why (for ``--doctor``)."""

    tokens: int | None
    source: str = DEFAULT_SOURCE
    note: str = ""
    lasting: bool = True
    """Worth remembering: a number, or every question answered without one (not a server
    that hung or could not be reached: it may answer next time)."""
    output_cap: int | None = None
    """The server's own output limit when it said: tokens, or -1 for none (llama.cpp's
    ``n_predict -1`` generates until the context is full without ``max_tokens``)."""
    output_cap_source: str = ""


def server_root(base_url: str) -> str:
    """The server's root: the base URL without a trailing ``/v1`` (where /props, /api live)."""
    root = base_url.rstrip("/")
    return root[:-3] if root.endswith("/v1") else root


# --- the answers, pure -------------------------------------------------------------------------


def _plausible(value: object) -> int | None:
    tokens = token_count(value)
    return tokens if tokens is not None and MIN_WINDOW <= tokens <= MAX_WINDOW else None


def from_props(data: object) -> int | None:
    """llama.cpp's ``/props``: ``default_generation_settings.n_ctx`` (older builds: ``n_ctx``)."""
    if not isinstance(data, dict):
        return None
    settings = data.get("default_generation_settings")
    if isinstance(settings, dict) and (tokens := _plausible(settings.get("n_ctx"))) is not None:
        return tokens
    return _plausible(data.get("n_ctx"))


def output_cap(props: object, show: object) -> tuple[int, str] | None:
    """The server's own output limit: llama.cpp's ``n_predict`` (in ``/props``), Ollama's
    ``num_predict`` parameter; -1 for none."""
    if isinstance(props, dict) and isinstance(settings := props.get("default_generation_settings"), dict):
        params = settings.get("params")
        for where in (settings, params if isinstance(params, dict) else {}):
            value = where.get("n_predict")
            if isinstance(value, int) and not isinstance(value, bool) and (value == -1 or 0 < value <= MAX_WINDOW):
                return value, "llama.cpp n_predict"
    parameters = show.get("parameters") if isinstance(show, dict) else None
    if isinstance(parameters, str) and (found := _NUM_PREDICT.search(parameters[:65536])) is not None:
        value = int(found.group(1))
        if value == -1 or 0 < value <= MAX_WINDOW:
            return value, "ollama num_predict"
    return None


def from_ollama_show(data: object) -> tuple[int, str] | None:
    """Ollama's ``/api/show``: the model's ``num_ctx`` parameter, else its ``*.context_length``."""
    if not isinstance(data, dict):
        return None
    parameters = data.get("parameters")
    if isinstance(parameters, str) and (found := _NUM_CTX.search(parameters[:65536])) is not None:
        if (tokens := _plausible(found.group(1))) is not None:
            return tokens, "ollama num_ctx"
    info = data.get("model_info")
    if isinstance(info, dict):
        for key, value in info.items():
            if isinstance(key, str) and key.endswith(".context_length") and (tokens := _plausible(value)) is not None:
                return tokens, "ollama /api/show"
    return None


def from_lmstudio(data: object, model: str) -> tuple[int, str] | None:
    """LM Studio's ``/api/v0/models`` entry for ``model``: loaded, else maximum context."""
    entries = data.get("data") if isinstance(data, dict) else None
    if not isinstance(entries, list):
        return None
    entry = _entry_for(model, [e for e in entries if isinstance(e, dict) and isinstance(e.get("id"), str)])
    if entry is None:
        return None
    for key in ("loaded_context_length", "max_context_length"):
        if (tokens := _plausible(entry.get(key))) is not None:
            return tokens, f"lm studio {key}"
    return None


def from_models(data: object, model: str) -> tuple[int, str] | None:
    """A ``/models`` list's window for ``model`` (vLLM, llama.cpp's meta, other servers' keys)."""
    listed = parse_models(data)
    if not listed:
        return None
    info = _info_for(model, listed)
    if info is None or info.window_source is None or (tokens := _plausible(info.context_window)) is None:
        return None
    return tokens, _MODELS_SOURCES.get(info.window_source, f"/models {info.window_source}")


def _entry_for(model: str, entries: list[dict[str, Any]]) -> dict[str, Any] | None:
    ids = [e["id"] for e in entries]
    wanted = model if model in ids else next(iter(near_names(model, ids)), None)
    exact = wanted is not None and wanted.lower().rsplit("/", 1)[-1] == model.lower().rsplit("/", 1)[-1]
    return next((e for e in entries if e["id"] == wanted), None) if exact else None


def _info_for(model: str, listed: tuple[ModelInfo, ...]) -> ModelInfo | None:
    entry = _entry_for(model, [{"id": m.id} for m in listed])
    if entry is None:
        return listed[0] if len(listed) == 1 else None  # a server of one model answers for it
    return next(m for m in listed if m.id == entry["id"])


def best(found: list[tuple[int, str]]) -> tuple[int, str] | None:
    """The most specific of the answers found (``_RANK``; unknown /models keys rank as /models)."""
    def rank(item: tuple[int, str]) -> int:
        source = item[1]
        return _RANK.index(source) if source in _RANK else _RANK.index("/models")

    return min(found, key=rank) if found else None


# --- asking ------------------------------------------------------------------------------------


async def ask_server_window(
    base_url: str,
    model: str,
    api_key: str,
    *,
    env: Mapping[str, str] | None = None,
    timeout: float = ASK_TIMEOUT,
) -> ServerWindow:
    """Ask the server at ``base_url`` how large a context ``model`` runs with (see above)."""
    import httpx2  # only when asking: a configured window or a cached answer never loads it

    from minicode.provider.http import USER_AGENT  # the provider's: the same client to the server

    headers = {"User-Agent": USER_AGENT} | ({"Authorization": f"Bearer {api_key}"} if api_key else {})
    root, models = server_root(base_url), base_url.rstrip("/") + "/models"
    verify: Any = True
    if env is not None:
        from minicode.provider.factory import tls_context

        verify = tls_context(env)
    failures: list[tuple[str, str]] = []
    async with httpx2.AsyncClient(timeout=timeout, headers=headers, verify=verify) as client:
        async def get(method: str, url: str, body: object = None) -> object:
            return await _json(client, method, url, body, failures)

        try:
            async with asyncio.timeout(timeout):
                props, show, lmstudio, listed = await asyncio.gather(
                    get("GET", root + "/props"),
                    get("POST", root + "/api/show", {"model": model}),
                    get("GET", root + "/api/v0/models"),
                    get("GET", models),
                )  # each a value, or None with its failure noted
        except TimeoutError:
            return ServerWindow(None, note=f"the server did not answer within {timeout:g} s", lasting=False)
    found: list[tuple[int, str]] = []
    if (tokens := from_props(props)) is not None:
        found.append((tokens, "llama.cpp /props"))
    for answer in (from_ollama_show(show), from_lmstudio(lmstudio, model), from_models(listed, model)):
        if answer is not None:
            found.append(answer)
    chosen = best(found)
    cap, cap_source = output_cap(props, show) or (None, "")
    if chosen is None:
        answered = 4 - len(failures)
        why = ", ".join(_grouped(failures))
        if answered:
            why += (", " if why else "") + f"{answered} answer{'s' * (answered > 1)} without a window"
        reached = not any(f in _UNREACHED for _, f in failures)
        return ServerWindow(None, note=f"not reported by the server ({why})", lasting=reached,
                            output_cap=cap, output_cap_source=cap_source)
    return ServerWindow(chosen[0], chosen[1], output_cap=cap, output_cap_source=cap_source)


def _grouped(failures: list[tuple[str, str]]) -> list[str]:
    """Why the questions got no answer, each reason once with its count: ["HTTP 404 ×3"]."""
    counts: dict[str, int] = {}
    for _, why in failures:
        counts[why] = counts.get(why, 0) + 1
    return [f"{why} ×{n}" if n > 1 else why for why, n in counts.items()]


async def _json(
    client: httpx2.AsyncClient, method: str, url: str, body: object, failures: list[tuple[str, str]]
) -> object:
    """The JSON of one answer, None for anything else (the question and why in ``failures``)."""
    import httpx2

    noted = _noter(url, failures)

    try:
        async with client.stream(method, url, json=body) as response:
            if response.status_code != 200:
                noted(f"HTTP {response.status_code}")
                return None
            data = bytearray()
            async for piece in response.aiter_bytes():
                data += piece
                if len(data) > MAX_BODY_BYTES:
                    noted("an answer too large")
                    return None
    except httpx2.TimeoutException:
        noted("timed out")
        return None
    except (httpx2.TransportError, OSError):
        noted("not reached")
        return None
    except (httpx2.HTTPError, httpx2.InvalidURL, ValueError):
        noted("a broken answer")
        return None
    try:
        return jsonsafe.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        noted("not JSON")
        return None


def _noter(url: str, failures: list[tuple[str, str]]) -> Callable[[str], None]:
    def noted(why: str) -> None:
        failures.append((url, why))

    return noted
