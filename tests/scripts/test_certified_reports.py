"""Committed certifications cannot go stale (issue 24, point 6): every ``docs/certified/**/report.json``
was made by the suite as it is now (its fingerprint: scenarios, checks and their version, the
equivalence table) and names the model asked for on each wire. When a scenario, a check or the
table changes, this fails until the reports are made again with ``python scripts/certify_libraries.py``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conformance.run.fingerprint import suite_info

ROOT = Path(__file__).resolve().parents[2]
CERTIFIED = ROOT / "docs" / "certified"
REGENERATE = "python scripts/certify_libraries.py"
REPORTS = sorted(CERTIFIED.rglob("report.json"))


def test_there_are_committed_reports() -> None:
    assert REPORTS, f"no report under {CERTIFIED}: make them with `{REGENERATE}`"


@pytest.mark.parametrize("path", REPORTS, ids=[str(p.parent.relative_to(CERTIFIED)) for p in REPORTS])
def test_each_committed_report_was_made_by_this_suite_and_names_its_models(path: Path) -> None:
    report = json.loads(path.read_text(encoding="utf-8"))
    where = path.relative_to(ROOT)
    current = suite_info()
    made = (report.get("suite") or {}).get("fingerprint")
    assert made == current.fingerprint, (
        f"{where} was made by "
        + (f"another suite (fingerprint {made[:12]})" if made else "a suite before reports carried a fingerprint")
        + f", not this one ({current.fingerprint[:12]}: its scenarios, checks or equivalences changed since);"
        f" regenerate every committed report with `{REGENERATE}`"
    )
    unnamed = [a["name"] for a in report["adapters"] if not a.get("model")]
    assert not unnamed, f"{where}: no model named for {', '.join(unnamed)}; regenerate it with `{REGENERATE}`"
