"""Tests for ``conformance.traffic.atomic`` (the kill test itself is in test_recorder.py: it kills a
real recorder process)."""

from __future__ import annotations

from pathlib import Path

import pytest

from conformance.traffic.atomic import stale_temporaries, write_atomic


def test_a_failed_check_keeps_the_old_file(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_bytes(b"old")

    def refuse(temp: Path) -> None:
        assert temp.read_bytes() == b"new"
        raise RuntimeError("verification failed")

    with pytest.raises(RuntimeError, match="verification failed"):
        write_atomic(path, b"new", check=refuse)
    assert path.read_bytes() == b"old"
    assert [p.name for p in tmp_path.iterdir()] == ["c.yaml"]


def test_a_complete_temporary_left_by_a_kill_before_the_rename_is_cleaned_up(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    leftover = tmp_path / ".c.yaml.4242.tmp"
    leftover.write_bytes(b"complete but never renamed")
    assert stale_temporaries(path) == [leftover]
    write_atomic(path, b"new")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.yaml"]
    assert path.read_bytes() == b"new"
