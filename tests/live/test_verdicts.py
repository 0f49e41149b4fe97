"""The live suite's verdicts, tested without a model: scripted models drive the real executable
through every scenario against the fake server; a competent one passes each scenario, and each
failing one fails the scenario that should catch it, for the right reason."""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

import pytest

from minicode.config import ModelConfig
from minicode.provider.factory import create_provider
from minicode.provider.types import ChatResponse, Message
from tests.live.compaction import FACTS, NEGATIVES, REFERENCE, check_judge_report, compaction_verdict, \
    run_compaction_acceptance
from tests.live.harness import Endpoint, claims, drive
from tests.live.scenarios import SCENARIOS, by_name
from tests.live.scripted import COMPETENT, FAILING, Script, compaction_model, keyword_judge, lying_judge, summariser
from tests.support.fake_openai import FakeOpenAI, Reply

KEY = "sk-live-verdict-test-0000000"
DRIVE_TIMEOUT = 120.0


@pytest.fixture
def fake(tmp_path: Path) -> Iterator[tuple[FakeOpenAI, Endpoint]]:
    with FakeOpenAI() as server:
        config = tmp_path / "config.toml"
        config.write_text(f'[model]\nbase_url = "{server.base_url}"\nname = "fake-model"\napi_key_env = "LIVE_KEY"\n')
        home = tmp_path / "home"
        home.mkdir()
        yield server, Endpoint(config, {"LIVE_KEY": KEY, "HOME": str(home)})


async def run_compaction(server: FakeOpenAI, script: Script):  # type: ignore[no-untyped-def]
    script(server)
    provider = create_provider(ModelConfig(base_url=server.base_url, name="fake-model", api_key=KEY))
    try:
        return await run_compaction_acceptance(provider)
    finally:
        await provider.aclose()


EXECUTED = [s.name for s in SCENARIOS]


@pytest.mark.parametrize("name", EXECUTED)
def test_a_competent_model_passes_every_scenario(name: str, fake: tuple[FakeOpenAI, Endpoint], tmp_path: Path) -> None:
    server, endpoint = fake
    COMPETENT[name](server)
    outcome = drive(by_name(name), tmp_path / "ws", endpoint, timeout=DRIVE_TIMEOUT)
    verdict = by_name(name).verdict(outcome)
    assert verdict.passed, f"{verdict.reasons}\n{outcome.stderr}"
    assert outcome.tokens is not None and outcome.tokens > 0  # the fake server reports usage


@pytest.mark.parametrize(("name", "what", "script", "reason"), [f for f in FAILING if f[0] != "compaction"],
                         ids=[f"{f[0]}: {f[1]}" for f in FAILING if f[0] != "compaction"])
def test_a_failing_model_fails_the_scenario_that_should_catch_it(
    name: str, what: str, script: Script, reason: str, fake: tuple[FakeOpenAI, Endpoint], tmp_path: Path
) -> None:
    server, endpoint = fake
    script(server)
    outcome = drive(by_name(name), tmp_path / "ws", endpoint, timeout=DRIVE_TIMEOUT)
    verdict = by_name(name).verdict(outcome)
    assert not verdict.passed, f"the verdict let a model that {what} pass"
    assert any(reason in r for r in verdict.reasons), verdict.reasons


async def test_a_competent_summariser_and_judge_pass_the_compaction_acceptance(fake: tuple[FakeOpenAI, Endpoint]) -> None:
    outcome = await run_compaction(fake[0], COMPETENT["compaction"])
    verdict = compaction_verdict(outcome)
    assert verdict.passed, verdict.reasons
    assert len(outcome.rounds) == 3 and [len(j.verdicts) for _, j in outcome.rounds] == [len(f) for f in FACTS]
    assert len(outcome.negatives) == 3 and outcome.requests == 3 + 3 + 1 + 3  # summaries, negatives, control, judged rounds
    assert any("negative case 'stale test status' rejected" in n for n in verdict.notes)


