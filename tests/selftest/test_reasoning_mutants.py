"""The issue 28 mutants are caught by the checks written for them (``roundtrip.reasoning_replay``,
``roundtrip.cache_prefix``) on traffic recorded here from the emulator, so the proof does not wait
for the bundled cassettes: each scenario is recorded once by the reference adapter, the reference
passes those checks on it, and each mutant replaying it fails one of them."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import pytest

from conformance.adapters import get_adapter
from conformance.run.recording import record_with_emulator
from conformance.run.runner import RunOptions
from conformance.scenarios.loader import load_scenarios
from conformance.scenarios.values import Scenario
from conformance.selftest import MUTANTS, reference_cases, run_mutant

CHECKS = ("roundtrip.reasoning", "roundtrip.reasoning_replay", "roundtrip.cache_prefix")
KILLS: Mapping[str, tuple[str, str]] = {
    "anthropic~thinking_signature_blanked": ("roundtrip.reasoning_replay", "reasoning/call_after_thinking"),
    "gemini~thought_signature_dropped": ("roundtrip.reasoning_replay", "reasoning/call_after_thinking"),
    "gemini~thought_signature_moved": ("roundtrip.reasoning_replay", "reasoning/call_after_thinking"),
    "openai_responses~reasoning_items_not_replayed": ("roundtrip.reasoning_replay", "reasoning/call_after_thinking"),
    "anthropic~foreign_reasoning_sent": ("roundtrip.reasoning_replay", "reasoning/cross_wire_history_to_anthropic"),
    "openai_chat~tool_turn_reasoning_dropped_at_user_turn": ("roundtrip.reasoning_replay", "reasoning/new_user_turn"),
    "openai_chat~tools_reordered_between_turns": ("roundtrip.cache_prefix", "multi_turn/two_rounds"),
    "openai_chat~earlier_calls_reserialised": ("roundtrip.cache_prefix", "multi_turn/two_rounds"),
}


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Scenario]]:
    wanted = {scenario for _, scenario in KILLS.values()}
    loaded = load_scenarios([])
    scenarios = {s.id: s for s in loaded.scenarios if s.id in wanted}
    assert set(scenarios) == wanted
    folder = tmp_path_factory.mktemp("reasoning-cassettes")
    for base in sorted({MUTANTS[name].base for name in KILLS}):
        results = record_with_emulator(list(scenarios.values()), [get_adapter(base)], cassette_dir=folder)
        assert all(r.status in ("recorded", "unsupported") for r in results), [(r.status, r.detail) for r in results]
    return folder, scenarios


@pytest.mark.parametrize("name", list(KILLS))
def test_the_mutant_is_killed_by_its_check_where_the_reference_passes_it(
    name: str, recorded: tuple[Path, dict[str, Scenario]]
) -> None:
    folder, scenarios = recorded
    check, scenario_id = KILLS[name]
    mutant = MUTANTS[name]
    options = RunOptions(cassette_dir=folder)
    chosen = [scenarios[scenario_id]]
    reference, _ = reference_cases(mutant.base, chosen, options)
    assert reference, "the reference ran no case"
    for case in reference.values():
        mine = {v.check: v.status for v in case.checks if v.check in CHECKS}
        assert check in mine and all(status == "pass" for status in mine.values()), (case.mode, mine)
    result = run_mutant(mutant, chosen, options, reference)
    caught = {(k.check, k.scenario, k.mode) for k in result.kills}
    assert {(check, scenario_id, "non_stream"), (check, scenario_id, "stream")} <= caught, sorted(caught)
