"""``scripts/secret_leaks.py``: the leak count is zero for this checkout and finds the split-chunk
leak in a scrubber that scrubs each chunk on its own; the timing compares two scrubber classes."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import pytest
from _secrets import SECRETS, WIRES

from conformance.traffic.scrub import Scrubber

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))

import secret_leaks


def test_this_checkout_leaks_nothing_for_one_wire_and_kind(tmp_path: Path) -> None:
    wire = next(w for w in WIRES if w.name == "ollama")
    secret = next(s for s in SECRETS if s.kind == "google")
    total, found = secret_leaks.leaking(tmp_path, [wire], [secret])
    assert total > 100 and found == []


def test_a_chunk_by_chunk_scrubber_is_counted_as_leaking(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    class PerChunk(Scrubber):
        def pieces(self, pieces: object) -> list[str]:
            return [self.text(p) for p in pieces]  # type: ignore[attr-defined]

    monkeypatch.setattr("conformance.traffic.recorder.Scrubber", PerChunk)
    wire = next(w for w in WIRES if w.name == "anthropic")
    secret = next(s for s in SECRETS if s.kind == "anthropic")
    _, found = secret_leaks.leaking(tmp_path, [wire], [secret])
    channels = {channel for *_, channel in found}
    assert "body, cut inside the secret" in channels and "headers" in channels  # chunks and repeated values
    assert "url" not in channels  # URLs are not scrubbed in pieces
    inside = {label for _, label, _, channel in found if channel == "body, cut inside the secret"}
    assert len(inside) > len(secret.value) // 2


def test_timing_reports_both_ways_and_the_old_scrubber_loads(tmp_path: Path) -> None:
    separate, joined, double = secret_leaks.timing(Scrubber, megabytes=1)
    assert all(math.isfinite(t) and t > 0 for t in (separate, joined, double))
    checkout = Path(__file__).resolve().parents[2]
    old = secret_leaks._old_scrubber(checkout)
    assert old is not Scrubber and old(["abcd"]).text("x abcd") == "x REDACTED"
