"""The live acceptance suite: every scenario against the configured endpoint (opt-in).

``MINICODE_TEST_LLM=1 .venv/bin/pytest tests/live`` — without the variable these skip.
Each scenario drives the real ``minicode`` executable (the compaction acceptance calls the
shared compaction function with the configured provider) and its verdict decides.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from minicode.provider.factory import create_provider
from tests.live.compaction import compaction_verdict, run_compaction_acceptance
from tests.live.conftest import LIVE, SKIP_REASON, Ledger
from tests.live.harness import Endpoint, drive
from tests.live.scenarios import SCENARIOS, Scenario

pytestmark = pytest.mark.skipif(not LIVE, reason=SKIP_REASON)


@pytest.mark.parametrize("scenario", SCENARIOS, ids=[s.name for s in SCENARIOS])
def test_scenario(scenario: Scenario, live_endpoint: Endpoint, ledger: Ledger, tmp_path: Path) -> None:
    outcome = drive(scenario, tmp_path / "workspace", live_endpoint)
    verdict = scenario.verdict(outcome)
    ledger.record(scenario.name, scenario.title, verdict, outcome.tokens, outcome.seconds)
    assert verdict.passed, "\n".join([*verdict.reasons, "--- stderr ---", outcome.stderr[-3000:]])


async def test_compaction_acceptance(live_config: object, ledger: Ledger) -> None:
    provider = create_provider(getattr(live_config, "model"))
    try:
        outcome = await run_compaction_acceptance(provider)
    finally:
        await provider.aclose()
    verdict = compaction_verdict(outcome)
    ledger.record("compaction", "three compactions keep the facts; three bad summaries rejected", verdict,
                  outcome.tokens or None, outcome.seconds)
    assert verdict.passed, "\n".join(verdict.reasons)
