"""Wire profiles (SPEC 3.4): how the thinking level and token limit go onto the request.

Owns the per-(host, model) heuristic, the request fields a profile produces, the pure parser
that learns a better profile from an HTTP 400 body, and the small on-disk cache of what was
learned per endpoint and model (``~/.minicode/wire-profiles.json``: version 1, 7-day TTL,
atomic writes): the profile, the context window the server reported
(``provider/server_window.py``), ``--doctor``'s notes on the endpoint's quirks, how it saw the
model make tool calls (natively, or written as text) and whether the small-model assists are
needed. Heuristic profiles are never written; only learned ones.
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Callable
from urllib.parse import urlsplit

from minicode import jsonsafe
from minicode.private_file import write_private

__all__ = [
    "CACHE_TTL_SECONDS",
    "CACHE_VERSION",
    "THINKING_LEVELS",
    "TOOL_CALL_STYLES",
    "WireProfile",
    "WireProfileCache",
    "cache_key",
    "default_cache_path",
    "host_key",
    "heuristic_profile",
    "learn_from_400",
    "output_limit",
    "profile_fields",
]

THINKING_LEVELS = ("off", "low", "medium", "high", "max")
CACHE_VERSION = 1
CACHE_TTL_SECONDS = 7 * 24 * 3600
TOOL_CALL_STYLES = ("native", "text")
"""How ``--doctor`` saw a model make its tool call: the server's format, or written as text."""
_THINKING_TYPES = ("enabled", "adaptive", "auto", "disabled")
DEFAULT_MAX_TOKENS = 8192
"""The output limit sent (``max_tokens``) for context windows of 32 Ki tokens and more."""
MIN_MAX_TOKENS = 256


