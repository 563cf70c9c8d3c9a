"""``translation.recorded_request``: the sent body against the cassette's recorded one, field by field."""

from __future__ import annotations

import copy
from dataclasses import replace
from typing import Any

import pytest

from conformance.adapters import get_adapter
from conformance.adapters.base import Adapter, WireRequest
from conformance.checks._common import CaseContext
from conformance.checks.recorded_request import CHECK, MAX_SHOWN, compare_bodies, glob_matches, recorded_request
from conformance.errors import AdapterContractError
from conformance.run.conversation import DEFAULT_MODELS, run_conversation
from conformance.scenarios.loader import default_scenarios_dir, load_scenario
from conformance.traffic.cassettes import load_cassette
from conformance.traffic.replay import ReplayBackend
from conformance.traffic.transport import Transport

CASSETTES = default_scenarios_dir().parent / "cassettes"


def _context(adapter: Adapter, scenario_id: str, mode: str = "non_stream", **provenance: Any) -> CaseContext:
    """The case of ``adapter`` replaying the bundled cassette of ``scenario_id`` (its provenance
    updated with ``provenance``)."""
    scenario = load_scenario(default_scenarios_dir() / f"{scenario_id}.yaml", root=default_scenarios_dir())
    cassette = load_cassette(CASSETTES / adapter.traffic_format / f"{scenario_id}.yaml")
    cassette = replace(cassette, provenance={**(cassette.provenance or {}), **provenance})
    backend = ReplayBackend(cassette)
    with Transport("http://127.0.0.1", wire=adapter.wire_format, backend=backend) as transport:
        outcome = run_conversation(scenario, adapter, transport, mode=mode)  # type: ignore[arg-type]
    return CaseContext(
        scenario=scenario,
        adapter=adapter,
        mode=mode,  # type: ignore[arg-type]
        outcome=outcome,
        recorded=tuple(cassette.interactions[i].request for i in backend.played),
        provenance=cassette.provenance,
    )


def _rewriting(adapter: Adapter, rewrite: Any) -> Adapter:
    real = adapter.request_to_wire

    def request_to_wire(request: Any) -> WireRequest:
        wire = real(request)
        return replace(wire, body=rewrite(copy.deepcopy(dict(wire.body))))

    return replace(adapter, request_to_wire=request_to_wire)


@pytest.mark.parametrize(
    ("adapter", "scenario", "mode"),
    [
        ("openai_chat", "multi_turn/two_rounds", "non_stream"),
        ("anthropic", "multi_turn/two_rounds", "stream"),
        ("gemini", "basic/parallel_calls", "stream"),
        ("hermes", "basic/single_call", "non_stream"),
        ("qwen", "basic/single_call", "stream"),
    ],
)
def test_the_reference_adapters_send_what_they_recorded(adapter: str, scenario: str, mode: str) -> None:
    ctx = _context(get_adapter(adapter), scenario, mode)
    result = recorded_request(ctx)
    assert result is not None and result.status == "pass", result
    assert len(ctx.recorded) == len(ctx.outcome.turns) >= 1


def test_a_field_added_on_a_later_turn_is_named_with_its_path_and_turn() -> None:
    def later_temperature(body: dict[str, Any]) -> dict[str, Any]:
        if len(body["messages"]) > 1:
            body["temperature"] = 0.5
        return body

    ctx = _context(_rewriting(get_adapter("openai_chat"), later_temperature), "multi_turn/two_rounds")
    result = recorded_request(ctx)
    assert result is not None and result.status == "fail"
    assert {(f.path, f.expected, f.actual) for f in result.findings} == {("$.temperature", None, 0.5)}
    assert all(f.turn and f.turn > 0 for f in result.findings)


