"""The live acceptance suite's switch, endpoint and report.

Off unless ``MINICODE_TEST_LLM=1``: then the scenarios run against the configured endpoint
(``MINICODE_LIVE_CONFIG=PATH``, else the search of the repository root: ``config/config.toml``,
then the per-user file), each result is recorded, the tokens spent are printed at the end of
the run and ``tests/live/report.md`` (git-ignored) is written. The verdict tests
(``test_verdicts.py``) always run: they need no model.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator

import pytest

from tests.live.harness import Endpoint, Verdict

LIVE = os.environ.get("MINICODE_TEST_LLM") == "1"
SKIP_REASON = ("live acceptance suite: set MINICODE_TEST_LLM=1 to run it against the configured endpoint "
               "(it spends tokens; see docs/testing.md)")
REPO = Path(__file__).resolve().parents[2]
REPORT = Path(__file__).with_name("report.md")


@dataclass
class Entry:
    name: str
    title: str
    verdict: Verdict
    tokens: int | None
    seconds: float


@dataclass
class Ledger:
    model: str = ""
    endpoint: str = ""
    entries: list[Entry] = field(default_factory=list)
    started: float = field(default_factory=time.time)

    def record(self, name: str, title: str, verdict: Verdict, tokens: int | None, seconds: float) -> None:
        self.entries.append(Entry(name, title, verdict, tokens, seconds))

    @property
    def tokens(self) -> int:
        return sum(e.tokens or 0 for e in self.entries)

    def summary(self) -> str:
        passed = sum(e.verdict.passed for e in self.entries)
        reported = any(e.tokens is not None for e in self.entries)
        spent = f"{self.tokens:,} tokens spent" if reported else "tokens not reported by the server"
        return f"live acceptance: {passed}/{len(self.entries)} scenarios passed, {spent} (report: {REPORT.relative_to(REPO)})"

    def markdown(self) -> str:
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(self.started))
        lines = [f"# Live acceptance report — {when}", "",
                 f"Endpoint `{self.endpoint}`, model `{self.model}`.", "", self.summary(), "",
                 "| scenario | verdict | tokens | seconds | why / notes |", "|---|---|---:|---:|---|"]
        for e in self.entries:
            why = "; ".join(e.verdict.reasons or e.verdict.notes).replace("|", "\\|").replace("\n", " ")
            tokens = f"{e.tokens:,}" if e.tokens is not None else "not reported"
            lines.append(f"| {e.title} | {'pass' if e.verdict.passed else '**fail**'} | {tokens} | "
                         f"{e.seconds:.0f} | {why} |")
        return "\n".join(lines) + "\n"


_LEDGER = Ledger()


@pytest.fixture(scope="session")
def live_config() -> Iterator[object]:
    """The configured endpoint's config (ConfigError fails loudly: the run was asked for)."""
    from minicode.config import load_config

    explicit = os.environ.get("MINICODE_LIVE_CONFIG")
    config = load_config(REPO, Path(explicit).resolve() if explicit else None, dict(os.environ))
    _LEDGER.model, _LEDGER.endpoint = config.model.name, config.model.base_url
    yield config
    if _LEDGER.entries:
        REPORT.write_text(_LEDGER.markdown(), encoding="utf-8")


@pytest.fixture(scope="session")
def live_endpoint(live_config: object) -> Endpoint:
    path = getattr(live_config, "path")
    return Endpoint(Path(path).resolve(), dict(os.environ))


@pytest.fixture
def ledger() -> Ledger:
    return _LEDGER


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if _LEDGER.entries:
        terminalreporter.write_sep("=", _LEDGER.summary())
