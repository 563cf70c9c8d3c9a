"""Tests for ``conformance.emulator._coverage``: the bundled scenarios use every quirk the emulator
knows and name no other, check every reply finish reason, and cover every listed edge case of
``wire-formats.md`` §10 on each of its wires; ``scenarios/README.md`` holds the generated table.
Each coverage test is also run on the bundled scenarios minus the ones that cover a case, and must
then fail: that is what keeps a removed scenario from going unnoticed."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import pytest

from conformance.emulator import ENCODERS
from conformance.emulator._coverage import (
    CITED_NOT_LISTED,
    EDGE_CASES,
    PROVIDER_FINISH,
    REPLY_FINISH_REASONS,
    TABLE_BEGIN,
    TABLE_END,
    UNCOVERED_FINISH,
    UNEMULATED_FINISH,
    WIRES,
    edge_case_table,
    edge_case_uses,
    finish_spelling,
    finish_uses,
    known_quirks,
    provider_finish_uses,
    quirk_uses,
    unknown_quirks,
    update_readme,
)
from conformance.emulator._server import ERROR_QUIRKS, SERVER_QUIRKS
from conformance.scenarios.loader import default_scenarios_dir, load_scenarios
from conformance.scenarios.values import Reply, Scenario, ScriptedCall

SCENARIOS_DIR = default_scenarios_dir()
README = SCENARIOS_DIR / "README.md"
SCHEMA = Path(__file__).resolve().parents[2] / "conformance" / "schemas" / "scenario.schema.json"


@pytest.fixture(scope="module")
def bundled() -> tuple[Scenario, ...]:
    loaded = load_scenarios([SCENARIOS_DIR], root=SCENARIOS_DIR)
    assert not loaded.problems, loaded.problems
    return loaded.scenarios


def without(scenarios: Sequence[Scenario], ids: Sequence[str]) -> tuple[Scenario, ...]:
    return tuple(s for s in scenarios if s.id not in ids)


# --- quirks ---------------------------------------------------------------------------------


def test_known_quirks_are_each_wires_own_plus_the_shared_ones() -> None:
    quirks = known_quirks()
    assert set(quirks) == set(ENCODERS)
    for wire, encoder in ENCODERS.items():
        assert quirks[wire] == encoder.KNOWN_QUIRKS | ERROR_QUIRKS.get(wire, frozenset()) | SERVER_QUIRKS


def test_every_known_quirk_is_used_by_a_bundled_scenario(bundled: tuple[Scenario, ...]) -> None:
    unused = [quirk for quirk, ids in quirk_uses(bundled).items() if not ids]
    assert not unused, f"quirk(s) {unused} used by no scenario under {SCENARIOS_DIR}: add one (docs/scenarios.md)"


def test_every_quirk_a_bundled_scenario_names_exists(bundled: tuple[Scenario, ...]) -> None:
    assert unknown_quirks(bundled) == []


@pytest.mark.parametrize("quirk", sorted(set().union(*known_quirks().values())))
def test_removing_a_quirks_scenarios_is_noticed(bundled: tuple[Scenario, ...], quirk: str) -> None:
    users = quirk_uses(bundled)[quirk]
    assert users
    assert quirk_uses(without(bundled, users))[quirk] == ()


def test_a_misspelled_quirk_is_reported_with_its_scenario_and_turn(bundled: tuple[Scenario, ...]) -> None:
    scenario = next(s for s in bundled if s.id == "streaming/anthropic_ping")
    turn = scenario.turns[0]
    broken = replace(scenario, turns=(replace(turn, reply=replace(turn.reply, quirks=("pings",))),))
    assert unknown_quirks([broken]) == [("streaming/anthropic_ping", 0, "pings")]
    assert "pings" in quirk_uses([broken])


# --- finish reasons -------------------------------------------------------------------------


def test_reply_finish_reasons_are_the_scenario_schemas() -> None:
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    found = []

    def walk(node: object) -> None:
        if isinstance(node, dict):
            if "finish" in node.get("properties", {}):
                found.append(tuple(node["properties"]["finish"]["enum"]))
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(schema)
    assert found == [REPLY_FINISH_REASONS]


def test_every_reply_finish_reason_has_a_scenario_checking_it(bundled: tuple[Scenario, ...]) -> None:
    uses = finish_uses(bundled)
    missing = sorted(r for r, ids in uses.items() if not ids)
    assert missing == sorted(UNCOVERED_FINISH), (
        f"finish reasons without a scenario: {missing}; documented gaps: {sorted(UNCOVERED_FINISH)} "
        "(add a scenario, or remove the reason from UNCOVERED_FINISH once one exists)"
    )


@pytest.mark.parametrize("reason", [r for r in REPLY_FINISH_REASONS if r not in UNCOVERED_FINISH])
def test_removing_a_finish_reasons_scenarios_is_noticed(bundled: tuple[Scenario, ...], reason: str) -> None:
    assert finish_uses(without(bundled, finish_uses(bundled)[reason]))[reason] == ()


def test_a_fault_turn_or_an_unchecked_finish_does_not_count(bundled: tuple[Scenario, ...]) -> None:
    scenario = next(s for s in bundled if s.id == "basic/max_tokens_length")
    turns = tuple(replace(t, expect=replace(t.expect, finish_reason=None)) for t in scenario.turns)
    unchecked = replace(scenario, turns=turns)
    assert finish_uses([unchecked])["length"] == ()
    assert finish_uses([scenario])["length"] == ("basic/max_tokens_length",)


@pytest.mark.parametrize("wire", WIRES)
def test_the_emulator_speaks_each_wires_own_finish_vocabulary(wire: str) -> None:
    call = ScriptedCall(name="get_weather", arguments={"city": "Oslo"}, arguments_raw='{"city":"Oslo"}')
    sent = {
        finish_spelling(wire, Reply(text="t", tool_calls=calls, finish=reason))
        for reason in REPLY_FINISH_REASONS
        for calls in ((), (call,))
    }
    assert sent <= set(PROVIDER_FINISH[wire])


@pytest.mark.parametrize("wire", WIRES)
def test_every_finish_spelling_of_a_wire_has_a_scenario_or_a_stated_reason(
    bundled: tuple[Scenario, ...], wire: str
) -> None:
    cells = provider_finish_uses(bundled)[wire]
    assert set(cells) == set(PROVIDER_FINISH[wire]), (
        "a scenario made the emulator send a spelling outside the vocabulary"
    )
    missing = sorted(spelling for spelling, ids in cells.items() if not ids)
    assert missing == sorted(UNEMULATED_FINISH.get(wire, {})), (
        f"{wire}: finish reasons without a scenario: {missing}; stated: {sorted(UNEMULATED_FINISH.get(wire, {}))}"
    )


@pytest.mark.parametrize(
    ("wire", "spelling"),
    [(w, s) for w in WIRES for s in PROVIDER_FINISH[w] if s not in UNEMULATED_FINISH.get(w, {})],
)
def test_removing_a_finish_spellings_scenarios_is_noticed(
    bundled: tuple[Scenario, ...], wire: str, spelling: str
) -> None:
    users = provider_finish_uses(bundled)[wire][spelling]
    assert users
    assert provider_finish_uses(without(bundled, users))[wire][spelling] == ()


# --- §10 edge cases -------------------------------------------------------------------------


def test_every_listed_edge_case_has_a_scenario_on_each_of_its_wires(bundled: tuple[Scenario, ...]) -> None:
    uses = edge_case_uses(bundled)
    empty = [(case, wire) for case, cells in uses.items() for wire, ids in cells.items() if not ids]
    assert empty == [], f"(edge case, wire) without a scenario: {empty}; add one that cites the E-id in its source"
    assert all(set(wires) <= set(WIRES) for _, wires in EDGE_CASES.values())


def test_every_edge_case_a_scenario_cites_is_listed(bundled: tuple[Scenario, ...]) -> None:
    cited = {case for s in bundled for case in re.findall(r"\bE\d+\b", s.source)}
    assert cited - set(EDGE_CASES) == set(CITED_NOT_LISTED), (
        "an E-id cited by a scenario is neither in EDGE_CASES nor in CITED_NOT_LISTED"
    )


@pytest.mark.parametrize("case", list(EDGE_CASES))
def test_removing_an_edge_cases_scenarios_is_noticed(bundled: tuple[Scenario, ...], case: str) -> None:
    cells = edge_case_uses(bundled)[case]
    users = sorted({i for ids in cells.values() for i in ids})
    assert all(ids == () for ids in edge_case_uses(without(bundled, users))[case].values())


def test_a_quirked_scenario_covers_its_case_only_where_the_quirk_is_known(bundled: tuple[Scenario, ...]) -> None:
    ping = [s for s in bundled if s.id == "streaming/anthropic_ping"]
    retitled = {case: [w for w, ids in cells.items() if ids] for case, cells in edge_case_uses(ping).items()}
    assert retitled["E9"] == ["anthropic"]


def test_a_scenario_limited_by_wires_covers_only_the_wires_it_lists(bundled: tuple[Scenario, ...]) -> None:
    length = next(s for s in bundled if s.id == "basic/max_tokens_length")
    finishes = provider_finish_uses([replace(length, wires=("anthropic",))])
    assert [w for w in WIRES if any(finishes[w].values())] == ["anthropic"]
    assert finishes["anthropic"]["max_tokens"] == ("basic/max_tokens_length",)
    multibyte = next(s for s in bundled if s.id == "streaming/multibyte_text")
    cells = edge_case_uses([replace(multibyte, wires=("gemini", "ollama"))])["E1"]
    assert [w for w, ids in cells.items() if ids] == ["gemini", "ollama"]


# --- the README table -------------------------------------------------------------------------


def test_the_readme_table_is_the_generated_one(bundled: tuple[Scenario, ...]) -> None:
    text = README.read_text(encoding="utf-8")
    assert TABLE_BEGIN in text and TABLE_END in text
    assert update_readme(text, edge_case_table(bundled)) == text, (
        f"{README} is stale: run `python -m conformance.emulator._coverage {README}`"
    )


def test_the_table_marks_a_missing_cell_and_the_readme_update_replaces_only_the_table(
    bundled: tuple[Scenario, ...],
) -> None:
    table = edge_case_table(without(bundled, ["streaming/anthropic_ping"]))
    row = next(line for line in table.splitlines() if line.startswith("| E9 "))
    assert row.split(" | ")[3] == "**none**"
    text = "intro\n\n" + TABLE_BEGIN + "\nold\n" + TABLE_END + "\n\nafter\n"
    assert update_readme(text, table) == "intro\n\n" + table + "\n\nafter\n"
    assert update_readme("intro\n", table) == "intro\n\n" + table + "\n"
