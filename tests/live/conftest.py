"""The live acceptance suite's switch, endpoint and report.

Off unless ``MINICODE_TEST_LLM=1``: then the scenarios run against the endpoint of
``MINICODE_LIVE_BASE_URL``/``_MODEL`` (``tests/live/endpoints.py``), else of
``MINICODE_LIVE_CONFIG=PATH``, else of the search of the repository root (``config/config.toml``,
then the per-user file); the compaction acceptance's judge is ``MINICODE_LIVE_JUDGE_BASE_URL``/
``_MODEL`` (none: that acceptance is skipped). Each result is recorded, the tokens spent are
printed at the end of the run and ``tests/live/report.md`` (git-ignored) is written. The verdict
tests (``test_verdicts.py``) always run: they need no model.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator

import pytest

from tests.live.endpoints import JUDGE, UNDER_TEST, load_endpoint
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
    skipped: list[tuple[str, str]] = field(default_factory=list)
    """(title, why) of what could not be judged in this run."""
    started: float = field(default_factory=time.time)

    def record(self, name: str, title: str, verdict: Verdict, tokens: int | None, seconds: float) -> None:
        self.entries.append(Entry(name, title, verdict, tokens, seconds))

    def skip(self, title: str, why: str) -> None:
        self.skipped.append((title, why))

    @property
    def tokens(self) -> int:
        return sum(e.tokens or 0 for e in self.entries)

    def summary(self) -> str:
        passed = sum(e.verdict.passed for e in self.entries)
        reported = any(e.tokens is not None for e in self.entries)
        spent = f"{self.tokens:,} tokens spent" if reported else "tokens not reported by the server"
        skipped = f", {len(self.skipped)} skipped" if self.skipped else ""
        return (f"live acceptance: {passed}/{len(self.entries)} scenarios passed{skipped}, {spent} "
                f"(report: {REPORT.relative_to(REPO)})")

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
        lines += [f"| {title} | skipped | | | {why} |" for title, why in self.skipped]
        return "\n".join(lines) + "\n"


_LEDGER = Ledger()


@pytest.fixture(scope="session")
def live_config(tmp_path_factory: pytest.TempPathFactory) -> Iterator[object]:
    """The endpoint's config (ConfigError or EndpointError fails loudly: the run was asked for)."""
    from minicode.config import load_config

    env = dict(os.environ)
    config = load_endpoint(UNDER_TEST, env, tmp_path_factory.mktemp("live-endpoint"))
    if config is None:
        explicit = env.get("MINICODE_LIVE_CONFIG")
        config = load_config(REPO, Path(explicit).resolve() if explicit else None, env)
    _LEDGER.model, _LEDGER.endpoint = config.model.name, config.model.base_url
    yield config
    if _LEDGER.entries or _LEDGER.skipped:
        REPORT.write_text(_LEDGER.markdown(), encoding="utf-8")


@pytest.fixture(scope="session")
def live_endpoint(live_config: object) -> Endpoint:
    path = getattr(live_config, "path")
    return Endpoint(Path(path).resolve(), dict(os.environ))


@pytest.fixture(scope="session")
def live_judge(tmp_path_factory: pytest.TempPathFactory) -> object | None:
    """The compaction acceptance's judge (a config), or None when no judge endpoint is named."""
    return load_endpoint(JUDGE, dict(os.environ), tmp_path_factory.mktemp("live-judge"))


@pytest.fixture
def ledger() -> Ledger:
    return _LEDGER


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if _LEDGER.entries or _LEDGER.skipped:
        terminalreporter.write_sep("=", _LEDGER.summary())
