"""``Emulator.play_scenarios``: each request is answered from the scenario it belongs to, read from
the request (``conformance.emulator._scenario_book``), at the turn its history says; the collisions
over the bundled scenarios a server is asked are the figures docs/emulator.md gives.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import replace

import httpx
import pytest

from conformance.adapters import get_adapter
from conformance.emulator import DEFAULT_REPLY, Emulator
from conformance.emulator._scenario_book import Ambiguous, Found, ScenarioBook, scenario_inputs, server_playable
from conformance.model import Message
from conformance.run.conversation import build_request, run_conversation
from conformance.scenarios.loader import load_scenarios
from conformance.scenarios.values import Reply, Scenario
from conformance.traffic.transport import Transport

WIRES = ("openai_chat", "openai_responses", "anthropic", "gemini", "ollama")
_PLAYED = (
    "basic/get_time",
    "basic/text_only_reply",
    "multi_turn/two_rounds",
    "multi_turn/results_then_user_text",
    "reasoning/settings_effort",
    "tool_choice/required",
)


@pytest.fixture(scope="module")
def bundled() -> list[Scenario]:
    return [s for s in load_scenarios().scenarios if server_playable(s)]


@pytest.fixture(scope="module")
def book(bundled: list[Scenario]) -> ScenarioBook:
    return ScenarioBook.of(bundled, WIRES)


def _groups(book: ScenarioBook, wire: str) -> list[list[str]]:
    keys: dict[str, list[str]] = defaultdict(list)
    for entry in book.wires[wire]:
        keys[entry.key].append(entry.scenario.id)
    return sorted(sorted(ids) for ids in keys.values() if len(ids) > 1)


def test_the_bundled_server_scenarios_and_their_one_collision(bundled: list[Scenario], book: ScenarioBook) -> None:
    """docs/emulator.md ("Playing scenarios by request") gives these figures."""
    assert len(load_scenarios().scenarios) == 129
    assert len(bundled) == 76
    assert {wire: len(book.wires[wire]) for wire in WIRES} == {
        "openai_chat": 63,
        "openai_responses": 66,
        "anthropic": 68,
        "gemini": 66,
        "ollama": 57,
    }
    for wire in WIRES:
        assert _groups(book, wire) == [["multi_turn/call_id_sent_back", "multi_turn/results_then_user_text"]]
    assert [line.split(":")[0] for line in book.skipped["ollama"]] == [
        "tool_choice/named",
        "tool_choice/parallel_disabled",
        "tool_choice/required",
    ]


def _first_request(scenario: Scenario, wire: str, **changes: object):  # type: ignore[no-untyped-def]
    adapter = get_adapter(wire)
    first = scenario.turns[0]
    request = build_request(scenario, (Message(role="user", parts=first.user),), model="m", stream=False)
    sent = adapter.request_to_wire(replace(request, **changes))  # type: ignore[arg-type]
    return adapter.request_from_wire(sent.body, path=sent.path)


def test_a_request_finds_its_scenario_whatever_model_or_max_tokens(book: ScenarioBook, bundled: list[Scenario]) -> None:
    scenario = next(s for s in bundled if s.id == "basic/get_time")
    for wire in WIRES:
        found = book.find(wire, _first_request(scenario, wire, model="other", max_tokens=7), 0)
        assert found == Found(scenario=scenario)


def test_an_unknown_request_finds_nothing(book: ScenarioBook, bundled: list[Scenario]) -> None:
    scenario = next(s for s in bundled if s.id == "basic/get_time")
    first = scenario.turns[0]
    other = replace(scenario, system="another system prompt")
    request = build_request(other, (Message(role="user", parts=first.user),), model="m", stream=False)
    adapter = get_adapter("anthropic")
    sent = adapter.request_to_wire(request)
    assert book.find("anthropic", adapter.request_from_wire(sent.body, path=sent.path), 0) is None


def test_equal_first_requests_are_told_apart_later_or_named(book: ScenarioBook, bundled: list[Scenario]) -> None:
    a = next(s for s in bundled if s.id == "multi_turn/call_id_sent_back")
    b = next(s for s in bundled if s.id == "multi_turn/results_then_user_text")
    assert scenario_inputs(a, 1) == ["19°C, sunny, light breeze"]
    assert scenario_inputs(b, 1) == ["22°C, clear skies", "Please answer in one short sentence."]
    # turn 0: equal requests, and replies equal but for call_ids (an id on the Gemini call): compared as equal,
    # the first by id answers and the other is named
    same = book.find("gemini", _first_request(a, "gemini"), 0, same=lambda x, y: x.tool_calls == y.tool_calls)
    assert same == Found(scenario=a, also=(b.id,))
    # compared with their quirks, they differ: a request nothing more tells apart is named ambiguous
    assert book.find("gemini", _first_request(a, "gemini"), 0) == Ambiguous(scenario_ids=(a.id, b.id), turn=0)


def _check_turns(scenario: Scenario, wire: str, mode: str, base_url: str) -> None:
    adapter = get_adapter(wire)
    with Transport(base_url, wire=wire) as transport:
        outcome = run_conversation(scenario, adapter, transport, mode=mode)  # type: ignore[arg-type]
    assert outcome.stopped is None, outcome.stopped
    assert len(outcome.turns) == len(scenario.turns)
    for turn, got in zip(scenario.turns, outcome.turns, strict=True):
        assert got.status == 200 and got.response is not None, got.error
        calls = [call.name for call in got.response.tool_calls]
        text = got.response.text
        assert calls == [c.name for c in turn.reply.tool_calls], (scenario.id, wire, turn.index)
        assert text == (turn.reply.text or ""), (scenario.id, wire, turn.index)
        assert text != DEFAULT_REPLY.text


@pytest.mark.parametrize("wire", WIRES)
def test_play_scenarios_answers_each_scenario_at_its_turn(bundled: list[Scenario], wire: str) -> None:
    chosen = [s for s in bundled if s.id in _PLAYED and s.wire_excluded(wire, wire) is None]
    if wire == "ollama":
        chosen = [s for s in chosen if s.tool_choice in (None, "auto", "none")]  # Ollama has no tool_choice
    assert len(chosen) >= 4
    with Emulator(port=0) as emu:
        emu.play_scenarios(bundled)
        for scenario in chosen:
            for mode in scenario.modes:
                _check_turns(scenario, wire, mode, emu.base_url)


def test_a_request_of_no_scenario_gets_the_default_reply(bundled: list[Scenario]) -> None:
    with Emulator(port=0) as emu:
        emu.play_scenarios(bundled)
        body = {"model": "m", "messages": [{"role": "user", "content": "What is not a scenario?"}]}
        answer = httpx.post(f"{emu.base_url}/v1/chat/completions", json=body, timeout=10).json()
        assert answer["choices"][0]["message"]["content"] == DEFAULT_REPLY.text
        emu.play_scenarios(None)


def test_equal_first_requests_with_different_answers_are_a_400_naming_both(bundled: list[Scenario]) -> None:
    """Two scenarios asked alike but answered otherwise (here a copy of basic/get_time whose turn 0
    answers text) cannot be told apart by the request: a 400 in the wire's error shape names both."""
    scenario = next(s for s in bundled if s.id == "basic/get_time")
    turn0 = replace(scenario.turns[0], reply=Reply(text="It is noon."))
    twin = replace(scenario, id="basic/get_time_twin", turns=(turn0, *scenario.turns[1:]))
    adapter = get_adapter("gemini")
    first = scenario.turns[0]
    sent = adapter.request_to_wire(
        build_request(scenario, (Message(role="user", parts=first.user),), model="m", stream=False)
    )
    with Emulator(port=0) as emu:
        emu.play_scenarios([*bundled, twin])
        answer = httpx.post(f"{emu.base_url}{sent.path}", json=sent.body, timeout=10)
    assert answer.status_code == 400
    error = answer.json()["error"]
    assert error["status"] == "INVALID_ARGUMENT"
    assert "'basic/get_time' and 'basic/get_time_twin'" in error["message"]
    assert "replies for turn 0 differ" in error["message"]


def test_a_reply_played_in_another_providers_shape_is_answered_and_noted(bundled: list[Scenario]) -> None:
    """call_id_sent_back and results_then_user_text ask the same first question and answer the same
    call; on Gemini call_id_sent_back plays it with an id (quirk call_ids): the first by id answers,
    the log says so, and the later turns are told apart by their tool results."""
    for name in ("multi_turn/call_id_sent_back", "multi_turn/results_then_user_text"):
        scenario = next(s for s in bundled if s.id == name)
        with Emulator(port=0) as emu:
            emu.play_scenarios(bundled)
            _check_turns(scenario, "gemini", "non_stream", emu.base_url)
            assert any("answered as 'multi_turn/call_id_sent_back'" in note for note in emu.log)
