"""What a server's ``GET /models`` says, pure: model ids, context windows, near names.

Servers answer in several shapes: OpenAI's ``{"object": "list", "data": [{"id": ...}]}``,
a bare list, ``{"models": [...]}`` (some gateways), entries with ``name`` or ``model``
instead of ``id``. A context window hides under many keys: ``context_length`` (OpenRouter,
Together), ``context_window`` (Groq), ``max_model_len`` (vLLM), ``max_context_length``
(Mistral, LM Studio), ``top_provider.context_length`` (OpenRouter), ``meta.n_ctx_train``
(llama.cpp: the training context, which its server may run smaller). Imports only the
standard library.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import Any

__all__ = ["ModelInfo", "near_names", "parse_models", "token_count"]

_WINDOW_KEYS = ("context_length", "context_window", "max_model_len", "max_context_length", "context_size",
                "max_input_tokens", "n_ctx")
_NESTED_WINDOW_KEYS = (("top_provider", "context_length"), ("meta", "n_ctx"), ("meta", "n_ctx_train"))
_MAX_NEAR = 3


@dataclass(frozen=True, slots=True)
class ModelInfo:
    """One listed model. ``context_window`` is in tokens when the server said it, with the
    key it came from in ``window_source`` (e.g. ``max_model_len``)."""

    id: str
    context_window: int | None = None
    window_source: str | None = None


def parse_models(data: object) -> tuple[ModelInfo, ...] | None:
    """The models of a ``/models`` body, in order, each id once; None when the body is not a
    model list at all (the caller says the server does not list models)."""
    entries = _entries(data)
    if entries is None:
        return None
    found: dict[str, ModelInfo] = {}
    for entry in entries:
        info = _model(entry)
        if info is not None and info.id not in found:
            found[info.id] = info
    return tuple(found.values())


def _entries(data: object) -> list[Any] | None:
    if isinstance(data, list):
        return data
    if isinstance(data, dict):
        for key in ("data", "models"):
            if isinstance(data.get(key), list):
                return list(data[key])
    return None


def _model(entry: object) -> ModelInfo | None:
    if isinstance(entry, str):
        return ModelInfo(entry) if entry.strip() else None
    if not isinstance(entry, dict):
        return None
    ident = next((entry[k] for k in ("id", "name", "model") if isinstance(entry.get(k), str) and entry[k]), None)
    if ident is None:
        return None
    window, source = _window(entry)
    return ModelInfo(ident, window, source)


def _window(entry: dict[str, Any]) -> tuple[int | None, str | None]:
    for key in _WINDOW_KEYS:
        value = token_count(entry.get(key))
        if value is not None:
            return value, key
    for outer, inner in _NESTED_WINDOW_KEYS:
        nested = entry.get(outer)
        if isinstance(nested, dict):
            value = token_count(nested.get(inner))
            if value is not None:
                return value, f"{outer}.{inner}"
    return None, None


def token_count(value: object) -> int | None:
    """A positive whole number of tokens (some servers send it as a string)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value.strip())
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return value if isinstance(value, int) and value > 0 else None


def near_names(name: str, ids: list[str] | tuple[str, ...]) -> list[str]:
    """Listed ids the user may have meant by ``name``: the same id in another case or behind a
    vendor prefix (``openai/gpt-4.1`` for ``gpt-4.1``), then the closest spellings."""
    wanted = name.lower()
    exact = [i for i in ids if i.lower() == wanted or i.lower().rsplit("/", 1)[-1] == wanted]
    if exact:
        return exact[:_MAX_NEAR]
    by_lower = {i.lower(): i for i in ids}
    close = difflib.get_close_matches(wanted, list(by_lower), n=_MAX_NEAR, cutoff=0.6)
    if not close:  # compare without vendor prefixes too: "gpt4.1" vs "openai/gpt-4.1"
        tails = {i.lower().rsplit("/", 1)[-1]: i for i in ids}
        close = [tails[t].lower() for t in difflib.get_close_matches(wanted, list(tails), n=_MAX_NEAR, cutoff=0.6)]
    return [by_lower[c] for c in close]
