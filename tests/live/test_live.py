"""The live acceptance suite: every scenario against the configured endpoint (opt-in).

``MINICODE_TEST_LLM=1 .venv/bin/pytest tests/live`` — without the variable these skip.
Each scenario drives the real ``minicode`` executable (the compaction acceptance calls the
shared compaction function with the configured provider, and a judge endpoint of its own
checks the summaries; without one it is skipped) and its verdict decides.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from minicode.provider.factory import create_provider
from tests.live.compaction import compaction_verdict, run_compaction_acceptance
from tests.live.conftest import LIVE, SKIP_REASON, Ledger
from tests.live.endpoints import NO_JUDGE
from tests.live.harness import Endpoint, drive
from tests.live.scenarios import SCENARIOS, Scenario

pytestmark = pytest.mark.skipif(not LIVE, reason=SKIP_REASON)
COMPACTION_TITLE = "three compactions keep the facts; three bad summaries rejected"


@pytest.mark.parametrize("scenario", SCENARIOS, ids=[s.name for s in SCENARIOS])
def test_scenario(scenario: Scenario, live_endpoint: Endpoint, ledger: Ledger, tmp_path: Path) -> None:
    outcome = drive(scenario, tmp_path / "workspace", live_endpoint)
    verdict = scenario.verdict(outcome)
    ledger.record(scenario.name, scenario.title, verdict, outcome.tokens, outcome.seconds)
    assert verdict.passed, "\n".join([*verdict.reasons, "--- stderr ---", outcome.stderr[-3000:]])


async def test_compaction_acceptance(live_config: object, live_judge: object | None, ledger: Ledger) -> None:
    if live_judge is None:  # the model judging its own summaries: a small one misquotes them, a pass means nothing
        ledger.skip(COMPACTION_TITLE, NO_JUDGE)
        pytest.skip(NO_JUDGE)
    provider = create_provider(getattr(live_config, "model"))
    judge = create_provider(getattr(live_judge, "model"))
    try:
        outcome = await run_compaction_acceptance(provider, judge)
    finally:
        await provider.aclose()
        await judge.aclose()
    verdict = compaction_verdict(outcome)
    ledger.record("compaction", COMPACTION_TITLE, verdict, outcome.tokens or None, outcome.seconds)
    assert verdict.passed, "\n".join(verdict.reasons)
