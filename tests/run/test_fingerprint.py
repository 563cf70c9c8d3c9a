"""The suite's fingerprint: the scenario set, the check ids and their version and the equivalence
table; never the selection."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from conformance.checks.equivalences import bundled_table, merged, parse_table
from conformance.run import fingerprint
from conformance.run.fingerprint import CHECK_IDS, CHECK_VERSION, suite_fingerprint, suite_info
from conformance.scenarios.loader import load_scenarios

ROOT = Path(__file__).resolve().parents[2]
HEADER = "## Equivalences\n\n| id | wire | path | value | when | why | source |\n|---|---|---|---|---|---|---|\n"


def test_the_fingerprint_describes_the_suite_not_the_selection() -> None:
    everything = load_scenarios([ROOT / "scenarios"]).scenarios
    whole = suite_info()
    assert whole == suite_info(everything) == suite_info(everything[:3])  # bundled scenarios: the same set
    assert len(whole.fingerprint) == 64 and whole.scenarios == len(everything)
    assert whole.check_version == CHECK_VERSION and whole.equivalences == bundled_table().sha256


def test_a_scenario_of_the_users_changes_it(tmp_path: Path) -> None:
    [bundled] = [s for s in load_scenarios([ROOT / "scenarios"]).scenarios if s.id == "basic/get_time"]
    mine = dataclasses.replace(bundled, path=tmp_path / "basic" / "get_time.yaml", fingerprint="0" * 64)
    extra = dataclasses.replace(bundled, id="mine/extra", path=tmp_path / "mine" / "extra.yaml")
    base = suite_info()
    assert suite_info([mine]).fingerprint != base.fingerprint  # the same id, other content: replaces it
    assert suite_info([mine]).scenarios == base.scenarios
    assert suite_info([extra]).scenarios == base.scenarios + 1


def test_the_equivalence_table_used_changes_it() -> None:
    more = parse_table(HEADER + "| mine-a | * | `$.x` | `1` | | why | https://x.test |\n", "mine.md")
    table = merged([bundled_table(), more])
    assert suite_info(equivalences=table).equivalences == table.sha256 != bundled_table().sha256
    assert suite_info(equivalences=table).fingerprint != suite_info().fingerprint


@pytest.mark.parametrize("part", ["scenario", "check", "version", "table"])
def test_every_part_counts(part: str) -> None:
    scenarios = {"a/b": "1" * 64}
    checks = [c for ids in CHECK_IDS.values() for c in ids]
    base = suite_fingerprint(scenarios, checks, 1, "t")
    changed = {
        "scenario": lambda: suite_fingerprint({"a/b": "2" * 64}, checks, 1, "t"),
        "check": lambda: suite_fingerprint(scenarios, [*checks, "client.new"], 1, "t"),
        "version": lambda: suite_fingerprint(scenarios, checks, 2, "t"),
        "table": lambda: suite_fingerprint(scenarios, checks, 1, "u"),
    }[part]()
    assert changed != base
    assert suite_fingerprint(scenarios, list(reversed(checks)), 1, "t") == base  # order does not count


def test_the_check_ids_are_those_the_checks_give() -> None:
    assert tuple(CHECK_IDS) == ("translation", "roundtrip", "streaming", "recovery", "client", "server")
    assert fingerprint.CHECK_IDS is __import__("conformance.pipeline.selection", fromlist=["CHECK_IDS"]).CHECK_IDS
