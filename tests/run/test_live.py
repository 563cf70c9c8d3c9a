"""``conformance.run.live``: the sampling fields per wire, deviations judged against the scenario's
loose expectations, the served model, and how a live cassette is judged on replay.

The field names are wire facts from the provider SDKs (openai-python ``completion_create_params.py``
and ``response_create_params.py``, anthropic-sdk-python ``message_create_params.py``, google-genai
``GenerationConfig``, ollama-python ``Options``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conformance.adapters import get_adapter
from conformance.adapters.base import WireRequest
from conformance.model import ErrorInfo, Request, Response, Text, Tool, ToolCall
from conformance.run.conversation import ConversationOutcome, TurnOutcome
from conformance.run.live import (
    Sampling,
    deviations,
    expected_scenario,
    live_command,
    recorded_decodings,
    sampling_fields,
    served_model,
    with_sampling,
)
from conformance.scenarios.loader import load_scenarios
from conformance.scenarios.values import Expectation, ExpectedCall, Reply, Scenario, TextExpectation, Turn
from conformance.traffic.transport import Exchange

DATA = Path(__file__).resolve().parents[1] / "data" / "scenarios"


@pytest.fixture(scope="module")
def get_time() -> Scenario:
    (scenario,) = [s for s in load_scenarios([DATA]).scenarios if s.id == "basic/get_time"]
    return scenario


@pytest.mark.parametrize(
    ("wire", "fields"),
    [
        ("openai_chat", {"temperature": 0.0, "seed": 7}),
        ("openai_responses", {"temperature": 0.0}),  # the Responses API has no seed field
        ("anthropic", {"temperature": 0.0}),  # nor has Anthropic Messages
        ("gemini", {"generationConfig": {"temperature": 0.0, "seed": 7}}),
        ("ollama", {"options": {"temperature": 0.0, "seed": 7}}),
    ],
)
def test_sampling_fields_are_spelled_per_wire(wire: str, fields: dict[str, object]) -> None:
    assert sampling_fields(wire, Sampling(temperature=0.0, seed=7, max_tokens=64)) == fields


def test_a_knob_set_to_none_is_not_sent() -> None:
    assert sampling_fields("openai_chat", Sampling(temperature=None, seed=None)) == {}


@pytest.mark.parametrize(
    ("wire", "max_path"),
    [
        ("openai_chat", ("max_tokens",)),
        ("openai_responses", ("max_output_tokens",)),
        ("anthropic", ("max_tokens",)),
        ("gemini", ("generationConfig", "maxOutputTokens")),
        ("ollama", ("options", "num_predict")),
    ],
)
def test_max_tokens_goes_through_the_adapter_in_its_wire_field(
    get_time: Scenario, wire: str, max_path: tuple[str, ...]
) -> None:
    adapter, scenario = with_sampling(get_adapter(wire), get_time, Sampling(temperature=0.0, seed=7, max_tokens=64))
    body = adapter.request_to_wire(Request(model="m", max_tokens=scenario.max_tokens, tools=scenario.tools)).body
    node = body
    for step in max_path:
        node = node[step]
    assert node == 64
    assert json.dumps(body).count('"temperature": 0.0') == 1


def test_the_scenarios_own_max_tokens_wins(get_time: Scenario) -> None:
    own = get_time.__class__(**{**get_time.__dict__, "max_tokens": 5})
    _, scenario = with_sampling(get_adapter("openai_chat"), own, Sampling(max_tokens=64))
    assert scenario.max_tokens == 5


# ---- deviations -----------------------------------------------------------------------------


def _outcome(scenario: Scenario, *responses: Response | ErrorInfo) -> ConversationOutcome:
    wire = WireRequest(path="/v1/chat/completions", body={})
    turns = tuple(
        TurnOutcome(turn=i, request=Request(), wire=wire, status=200, error=r)
        if isinstance(r, ErrorInfo)
        else TurnOutcome(turn=i, request=Request(), wire=wire, status=200, response=r)
        for i, r in enumerate(responses)
    )
    return ConversationOutcome(scenario=scenario.id, adapter="openai_chat", mode="non_stream", turns=turns)


def _call(name: str, arguments: dict[str, object] | None, error: str | None = None) -> ToolCall:
    return ToolCall(id="c1", name=name, arguments=arguments, arguments_raw=json.dumps(arguments), arguments_error=error)


def test_a_model_that_follows_the_scenario_loosely_has_no_deviation(get_time: Scenario) -> None:
    # other argument values than the script's, and other words: the scenario's expectations are exact,
    # the live judgement is loose (the tool called, arguments valid against its schema)
    outcome = _outcome(
        get_time,
        Response(parts=(_call("getTime", {"offset_ms": -1}),), finish_reason="tool_calls"),
        Response(parts=(Text(text="Yesterday."),), finish_reason="stop"),
    )
    assert deviations(get_time, [outcome]) == []


def test_text_instead_of_a_call_is_a_deviation(get_time: Scenario) -> None:
    outcome = _outcome(get_time, Response(parts=(Text(text="I cannot tell the time."),), finish_reason="stop"))
    assert deviations(get_time, [outcome]) == [
        'turn 0 (non-stream): answered in text ("I cannot tell the time.") where the scenario expects a call to getTime'
    ]


def test_a_call_written_as_json_in_the_text_is_named_so(get_time: Scenario) -> None:
    text = '```json\n{"name": "getTime", "arguments": {"offset_ms": -86400000}}\n```'
    outcome = _outcome(get_time, Response(parts=(Text(text=text),), finish_reason="stop"))
    (problem,) = deviations(get_time, [outcome])
    assert problem.startswith("turn 0 (non-stream): wrote the call to getTime as JSON in the text")


def test_another_tool_is_a_deviation(get_time: Scenario) -> None:
    outcome = _outcome(get_time, Response(parts=(_call("getWeather", {}),), finish_reason="tool_calls"))
    assert deviations(get_time, [outcome]) == [
        "turn 0 (non-stream): called getWeather where the scenario expects getTime"
    ]


def test_arguments_against_the_tools_schema(get_time: Scenario) -> None:
    outcome = _outcome(get_time, Response(parts=(_call("getTime", {"offset": "-1"}),), finish_reason="tool_calls"))
    (problem,) = deviations(get_time, [outcome])
    assert "do not fit its schema ('offset_ms' is a required property)" in problem
    broken = _outcome(get_time, Response(parts=(_call("getTime", None, "invalid JSON"),), finish_reason="tool_calls"))
    (problem,) = deviations(get_time, [broken])
    assert "arguments that are not usable (invalid JSON)" in problem


def test_subset_matching_where_the_scenario_asks_for_it() -> None:
    tool = Tool(name="f", input_schema={"type": "object"})
    want = Expectation(tool_calls=(ExpectedCall(name="f", arguments={"city": "Paris"}, match="subset"),))
    turn = _turn_with(want)
    scenario = Scenario(id="s", path=Path("s.yaml"), behavior="", source="", tools=(tool,), turns=(turn,))
    ok = _outcome(scenario, Response(parts=(_call("f", {"city": "Paris", "unit": "C"}),), finish_reason="tool_calls"))
    assert deviations(scenario, [ok]) == []
    off = _outcome(scenario, Response(parts=(_call("f", {"city": "Lyon"}),), finish_reason="tool_calls"))
    (problem,) = deviations(scenario, [off])
    assert 'where the scenario expects at least {"city": "Paris"}' in problem


def test_a_call_where_text_is_expected_and_a_cut_answer(get_time: Scenario) -> None:
    outcome = _outcome(
        get_time,
        Response(parts=(_call("getTime", {"offset_ms": 0}),), finish_reason="tool_calls"),
        Response(parts=(_call("getTime", {"offset_ms": 0}),), finish_reason="tool_calls"),
    )
    assert deviations(get_time, [outcome]) == [
        "turn 1 (non-stream): called getTime where the scenario expects no tool call"
    ]
    cut = _outcome(
        get_time,
        Response(parts=(_call("getTime", {"offset_ms": 0}),), finish_reason="tool_calls"),
        Response(parts=(Text(text="Yester"),), finish_reason="length"),
    )
    assert deviations(get_time, [cut]) == [
        "turn 1 (non-stream): stopped at the output limit (finish reason length); raise --max-tokens"
    ]


def test_an_error_the_scenario_does_not_expect_is_not_a_deviation(get_time: Scenario) -> None:
    # a provider error is a failure of the exchange (the recorder fails the pair), not the model's choice
    outcome = _outcome(get_time, ErrorInfo(kind="server_error", message="boom", status=500))
    assert deviations(get_time, [outcome]) == []


def _turn_with(expect: Expectation) -> Turn:
    return Turn(index=0, user=(Text(text="hi"),), reply=Reply(text="x"), expect=expect)


# ---- served model ---------------------------------------------------------------------------


def _exchange(body: str, *, stream: bool) -> Exchange:
    return Exchange(
        method="POST", url="http://127.0.0.1/x", request_headers=(), request_body=b"", stream=stream,
        status=200, response_body=body.encode(),
    )  # fmt: skip


def test_served_model_from_bodies_and_streams() -> None:
    chat = _exchange('{"id": "x", "model": "qwen2.5-coder-0.5b", "choices": []}', stream=False)
    anthropic = _exchange(
        'event: message_start\ndata: {"type": "message_start", "message": {"model": "claude-x"}}\n\n', stream=True
    )
    responses = _exchange(
        'event: response.created\ndata: {"type": "response.created", "response": {"model": "gpt-y"}}\n\n', stream=True
    )
    gemini = _exchange('data: {"candidates": [], "modelVersion": "gemini-2.5-flash-001"}\n\n', stream=True)
    assert served_model([chat]) == "qwen2.5-coder-0.5b"
    assert (
        served_model([anthropic, responses, gemini, chat])
        == "claude-x, gpt-y, gemini-2.5-flash-001, qwen2.5-coder-0.5b"
    )
    assert served_model([_exchange('{"choices": []}', stream=False)]) is None


# ---- replaying a live cassette --------------------------------------------------------------


def _live(expected: dict[str, object], **more: object) -> dict[str, object]:
    return {"mode": "live", "adapter": "openai_chat", "base_url": "http://127.0.0.1/v1", **more, "expected": expected}


def test_a_live_cassette_is_judged_against_its_recorded_decoding(get_time: Scenario) -> None:
    recorded = {
        "non_stream": [{"turn": 0, "text": "No.", "calls": [], "finish_reason": "stop"}],
        "stream": [{"turn": 0, "text": "Nope.", "calls": [], "finish_reason": "stop"}],
    }
    provenance = _live(recorded, sampling={"temperature": 0.0, "seed": 42, "max_tokens": 64})
    judged = expected_scenario(get_time, provenance, "stream")
    assert judged.turns[0].expect == Expectation(
        tool_calls=(), text=TextExpectation(value="Nope.", mode="exact"), finish_reason="stop"
    )
    assert judged.turns[1] == get_time.turns[1]  # not reached live: left as the scenario says
    assert judged.max_tokens == 64
    assert recorded_decodings(provenance, "non_stream") == {0: {"text": "No.", "calls": [], "finish_reason": "stop"}}
    emulator = {"mode": "emulator", "expected": recorded}
    assert expected_scenario(get_time, emulator, "stream") is get_time
    assert recorded_decodings(emulator, "stream") is None


def test_the_replay_hint_of_a_live_cassette_records_live() -> None:
    assert live_command(_live({}), "openai_chat", "basic/get_time") == (
        "conformance record --live --adapter openai_chat --scenario basic/get_time --base-url URL --api-key-env VAR"
    )
    remote = _live({}, base_url="https://api.example.com/v1", model="m-1")
    assert live_command(remote, "openai_chat", "a/b") == (
        "conformance record --live --adapter openai_chat --scenario a/b --base-url https://api.example.com/v1 "
        "--api-key-env VAR --model m-1"
    )
    assert live_command({"mode": "emulator"}, "openai_chat", "a/b") is None