def test_whitespace_in_a_rendered_prompt_is_a_difference_shown_around_it() -> None:
    def squeeze(body: dict[str, Any]) -> dict[str, Any]:
        body["messages"][0]["content"] = body["messages"][0]["content"].replace("\n\n", "\n")
        return body

    ctx = _context(_rewriting(get_adapter("hermes"), squeeze), "basic/single_call")
    result = recorded_request(ctx)
    assert result is not None and result.status == "fail"
    [finding] = result.findings
    assert finding.path == "$.messages[0].content"
    assert finding.message.startswith("text differs at character ")
    assert len(finding.expected) <= MAX_SHOWN + 2 and finding.expected != finding.actual


def test_declared_differences_and_volatile_values_are_not_findings() -> None:
    def change(body: dict[str, Any]) -> dict[str, Any]:
        body["temperature"] = 1
        body["messages"][0]["content"] = "another question"
        return body

    mutant = _rewriting(get_adapter("openai_chat"), change)
    declared = replace(mutant, request_differences={"$.temperature": "we always send our default"})
    ctx = _context(declared, "basic/single_call", volatile=["$.messages[*].content"])
    result = recorded_request(ctx)
    assert result is not None and result.status == "pass", result.findings
    # without the declarations both are findings
    ctx = _context(mutant, "basic/single_call")
    result = recorded_request(ctx)
    assert result is not None
    assert sorted(f.path for f in result.findings) == ["$.messages[0].content", "$.temperature"]


def test_the_run_model_stands_for_the_recorded_one() -> None:
    ctx = _context(get_adapter("openai_chat"), "basic/single_call", model="gpt-4o-recorded")
    assert ctx.recorded[0].json["model"] == DEFAULT_MODELS["openai_chat"]  # the body says what was recorded
    recorded = replace(ctx.recorded[0], json={**ctx.recorded[0].json, "model": "gpt-4o-recorded"})
    result = recorded_request(replace(ctx, recorded=(recorded,)))
    assert result is not None and result.status == "pass"
    other = replace(ctx.recorded[0], json={**ctx.recorded[0].json, "model": "some-other"})
    result = recorded_request(replace(ctx, recorded=(other,)))
    assert result is not None and [f.path for f in result.findings] == ["$.model"]


def test_no_verdict_without_a_conformance_recording() -> None:
    ctx = _context(get_adapter("openai_chat"), "basic/single_call")
    assert recorded_request(replace(ctx, provenance=None)) is None
    assert recorded_request(replace(ctx, recorded=())) is None


def test_compare_bodies_ignores_key_order_but_not_list_order_or_json_types() -> None:
    recorded = {"a": 1, "b": [1, 2], "c": True, "d": "x", "gone": 0}
    sent = {"d": "x", "c": 1, "b": [2, 1], "a": 1.0, "new": None}
    found = {(f.path, f.message) for f in compare_bodies(recorded, sent)}
    assert found == {
        ("$.a", "differs"),
        ("$.b[0]", "differs"),
        ("$.b[1]", "differs"),
        ("$.c", "differs"),
        ("$.gone", "missing: recorded, not sent"),
        ("$.new", "added: sent, not recorded"),
    }
    assert compare_bodies({"z": 1, "y": {"q": [1]}}, {"y": {"q": [1]}, "z": 1}) == []
    assert all(f.check == CHECK for f in compare_bodies({"a": 1}, {}))


def test_long_values_are_capped() -> None:
    [finding] = compare_bodies({"tools": [{"x": "y" * 1000}]}, {})
    assert isinstance(finding.expected, str) and len(finding.expected) < MAX_SHOWN + 30


def test_globs_match_whole_paths_with_literal_brackets() -> None:
    assert glob_matches("$.messages[3].content", ["$.messages[*].content"])
    assert not glob_matches("$.messages[3].content.x", ["$.messages[?].content"])
    assert not glob_matches("$.messages3.content", ["$.messages[3].content"])


def test_request_differences_are_validated_when_the_adapter_is_built() -> None:
    with pytest.raises(AdapterContractError, match="request_differences key 'temperature'"):
        replace(get_adapter("openai_chat"), request_differences={"temperature": "why"})
    with pytest.raises(AdapterContractError, match=r"request difference '\$.x' needs a reason"):
        replace(get_adapter("openai_chat"), request_differences={"$.x": " "})