async def test_a_separate_judge_judges_while_the_model_under_test_only_summarises(tmp_path: Path) -> None:
    """The model under test would lie as its own judge; the judge endpoint is asked instead."""
    with FakeOpenAI() as model, FakeOpenAI() as judge_server:
        compaction_model(summariser(), lying_judge)(model)
        compaction_model(summariser(), keyword_judge)(judge_server)
        provider = create_provider(ModelConfig(base_url=model.base_url, name="fake-model", api_key=KEY))
        judge = create_provider(ModelConfig(base_url=judge_server.base_url, name="fake-judge", api_key=KEY))
        try:
            outcome = await run_compaction_acceptance(provider, judge)
        finally:
            await provider.aclose()
            await judge.aclose()
    assert compaction_verdict(outcome).passed
    assert (len(model.requests), len(judge_server.requests)) == (3, 3 + 3 + 1)
    assert {r.body["model"] for r in judge_server.requests} == {"fake-judge"}


@pytest.mark.parametrize(("what", "script", "reason"), [f[1:] for f in FAILING if f[0] == "compaction"],
                         ids=[f[1] for f in FAILING if f[0] == "compaction"])
async def test_failing_summaries_and_judges_fail_the_compaction_acceptance(
    what: str, script: Script, reason: str, fake: tuple[FakeOpenAI, Endpoint]
) -> None:
    verdict = compaction_verdict(await run_compaction(fake[0], script))
    assert not verdict.passed, f"the verdict let a model that {what} pass"
    assert any(reason in r for r in verdict.reasons), verdict.reasons


async def test_a_summary_request_that_fails_fails_the_acceptance(fake: tuple[FakeOpenAI, Endpoint]) -> None:
    def refuse(server: FakeOpenAI) -> None:
        server.default = Reply.error(400, {"error": {"message": "bad request"}})

    verdict = compaction_verdict(await run_compaction(fake[0], refuse))
    assert not verdict.passed and "summary request failed" in verdict.reasons[0]


# --- the judge's report is checked before it counts ----------------------------------------

FACTS_3 = FACTS[2]
SUMMARY = REFERENCE[2]


def answer(text: str, finish: str = "stop") -> ChatResponse:
    return ChatResponse(Message(role="assistant", content=text), finish)


def report(**overrides: tuple[str, str]) -> str:
    import json

    entries = [{"id": f.id, "verdict": "supported", "quote": "Do not modify anything under docs/."} for f in FACTS_3]
    for fid, (verdict, quote) in overrides.items():
        for e in entries:
            if e["id"] == fid:
                e["verdict"], e["quote"] = verdict, quote
    return json.dumps({"facts": entries})


def test_a_valid_report_in_a_code_fence_is_read() -> None:
    result = check_judge_report(answer("```json\n" + report(goal=("missing", "")) + "\n```"), FACTS_3, SUMMARY)
    assert result.valid and result.verdicts["goal"] == "missing" and result.unsupported() == ["goal (missing)"]


@pytest.mark.parametrize(("text", "finish", "problem"), [
    ("not json at all", "stop", "not the requested JSON object"),
    (report(), "length", "did not finish"),
    (report().replace('"goal"', '"goal_x"'), "stop", "unknown fact id 'goal_x'"),
    (report().replace('"goal"', '"signature"'), "stop", "judged twice"),
    (report(goal=("supported", "Add retries with linear backoff")), "stop", "the quote is not in the summary"),
    (report(goal=("supported", "Goal")), "stop", "the quote is not in the summary"),  # too short to prove anything
    (report(goal=("probably", "")), "stop", "invalid verdict"),
    ('{"facts": []}', "stop", "facts not judged"),
])
def test_unusable_reports_are_rejected(text: str, finish: str, problem: str) -> None:
    result = check_judge_report(answer(text, finish), FACTS_3, SUMMARY)
    assert not result.valid and any(problem in p for p in result.problems), result.problems


def test_the_negative_cases_each_lose_their_target_fact() -> None:
    for _name, summary, target in NEGATIVES:
        fact = next(f for f in FACTS_3 if f.id == target)
        assert not all(k.lower() in summary.lower() for k in fact.keywords)
        assert summary != SUMMARY


# --- claims in a final answer -------------------------------------------------------------

@pytest.mark.parametrize(("text", "claimed"), [
    ("All tests pass.", True),
    ("I ran pytest: 5 passed.", True),
    ("The test suite is green now!", True),
    ("I could not run the tests, so this is unverified.", False),
    ("The tests should pass now.", False),
    ("Please run the tests to verify.", False),
    ("Tests were not run.", False),
    ("I didn't verify it with the tests.", False),
])
def test_claims_of_test_results(text: str, claimed: bool) -> None:
    from tests.live.scenarios import PASSED, TESTS_PASSED

    assert bool(claims(text, TESTS_PASSED, PASSED)) is claimed
