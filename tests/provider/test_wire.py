"""Wire profiles (SPEC 3.4): heuristics, fields, 400-hint learning and the on-disk cache."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from minicode.provider.wire import (
    CACHE_TTL_SECONDS,
    CACHE_VERSION,
    WireProfile,
    WireProfileCache,
    default_cache_path,
    heuristic_profile,
    learn_from_400,
    profile_fields,
)

MINIMAX_400 = 'invalid params, invalid thinking.type: "enabled" (allowed: adaptive, disabled) (2013)'


def test_heuristic_minimax_by_model_or_host() -> None:
    for host, model in [("example.com", "MiniMax-M3"), ("api.minimax.io", "m3")]:
        fields = profile_fields(heuristic_profile(host, model), "high", 8192)
        assert fields == {"max_tokens": 8192, "thinking": {"type": "adaptive"}, "reasoning_effort": "high"}
    assert profile_fields(heuristic_profile("api.minimax.io", "m"), "off", 10)["thinking"] == {"type": "disabled"}


def test_heuristic_openai_has_no_thinking_and_maps_max() -> None:
    profile = heuristic_profile("API.OpenAI.com", "gpt-5")
    assert profile_fields(profile, "max", 8192) == {"max_tokens": 8192, "reasoning_effort": "xhigh"}
    assert profile_fields(profile, "off", 8192) == {"max_tokens": 8192, "reasoning_effort": "none"}


def test_heuristic_default() -> None:
    profile = heuristic_profile("api.deepseek.com", "deepseek-chat")
    assert profile_fields(profile, "off", 1) == {"max_tokens": 1, "thinking": {"type": "disabled"}, "reasoning_effort": "none"}
    assert profile_fields(profile, "medium", 1) == {"max_tokens": 1, "thinking": {"type": "enabled"}, "reasoning_effort": "medium"}
    assert profile_fields(profile, "max", 1)["reasoning_effort"] == "max"


def test_no_thinking_sends_no_thinking_fields() -> None:
    for host in ("api.openai.com", "api.minimax.io", "localhost"):
        assert profile_fields(heuristic_profile(host, "m"), None, 8192) == {"max_tokens": 8192}


def test_bad_level_rejected() -> None:
    with pytest.raises(ValueError, match="thinking must be one of"):
        profile_fields(WireProfile(), "extreme", 1)


# --- learning -------------------------------------------------------------------------


def test_learn_minimax_allowed_types() -> None:
    learned = learn_from_400(WireProfile(), MINIMAX_400)
    assert learned == WireProfile(thinking_on="adaptive", thinking_off="disabled")


@pytest.mark.parametrize(
    ("message", "expected_on"),
    [
        ("Validation: `thinking.type` must be `enabled` or `disabled`", "enabled"),
        ("thinking.type only accepts auto/disabled", "auto"),
    ],
)
def test_learn_other_allowed_type_wordings(message: str, expected_on: str) -> None:
    learned = learn_from_400(WireProfile(thinking_on="adaptive"), message)
    assert learned == WireProfile(thinking_on=expected_on, thinking_off="disabled")


def test_learn_nothing_new_returns_none() -> None:
    assert learn_from_400(WireProfile(thinking_on="adaptive"), MINIMAX_400) is None


@pytest.mark.parametrize(
    ("message", "param", "expected"),
    [
        ("Unrecognized request argument supplied: reasoning_effort", None, WireProfile(reasoning_effort=False)),
        ("Validation: Unsupported parameter(s): thinking", None, WireProfile(thinking_on=None, thinking_off=None)),
        (
            "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.",
            "max_tokens",
            WireProfile(max_tokens_field="max_completion_tokens"),
        ),
        ("body.thinking: Extra inputs are not permitted", None, WireProfile(thinking_on=None, thinking_off=None)),
        ("unknown parameter", "reasoning_effort", WireProfile(reasoning_effort=False)),
    ],
)
def test_learn_unsupported_parameters(message: str, param: str | None, expected: WireProfile) -> None:
    assert learn_from_400(WireProfile(), message, param) == expected


@pytest.mark.parametrize(
    "message",
    [
        "invalid params, chat content has invalid message role: system (2013)",
        "This model's maximum context length is 4096 tokens. However, your request has 8 input tokens plus 2045 'max_tokens'.",
        "Bad request",
        "",
    ],
)
def test_unparseable_400_learns_nothing(message: str) -> None:
    assert learn_from_400(WireProfile(), message) is None


# --- cache ----------------------------------------------------------------------------


class Clock:
    def __init__(self, now: float = 1_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


LEARNED = WireProfile(thinking_on="adaptive", reasoning_effort=False)


def test_cache_roundtrip_lowercase_key_and_file_format(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "wire-profiles.json"
    cache = WireProfileCache(path, clock=Clock())
    cache.put("API.Example.com", "Model-X", LEARNED)
    assert cache.get("api.example.com", "model-x") == LEARNED
    data = json.loads(path.read_text())
    assert data["version"] == 1
    assert list(data["profiles"]) == ["api.example.com::model-x"]
    assert [p.name for p in path.parent.iterdir()] == ["wire-profiles.json"]  # no temp file left


def test_cache_expires_after_ttl(tmp_path: Path) -> None:
    clock = Clock()
    cache = WireProfileCache(tmp_path / "w.json", clock=clock)
    cache.put("h", "m", LEARNED)
    clock.now += CACHE_TTL_SECONDS - 1
    assert cache.get("h", "m") == LEARNED
    clock.now += 2
    assert cache.get("h", "m") is None


def test_how_tool_calls_come_is_remembered_beside_the_profile(tmp_path: Path) -> None:
    clock = Clock()
    cache = WireProfileCache(tmp_path / "w.json", clock=clock)
    assert cache.tool_calls("h", "m") is None
    cache.note_tool_calls("h", "m", "text")
    assert cache.tool_calls("H", "M") == "text" and cache.get("h", "m") is None  # no profile learned by it
    cache.put("h", "m", LEARNED)  # learning a profile keeps the note, and the note keeps the profile
    assert cache.tool_calls("h", "m") == "text" and cache.get("h", "m") == LEARNED
    cache.note_tool_calls("h", "m", "native")
    assert cache.tool_calls("h", "m") == "native" and cache.get("h", "m") == LEARNED
    clock.now += CACHE_TTL_SECONDS + 1
    assert cache.tool_calls("h", "m") is None


@pytest.mark.parametrize("seen", [{"style": "smoke"}, {"style": "text", "seen_at": "now"}, "text", None])
def test_a_malformed_tool_call_note_reads_as_none(tmp_path: Path, seen: object) -> None:
    path = tmp_path / "w.json"
    path.write_text(json.dumps({"version": 1, "profiles": {"h::m": {"tool_calls": seen}}}))
    assert WireProfileCache(path, clock=Clock()).tool_calls("h", "m") is None
    with pytest.raises(ValueError):
        WireProfileCache(path).note_tool_calls("h", "m", "smoke")


def test_cache_wrong_version_ignored(tmp_path: Path) -> None:
    path = tmp_path / "w.json"
    cache = WireProfileCache(path, clock=Clock())
    cache.put("h", "m", LEARNED)
    data = json.loads(path.read_text())
    data["version"] = 2
    path.write_text(json.dumps(data))
    assert cache.get("h", "m") is None
    cache.put("h2", "m", LEARNED)  # a rewrite replaces the foreign file with version 1
    assert json.loads(path.read_text())["version"] == 1


@pytest.mark.parametrize(
    "content",
    [
        "{not json",
        "[]",
        '{"version": 1, "profiles": {"h::m": {"learned_at": 999999, "profile": {"thinking_on": "bogus"}}}}',
        '{"version": 1, "profiles": {"h::m": {"learned_at": "yesterday", "profile": {}}}}',
    ],
)
def test_cache_corrupt_file_or_entry_ignored(tmp_path: Path, content: str) -> None:
    path = tmp_path / "w.json"
    path.write_text(content)
    assert WireProfileCache(path, clock=Clock()).get("h", "m") is None


def test_cache_unwritable_location_is_silent(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    cache = WireProfileCache(blocker / "w.json", clock=Clock())
    cache.put("h", "m", LEARNED)  # parent is a file: the write fails, nothing raises
    assert cache.get("h", "m") is None


def test_cache_write_fsyncs_the_temp_file_before_renaming_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "w.json"
    events: list[str] = []
    real_fsync, real_replace = os.fsync, os.replace

    def fsync(fd: int) -> None:
        # What is synced is the complete new content, still under the temporary name.
        (tmp,) = [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]
        events.append("fsync:" + str(json.loads(tmp.read_text())["version"]))
        real_fsync(fd)

    def replace(src: str, dst: Path) -> None:
        events.append("replace")
        real_replace(src, dst)

    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(os, "replace", replace)
    WireProfileCache(path, clock=Clock()).put("h", "m", LEARNED)
    assert events == ["fsync:1", "replace"]
    assert [p.name for p in tmp_path.iterdir()] == ["w.json"]


@pytest.mark.parametrize("failing", ["fsync", "replace"])
def test_a_failed_cache_write_keeps_the_old_file_and_removes_the_temp_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, failing: str
) -> None:
    path = tmp_path / "w.json"
    cache = WireProfileCache(path, clock=Clock())
    cache.put("h", "m", LEARNED)
    before = path.read_bytes()

    def fail(*args: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, failing, fail)
    cache.put("h2", "m", LEARNED)  # silent: the cache is an optimisation
    assert path.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["w.json"]
    assert cache.get("h2", "m") is None and cache.get("h", "m") == LEARNED


def test_default_cache_path() -> None:
    assert default_cache_path(Path("/home/u")) == Path("/home/u/.minicode/wire-profiles.json")


# --- the server's context window and --doctor's notes, kept with the profile ---------------------


def test_a_window_and_notes_are_kept_beside_the_profile(tmp_path: Path) -> None:
    from minicode.provider.wire import host_key

    now = [1000.0]
    cache = WireProfileCache(tmp_path / "w.json", clock=lambda: now[0])
    host = host_key("http://LocalHost:8080/v1")
    assert host == "localhost:8080" and cache.get_window(host, "m") is None
    cache.put(host, "m", WireProfile(max_tokens_field="max_completion_tokens"))
    cache.put_window(host, "m", 32768, "llama.cpp /props")
    cache.put_notes(host, "m", {"tool_choice": "ignored"})
    assert cache.get(host, "m") == WireProfile(max_tokens_field="max_completion_tokens")  # not overwritten
    assert cache.get_window(host, "m") == (32768, "llama.cpp /props", "")
    assert cache.get_notes(host, "m") == {"tool_choice": "ignored"}
    cache.put(host, "m", WireProfile())  # a profile learned later keeps the window
    assert cache.get_window(host, "m") == (32768, "llama.cpp /props", "")
    now[0] += CACHE_TTL_SECONDS + 1
    assert cache.get_window(host, "m") is None


@pytest.mark.parametrize("window", [
    "x", {"learned_at": 1.0, "tokens": -1, "source": "s"}, {"learned_at": 1.0, "tokens": True, "source": "s"},
    {"learned_at": 1.0, "tokens": 5, "source": ""}, {"learned_at": "1", "tokens": 5, "source": "s"},
    {"learned_at": 1.0, "tokens": 5, "source": "s" * 200},
])
def test_a_damaged_window_entry_reads_as_nothing(tmp_path: Path, window: object) -> None:
    path = tmp_path / "w.json"
    path.write_text(json.dumps({"version": CACHE_VERSION, "profiles": {"h::m": {"window": window, "notes": [1]}}}))
    cache = WireProfileCache(path, clock=lambda: 2.0)
    assert cache.get_window("h", "m") is None and cache.get_notes("h", "m") == {}


def test_the_output_limit_fits_the_window() -> None:
    from minicode.provider.wire import output_limit

    assert [output_limit(w) for w in (262144, 32768, 16384, 4096, 100)] == [8192, 8192, 4096, 1024, 256]
