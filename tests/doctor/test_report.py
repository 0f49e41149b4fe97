"""The report: verdict, exit code, the table and the JSON object."""

from __future__ import annotations

import json

from minicode.doctor.report import Check, Report, Status


def report(*statuses: Status, total: int | None = 120) -> Report:
    checks = tuple(Check(f"c{i}", s, f"summary {i}", "do this" if s is not Status.OK else None)
                   for i, s in enumerate(statuses))
    return Report("http://x/v1", "m", checks, requests=2, prompt_tokens=100 if total else None,
                  completion_tokens=20 if total else None, total_tokens=total)


def test_usable_means_something_ok_and_nothing_failed() -> None:
    assert report(Status.OK, Status.WARNING).usable
    assert report(Status.OK, Status.WARNING).exit_code == 0
    assert report(Status.OK, Status.WARNING).verdict() == "usable, 1 warning"
    failed = report(Status.OK, Status.FAILED, Status.SKIPPED)
    assert not failed.usable and failed.exit_code == 1 and failed.verdict() == "not usable: 1 check failed"
    assert not report(Status.SKIPPED).usable  # nothing was shown to work


def test_table_lines_with_fixes_under_them_and_the_cost() -> None:
    text = report(Status.OK, Status.WARNING).table()
    lines = text.splitlines()
    assert lines[0] == "minicode doctor · http://x/v1 · model m"
    assert lines[2].startswith("ok       c0 ") and lines[3].startswith("warning  c1 ")
    assert lines[4].strip() == "→ do this"
    assert lines[-1] == "usable, 1 warning · 2 model requests, 120 tokens"
    assert "tokens not reported" in report(Status.OK, total=None).table()


def test_json_is_one_object_with_every_check() -> None:
    obj = json.loads(report(Status.OK, Status.FAILED).to_json())
    assert obj["usable"] is False and obj["verdict"] == "not usable: 1 check failed"
    assert [c["status"] for c in obj["checks"]] == ["ok", "failed"]
    assert obj["checks"][1]["fix"] == "do this" and obj["tokens"]["total"] == 120
    assert json.loads(report(Status.OK, total=None).to_json())["tokens"] is None


def test_a_configuration_mistake_is_the_endpoint_s_finding_and_exit_2() -> None:
    from minicode.config import Config, ModelConfig
    from minicode.doctor.diagnose import misconfigured
    from minicode.errors import ConfigError

    from pathlib import Path

    config = Config(model=ModelConfig("https://x/v1", "m", "k"), path=Path("config.toml"))
    made = misconfigured(config, ConfigError("SSL_CERT_FILE is set to /nope, which does not exist; unset it"))
    assert made.exit_code == 2 and not made.usable and made.requests == 0
    assert made.checks[0].name == "endpoint" and made.checks[0].status is Status.FAILED
    assert made.checks[0].summary.startswith("SSL_CERT_FILE is set to /nope")
    assert {c.status for c in made.checks[1:]} == {Status.SKIPPED}
    assert report(Status.OK).exit_code == 0  # an ordinary report is not misconfigured