def output_limit(context_window: int) -> int:
    """The ``max_tokens`` a request is sent with: 8192, or a quarter of a window under 32 Ki
    tokens (what ``compaction.trigger.Budget.for_window`` keeps free of the prompt), so prompt
    and answer fit together: vLLM refuses a request whose sum exceeds its ``max_model_len``,
    llama.cpp without a limit generates until its context is full."""
    return min(DEFAULT_MAX_TOKENS, max(MIN_MAX_TOKENS, context_window // 4))


@dataclass(frozen=True, slots=True)
class WireProfile:
    """What one endpoint accepts.

    ``thinking_on``/``thinking_off`` are the ``thinking.type`` values to send (``None``:
    send no ``thinking`` object). ``effort_max`` is the ``reasoning_effort`` value for the
    level ``max``; ``off`` always maps to ``none``.
    """

    thinking_on: str | None = "enabled"
    thinking_off: str | None = "disabled"
    reasoning_effort: bool = True
    effort_max: str = "max"
    max_tokens_field: str = "max_tokens"
    response_format: bool = True
    """Whether a request may carry ``response_format`` (a JSON schema the answer must follow:
    ``ChatRequest.answer_schema``); a 400 naming it, or the schema it carries, turns it off."""


def heuristic_profile(host: str, model: str) -> WireProfile:
    """The profile to start with for an endpoint that has taught us nothing yet."""
    host, model = host.lower(), model.lower()
    if "minimax" in model or "minimax" in host:
        return WireProfile(thinking_on="adaptive", thinking_off="disabled")
    if host == "api.openai.com":
        return WireProfile(thinking_on=None, thinking_off=None, effort_max="xhigh")
    return WireProfile()


def profile_fields(profile: WireProfile, thinking: str | None, max_tokens: int) -> dict[str, Any]:
    """The request fields this profile adds: the token limit and, if thinking is set, its fields."""
    fields: dict[str, Any] = {profile.max_tokens_field: max_tokens}
    if thinking is None:
        return fields
    if thinking not in THINKING_LEVELS:
        raise ValueError(f"thinking must be one of {', '.join(THINKING_LEVELS)}, not {thinking!r}")
    thinking_type = profile.thinking_off if thinking == "off" else profile.thinking_on
    if thinking_type is not None:
        fields["thinking"] = {"type": thinking_type}
    if profile.reasoning_effort:
        effort = {"off": "none", "max": profile.effort_max}.get(thinking, thinking)
        fields["reasoning_effort"] = effort
    return fields


# --- learning from a 400 ----------------------------------------------------------------

# Compiled at the first 400 that needs them, through ``re``'s own cache (case-insensitive).
_UNSUPPORTED = (
    r"unknown (?:request )?(?:parameter|argument|field)|unsupported (?:parameter|argument|field)"
    r"|unrecognized (?:request )?(?:parameter|argument|field)|not supported|is not allowed"
    r"|extra (?:inputs|fields) (?:are )?not permitted|extra_forbidden|unexpected (?:keyword|field|parameter)"
    r"|invalid (?:parameter|field|argument)s?"
)
_CONSTRAINT = r"allowed(?: values)?|must be(?: one of)?|one of|only accepts?|expected|valid values|supported values"
_THINKING_TYPE = r"thinking[._ ]?type|thinking\W+type|`thinking`\s*type"


def learn_from_400(profile: WireProfile, message: str, param: str | None = None) -> WireProfile | None:
    """A patched profile if a 400 body constrains one of our fields, else ``None``.

    Recognises allowed ``thinking.type`` values and "unknown/unsupported parameter" naming
    ``thinking``, ``reasoning_effort`` or ``max_tokens`` (which becomes
    ``max_completion_tokens``), and a refused ``response_format`` or its schema (no answer
    schema is sent from then on). Returns ``None`` when the result equals ``profile``.
    """
    text = f"{message} {param or ''}"
    patched = _learn_thinking_types(profile, text)
    if patched is None and re.search(_UNSUPPORTED, text, re.IGNORECASE):
        patched = _learn_unsupported(profile, text, param)
    if patched is None or patched == profile:
        patched = _learn_schema_refused(profile, text)
    return patched if patched is not None and patched != profile else None


def _learn_thinking_types(profile: WireProfile, text: str) -> WireProfile | None:
    where = re.search(_THINKING_TYPE, text, re.IGNORECASE)
    if where is None:
        return None
    constraint = re.compile(_CONSTRAINT, re.IGNORECASE).search(text, where.start())
    if constraint is None:
        return None
    tail = text[constraint.end() :].lower()
    allowed = [t for t in _THINKING_TYPES if re.search(rf"\b{t}\b", tail)]
    if not allowed:
        return None
    on_choices = [t for t in allowed if t != "disabled"]
    thinking_on = profile.thinking_on if profile.thinking_on in on_choices else next(iter(on_choices), None)
    thinking_off = "disabled" if "disabled" in allowed else None
    return replace(profile, thinking_on=thinking_on, thinking_off=thinking_off)


def _learn_unsupported(profile: WireProfile, text: str, param: str | None) -> WireProfile | None:
    named = {p.strip().lower() for p in (param or "").split(",") if p.strip()}

    def names(field: str) -> bool:
        return field in named or re.search(rf"(?<!\w){field}(?![\w])", text) is not None

    patched = profile
    if names("max_tokens") and profile.max_tokens_field == "max_tokens":
        patched = replace(patched, max_tokens_field="max_completion_tokens")
    if names("reasoning_effort"):
        patched = replace(patched, reasoning_effort=False)
    if names("thinking"):
        patched = replace(patched, thinking_on=None, thinking_off=None)
    return patched


def _learn_schema_refused(profile: WireProfile, text: str) -> WireProfile | None:
    """A 400 about the answer's schema (llama.cpp: "JSON schema conversion failed", a server
    without structured output: "response_format is not supported"): send none from now on.
    The caller retries only when that changes the body, so a request without one is unaffected."""
    if profile.response_format and re.search(r"response_format|json[_ ]schema|grammar|\bschema\b", text, re.IGNORECASE):
        return replace(profile, response_format=False)
    return None


# --- the cache of learned profiles ----------------------------------------------------


def default_cache_path(home: Path) -> Path:
    """``<home>/.minicode/wire-profiles.json``; the caller supplies the home directory."""
    return home / ".minicode" / "wire-profiles.json"


def cache_key(host: str, model: str) -> str:
    return f"{host.lower()}::{model.lower()}"


def host_key(base_url: str) -> str:
    """The host part of a cache key: the lower-case host name and the port when the URL has one."""
    parts = urlsplit(base_url)
    try:
        port = parts.port
    except ValueError:
        port = None
    return (parts.hostname or "").lower() + (f":{port}" if port else "")


class WireProfileCache:
    """Learned profiles on disk. Blocking file I/O: call it through ``asyncio.to_thread``.

    A missing, unreadable or corrupt file, a file of another version and malformed or
    expired entries all read as "nothing learned"; a failed write is ignored (the profile
    is then learned again next time). Never raises ``OSError``.
    """

    def __init__(self, path: Path, *, clock: Callable[[], float] = time.time) -> None:
        self.path = path
        self._clock = clock

    def get(self, host: str, model: str) -> WireProfile | None:
        entry = self._load().get(cache_key(host, model))
        if not isinstance(entry, dict):
            return None
        learned_at = entry.get("learned_at")
        if not isinstance(learned_at, (int, float)) or self._clock() - learned_at > CACHE_TTL_SECONDS:
            return None
        return _profile_from_json(entry.get("profile"))

    def put(self, host: str, model: str, profile: WireProfile) -> None:
        self._update(host, model, {"learned_at": self._clock(), "profile": _profile_to_json(profile)})

    def get_window(self, host: str, model: str) -> tuple[int | None, str, str] | None:
        """The context window the server reported (tokens or None, source, note), if fresh."""
        entry = self._load().get(cache_key(host, model))
        window = entry.get("window") if isinstance(entry, dict) else None
        if not isinstance(window, dict):
            return None
        learned_at, tokens = window.get("learned_at"), window.get("tokens")
        source, note = window.get("source"), window.get("note", "")
        if not isinstance(learned_at, (int, float)) or self._clock() - learned_at > CACHE_TTL_SECONDS:
            return None
        if tokens is not None and (isinstance(tokens, bool) or not isinstance(tokens, int) or tokens <= 0):
            return None
        if not isinstance(source, str) or not source or len(source) > 80 or not isinstance(note, str):
            return None
        return tokens, source, note[:300]

    def put_window(self, host: str, model: str, tokens: int | None, source: str, note: str = "") -> None:
        window = {"learned_at": self._clock(), "tokens": tokens, "source": source, "note": note}
        self._update(host, model, {"window": window})

    def get_assists(self, host: str, model: str) -> str | None:
        """Why the small-model assists were turned on for this endpoint and model, if they were."""
        entry = self._load().get(cache_key(host, model))
        assists = entry.get("assists") if isinstance(entry, dict) else None
        reason = assists.get("reason") if isinstance(assists, dict) else None
        return reason[:200] if isinstance(reason, str) and reason else None

    def put_assists(self, host: str, model: str, reason: str) -> None:
        self._update(host, model, {"assists": {"learned_at": self._clock(), "reason": reason}})

    def get_notes(self, host: str, model: str) -> dict[str, str]:
        """What ``--doctor`` learned about the endpoint beyond the profile (quirk -> note)."""
        entry = self._load().get(cache_key(host, model))
        notes = entry.get("notes") if isinstance(entry, dict) else None
        if not isinstance(notes, dict):
            return {}
        return {k: v for k, v in notes.items() if isinstance(k, str) and isinstance(v, str)}

    def put_notes(self, host: str, model: str, notes: dict[str, str]) -> None:
        self._update(host, model, {"notes": dict(notes)})

    def tool_calls(self, host: str, model: str) -> str | None:
        """How this endpoint's model made its tool call when ``--doctor`` last asked (one of
        ``TOOL_CALL_STYLES``: ``text`` = written as text, which minicode recovers), or None:
        never asked, expired or malformed. A run does not need it (it recovers text calls
        from any model); the doctor's report and later features may."""
        entry = self._load().get(cache_key(host, model))
        seen = entry.get("tool_calls") if isinstance(entry, dict) else None
        if not isinstance(seen, dict) or seen.get("style") not in TOOL_CALL_STYLES:
            return None
        seen_at = seen.get("seen_at")
        if not isinstance(seen_at, (int, float)) or self._clock() - seen_at > CACHE_TTL_SECONDS:
            return None
        return str(seen["style"])

    def note_tool_calls(self, host: str, model: str, style: str) -> None:
        """Remember how the model made its tool call (beside any learned profile)."""
        if style not in TOOL_CALL_STYLES:
            raise ValueError(f"tool-call style must be one of {', '.join(TOOL_CALL_STYLES)}, not {style!r}")
        self._update(host, model, {"tool_calls": {"style": style, "seen_at": self._clock()}})

    def _update(self, host: str, model: str, fields: dict[str, Any]) -> None:
        """Set ``fields`` of one entry, keeping its others (profile, window, notes)."""
        entries = self._load()
        key = cache_key(host, model)
        old = entries.get(key)
        entries[key] = {**(old if isinstance(old, dict) else {}), **fields}
        payload = json.dumps({"version": CACHE_VERSION, "profiles": entries}, indent=1, sort_keys=True)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            write_private(self.path, payload.encode())
        except OSError:
            return  # a cache that cannot be written only costs asking (or one extra 400) next time

    def _load(self) -> dict[str, Any]:
        try:
            data = jsonsafe.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        if not isinstance(data, dict) or data.get("version") != CACHE_VERSION:
            return {}
        profiles = data.get("profiles")
        return dict(profiles) if isinstance(profiles, dict) else {}


def _profile_to_json(profile: WireProfile) -> dict[str, Any]:
    return {name: getattr(profile, name) for name in WireProfile.__match_args__}


def _profile_from_json(raw: object) -> WireProfile | None:
    if isinstance(raw, dict) and "response_format" not in raw:  # kept before the field existed
        raw = {**raw, "response_format": True}
    if not isinstance(raw, dict) or set(raw) != set(WireProfile.__match_args__):
        return None
    on, off, effort, effort_max, field = (
        raw["thinking_on"],
        raw["thinking_off"],
        raw["reasoning_effort"],
        raw["effort_max"],
        raw["max_tokens_field"],
    )
    response_format = raw["response_format"]
    if not (on is None or on in _THINKING_TYPES) or not (off is None or off in _THINKING_TYPES):
        return None
    if not isinstance(effort, bool) or not isinstance(effort_max, str):
        return None
    if field not in ("max_tokens", "max_completion_tokens") or not isinstance(response_format, bool):
        return None
    return WireProfile(on, off, effort, effort_max, field, response_format)
