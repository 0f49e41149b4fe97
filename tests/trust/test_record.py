"""trust.record: the one way a confirmation is kept outside the workspace (config and rules trust)."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest

from minicode.trust.record import TrustRecord


def test_a_remembered_digest_is_read_back_from_a_private_file(tmp_path: Path) -> None:
    subject = tmp_path / "ws" / "config.toml"
    record = TrustRecord.for_home(str(tmp_path / "home"), "trusted-config", subject, ("config", str(subject)))
    assert record is not None and record.digest() is None  # nothing confirmed yet
    record.remember("abc123")
    assert record.digest() == "abc123"
    assert json.loads(record.file.read_text()) == {"config": str(subject), "sha256": "abc123"}
    assert record.file.parent == tmp_path / "home" / ".minicode" / "trusted-config"
    assert stat.S_IMODE(record.file.stat().st_mode) == 0o600
    assert stat.S_IMODE(record.directory.stat().st_mode) == 0o700


def test_the_same_path_through_a_link_is_the_same_record(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "real")
    one = TrustRecord(tmp_path / "records", tmp_path / "real", ("workspace", "x"))
    two = TrustRecord(tmp_path / "records", tmp_path / "link", ("workspace", "x"))
    assert one.file == two.file


@pytest.mark.parametrize("content", [b"not json", b'["sha256"]', b'{"sha256": 12}', b"\xff\xfe", b"[" * 100_000])
def test_a_damaged_record_is_no_confirmation(tmp_path: Path, content: bytes) -> None:
    record = TrustRecord(tmp_path / "records", tmp_path / "ws", ("workspace", "ws"))
    record.directory.mkdir()
    record.file.write_bytes(content)
    assert record.digest() is None


def test_without_an_absolute_home_nothing_is_kept(tmp_path: Path) -> None:
    for home in (None, "", "relative/home"):
        assert TrustRecord.for_home(home, "trusted-rules", tmp_path, ("workspace", "ws")) is None


def test_a_record_that_cannot_be_written_raises_oserror(tmp_path: Path) -> None:
    blocker = tmp_path / "home"
    blocker.write_text("a file where the directory would go")
    record = TrustRecord(blocker / "records", tmp_path / "ws", ("workspace", "ws"))
    with pytest.raises(OSError):
        record.remember("abc")
    assert record.digest() is None
