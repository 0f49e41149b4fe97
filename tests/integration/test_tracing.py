"""Spans through the REAL agent loop and Session (scripted provider, in-memory OTel exporter).

The tracer is an ``OTelTracer`` with *no* secrets registered, so any secret found in the
exported data would be one the loop handed over itself (redaction would not hide it).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, AsyncIterator

import pytest
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.trace import StatusCode

from minicode.agent.approval import AutoApprover
from minicode.agent.events import AgentEvent, CompactionDone, TaskStatus
from minicode.config import Config, LangfuseConfig, ModelConfig
from minicode.errors import APIError
from minicode.provider.types import ChatRequest, Message, Usage
from minicode.session.session import Session
from minicode.telemetry.traced import TracedChat
from tests.agent.scripted import ScriptedProvider, fail, text, tools
from tests.telemetry.capture import TraceCapture, capture_tracer

API_KEY = "sk-integration-API-KEY-9f8e7d"
LF_SECRET = "sk-lf-integration-SECRET-1a2b"
WINDOW = 40_000
"""Budget.for_window(40_000): limit 30,000 tokens, keep-recent 15,000."""
TASK = "Refactor the parser."
BIG_TASK = TASK + " " + "f" * 64_000  # ~16k tokens: older than the kept part


def _config() -> Config:
    model = ModelConfig(base_url="http://127.0.0.1:9/v1", name="scripted-model", api_key=API_KEY,
                        api_key_env="TEST_KEY", context_window=WINDOW)
    langfuse = LangfuseConfig(public_key="pk-lf-integration", secret_key=LF_SECRET, host="http://127.0.0.1:9")
    return Config(model=model, path=Path("/nonexistent/config.toml"), langfuse=langfuse)


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = (tmp_path / "ws").resolve()
    ws.mkdir()
    # ~60 KB (about 15k tokens read back): the part the compaction gets to summarise.
    body = "".join(f"def rule_{i}(tokens):  # parse rule number {i:05d} of the grammar\n" for i in range(900))
    (ws / "parser.py").write_text(f"KEYS = ({API_KEY!r}, {LF_SECRET!r})\n" + body)
    return ws


@pytest.fixture
def capture() -> AsyncIterator[TraceCapture]:
    traced = capture_tracer()  # no secrets registered: nothing is redacted for us
    yield traced
    traced.tracer.shutdown()


@pytest.fixture
async def session(workspace: Path, capture: TraceCapture) -> AsyncIterator[tuple[Session, ScriptedProvider]]:
    provider = ScriptedProvider()
    env = {"PATH": "/usr/bin:/bin", "TEST_KEY": API_KEY, "HOME": str(workspace)}
    opened = await Session.open(config=_config(), workspace=workspace, env=env, provider=provider,
                                tracer=capture.tracer)
    yield opened, provider
    opened._store.close()


async def _run(session: Session, task: str) -> tuple[Any, list[AgentEvent]]:
    events: list[AgentEvent] = []
    finished = await session.turn(task, approver=AutoApprover(), emit=events.append)
    return finished, events


def _attrs(span: ReadableSpan) -> dict[str, Any]:
    return dict(span.attributes or {})


def _script_task_with_compaction(provider: ScriptedProvider) -> None:
    """read (a big result), then ls; the prompt size reported with the ls call (30,200 against a
    30,000 limit) makes its result push the next request over the budget, so the loop
    compacts before it: the task and the read batch are summarised, the ls batch kept."""
    calibrated = Usage(prompt_tokens=30_200, completion_tokens=30, total_tokens=30_230)
    provider.script(
        tools(("read", {"path": "parser.py"}), usage=Usage(2_000, 20, 2_020)),
        tools(("ls", {}), usage=calibrated),
        text("SUMMARY: the parser task so far", usage=Usage(500, 40, 540)),
        text("Parser refactored.", usage=Usage(3_000, 12, 3_012)),
    )


async def test_span_tree_of_a_task_with_two_tools_and_a_compaction(session, capture) -> None:
    opened, provider = session
    _script_task_with_compaction(provider)
    finished, events = await _run(opened, TASK)
    assert finished.status is TaskStatus.DONE and finished.final_text == "Parser refactored."
    assert len([e for e in events if isinstance(e, CompactionDone)]) == 1
    assert len(provider.chat_requests) == 1  # the summary request

    tree = capture.tree()
    assert ("minicode.turn", None) in tree
    assert tree.count(("minicode.model_call", "minicode.turn")) == 3
    assert tree.count(("minicode.tool", "minicode.turn")) == 2
    assert tree.count(("minicode.compaction", "minicode.turn")) == 1

    turn = _attrs(capture.one("minicode.turn"))
    assert turn["session.id"] == opened.id and turn["model"] == "scripted-model"
    assert turn["status"] == "done" and turn["tool_calls"] == 2 and turn["model_calls"] == 4
    assert turn["gen_ai.conversation.id"] == opened.id

    main = sorted((s for s in capture.named("minicode.model_call") if _attrs(s).get("purpose") == "main"),
                  key=lambda s: s.start_time or 0)
    first, second, last = main
    a = _attrs(second)
    assert a["model"] == "scripted-model" and a["gen_ai.request.model"] == "scripted-model"
    assert a["usage.prompt_tokens"] == 30_200 and a["usage.completion_tokens"] == 30
    assert a["usage.total_tokens"] == 30_230 and a["finish_reason"] == "tool_calls"
    assert a["latency_ms"] >= 0 and a["request.messages"] == 4 and a["request.estimated_tokens"] > 15_000
    assert '"input": 30200' in a["langfuse.observation.usage_details"]
    assert _attrs(first)["request.messages"] == 2  # system prompt, task (no MiniCode.md)
    assert _attrs(last)["finish_reason"] == "stop" and _attrs(last)["usage.prompt_tokens"] == 3_000

    tools_ = sorted((_attrs(s) for s in capture.named("minicode.tool")), key=lambda t: t["tool.name"])
    assert [t["tool.name"] for t in tools_] == ["ls", "read"]
    assert all(t["outcome"] == "ok" and t["duration_ms"] >= 0 and t["tool.call_id"] for t in tools_)

    compaction = _attrs(capture.one("minicode.compaction"))
    assert compaction["trigger"] == "auto" and compaction["outcome"] == "ok"
    assert compaction["tokens_before"] > 15_000 > 5_000 > compaction["tokens_after"] > 0  # local estimates
    assert compaction["messages_summarised"] == 3 and compaction["duration_ms"] >= 0

    # Ordering: the compaction ran after the second main call, before the last.
    span = capture.one("minicode.compaction")
    assert second.end_time <= span.start_time <= span.end_time <= last.start_time  # type: ignore[operator]


async def test_no_secret_or_content_in_any_exported_span(session, capture) -> None:
    opened, provider = session
    _script_task_with_compaction(provider)
    finished, _ = await _run(opened, TASK + f" (use key {API_KEY})")
    assert finished.status is TaskStatus.DONE
    # The key really went through the loop in the task; the read result has it redacted.
    assert API_KEY in (opened.messages[0].content or "")
    results = [m.content or "" for m in opened.messages if m.role == "tool"]
    assert any("[redacted]" in r for r in results) and not any(LF_SECRET in r for r in results)
    assert capture.named("minicode.compaction")
    exported = capture.all_attribute_text()
    assert API_KEY not in exported and LF_SECRET not in exported
    assert "Refactor the parser" not in exported and "SUMMARY" not in exported


async def test_compaction_span_holds_its_summary_model_call(session, capture) -> None:
    opened, provider = session
    _script_task_with_compaction(provider)
    await _run(opened, TASK)
    summary_calls = [s for s in capture.named("minicode.model_call") if _attrs(s).get("purpose") == "compaction"]
    assert len(summary_calls) == 1
    assert capture.parent_of(summary_calls[0]) is not None
    assert capture.parent_of(summary_calls[0]).name == "minicode.compaction"  # type: ignore[union-attr]
    assert _attrs(summary_calls[0])["usage.prompt_tokens"] == 500


async def test_api_error_marks_the_model_call_span(session, capture) -> None:
    opened, provider = session
    provider.script(fail(APIError(f"invalid api key {API_KEY}", status=401, type="auth_error")))
    finished, _ = await _run(opened, "hello")
    assert finished.status is TaskStatus.ERROR
    call = capture.one("minicode.model_call")
    assert capture.parent_of(call).name == "minicode.turn"  # type: ignore[union-attr]
    assert call.status.status_code is StatusCode.ERROR
    assert _attrs(call)["error.type"] == "APIError" and _attrs(call)["langfuse.observation.level"] == "ERROR"
    assert "latency_ms" in _attrs(call) and "usage.prompt_tokens" not in _attrs(call)
    assert [e.name for e in call.events] == ["exception"]
    assert _attrs(capture.one("minicode.turn"))["status"] == "error"


async def test_api_error_message_is_scrubbed_when_secrets_are_registered(workspace: Path) -> None:
    traced = capture_tracer(secrets=[API_KEY, LF_SECRET])
    provider = ScriptedProvider(steps=[fail(APIError(f"invalid api key {API_KEY}", status=401))])
    opened = await Session.open(config=_config(), workspace=workspace, env={"HOME": str(workspace)},
                                provider=provider, tracer=traced.tracer)
    try:
        await _run(opened, "hello")
    finally:
        opened._store.close()
    call = traced.one("minicode.model_call")
    assert call.status.description is not None and "[redacted]" in call.status.description
    assert API_KEY not in traced.all_attribute_text()


async def test_manual_compaction_is_a_root_compaction_span(session, capture) -> None:
    opened, provider = session
    provider.script(text("one"), text("two"))
    await _run(opened, BIG_TASK)
    await _run(opened, "second")
    provider.script(text("MANUAL SUMMARY"))
    events: list[AgentEvent] = []
    await opened.compact(emit=events.append)
    assert [e for e in events if isinstance(e, CompactionDone)]
    assert not capture.named("minicode.manual_compaction")
    span = capture.one("minicode.compaction")
    assert capture.parent_of(span) is None
    a = _attrs(span)
    assert a["trigger"] == "manual" and a["outcome"] == "ok" and a["session.id"] == opened.id
    assert a["model"] == "scripted-model" and a["messages_summarised"] >= 1


async def test_manual_compaction_with_nothing_to_compact_is_still_one_root_span(session, capture) -> None:
    opened, provider = session
    await opened.compact(emit=lambda event: None)
    span = capture.one("minicode.compaction")
    assert capture.parent_of(span) is None and _attrs(span)["outcome"] == "nothing_to_compact"
    assert not provider.chat_requests


# --- TracedChat: the wrapper agent/context.py uses for summary calls ----------------------


async def test_traced_chat_records_a_child_model_call(capture) -> None:
    provider = ScriptedProvider(steps=[text("summary", usage=Usage(300, 20, 320))])
    parent = capture.tracer.start_span("minicode.compaction", {"trigger": "auto"})
    traced = TracedChat(provider, capture.tracer, parent=parent, purpose="compaction")
    assert traced.model == "scripted-model"
    response = await traced.chat(ChatRequest(messages=(Message.user("hi"),)))
    parent.end()
    assert response.message.content == "summary"
    call = capture.one("minicode.model_call")
    assert capture.parent_of(call).name == "minicode.compaction"  # type: ignore[union-attr]
    a = _attrs(call)
    assert a["purpose"] == "compaction" and a["usage.total_tokens"] == 320 and a["finish_reason"] == "stop"
    assert a["request.messages"] == 1 and "summary" not in capture.all_attribute_text()


async def test_traced_chat_marks_a_failed_call_and_reraises(capture) -> None:
    provider = ScriptedProvider(steps=[fail(APIError("overloaded", status=529))])
    traced = TracedChat(provider, capture.tracer, parent=None, purpose="compaction")
    with pytest.raises(APIError):
        await traced.chat(ChatRequest(messages=(Message.user("summarise"),)))
    call = capture.one("minicode.model_call")
    assert call.status.status_code is StatusCode.ERROR and "latency_ms" in _attrs(call)
    assert call.end_time is not None
