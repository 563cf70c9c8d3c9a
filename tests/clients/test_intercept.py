"""``--intercept``: a client that cannot take a base URL is answered in-process by vcrpy at the
provider's real address, matched like the loopback server (by turn and stream mode), with what the
mode cannot do said in the report."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import openai

from conformance.adapters import for_format
from conformance.clients.contract import Call, SimpleClient
from conformance.clients.harness import CertifyOptions, certify
from conformance.clients.intercept import CHUNKS_NOTE, PROVIDER_URLS, intercepting
from conformance.clients.translator import TranslatorClient
from conformance.model import Message, Response, Text, ToolCall
from conformance.scenarios.loader import load_scenarios
from conformance.traffic.cassettes import load_cassette

REPO = Path(__file__).resolve().parents[2]
CASSETTES = REPO / "cassettes"


def chosen(*ids: str) -> list[Any]:
    return [s for s in load_scenarios([]).scenarios if s.id in ids]


def sdk_default_address(call: Call) -> Response:
    """The official SDK with NO base URL: it calls https://api.openai.com/v1 itself."""
    client = openai.OpenAI(api_key=call.api_key, max_retries=0)
    messages: list[Any] = [
        {"role": "user", "content": "".join(p.text for p in call.messages[0].parts if isinstance(p, Text))}
    ]
    tools = [
        {"type": "function", "function": {"name": t.name, "description": t.description, "parameters": t.input_schema}}
        for t in call.tools
    ]
    completion = client.chat.completions.create(model=call.model, messages=messages, tools=tools)
    message = completion.choices[0].message
    calls = tuple(
        ToolCall(
            id=c.id,
            name=c.function.name,
            arguments_raw=c.function.arguments,
            arguments=json.loads(c.function.arguments),
        )
        for c in message.tool_calls or []
    )
    client.close()
    return Response(parts=calls, finish_reason="tool_calls" if calls else "stop")


def test_an_sdk_at_its_default_address_is_answered_in_process_and_its_request_judged() -> None:
    client = SimpleClient(
        name="no-base-url",
        wires={"openai_chat": frozenset({"tool_choice_auto"})},
        complete=sdk_default_address,
        error_info=lambda exc: None,
    )
    result = certify(chosen("basic/single_call"), client, CertifyOptions(cassette_dir=CASSETTES, intercept=True))
    [case, stream_case] = result.cases
    assert stream_case.status == "unsupported"  # it declares no streaming
    assert case.status == "pass", [(v.check, v.findings) for v in case.checks if v.status != "pass"]
    ran = {v.check for v in case.checks}
    assert {"client.one_request", "client.recorded_request", "translation.tool_definitions", "roundtrip.calls"} <= ran
    assert "client.request_headers" in ran  # the SDK's headers, as vcrpy saw them


def without_version(call: Call) -> Response:
    """A hand-written Anthropic client at the provider's address that forgets ``anthropic-version``."""
    adapter = for_format("anthropic")
    wire = adapter.request_to_wire(call.request())
    headers = {"content-type": "application/json", "x-api-key": call.api_key}
    with httpx.Client(timeout=call.timeout) as http:
        answer = http.post(call.base_url + wire.path, content=json.dumps(wire.body).encode(), headers=headers)
    return adapter.response_from_wire(answer.json(), tools=call.tools)


def test_the_headers_a_client_sends_in_process_are_judged_as_over_loopback() -> None:
    client = SimpleClient(
        name="no-version",
        wires={"anthropic": frozenset({"tool_choice_auto"})},
        complete=without_version,
        error_info=lambda exc: None,
    )
    result = certify(chosen("basic/get_time"), client, CertifyOptions(cassette_dir=CASSETTES, intercept=True))
    [case] = [c for c in result.cases if c.mode == "non_stream"]
    [found] = [v for v in case.checks if v.check == "client.request_headers"]
    assert found.status == "fail"
    assert {f.path for f in found.findings} == {'headers["anthropic-version"]'}
    assert {v.check for v in case.checks if v.status == "fail"} == {"client.request_headers"}


def test_the_translator_as_a_client_passes_in_process_too_with_the_chunk_note_on_streams() -> None:
    scenarios = chosen(
        "basic/get_time", "multi_turn/call_result_answer", "errors/rate_limit", "errors/stream_disconnect"
    )
    result = certify(
        scenarios, TranslatorClient(for_format("anthropic")), CertifyOptions(cassette_dir=CASSETTES, intercept=True)
    )
    statuses = {(c.scenario, c.mode): (c.status, c.message) for c in result.cases}
    assert statuses[("errors/stream_disconnect", "stream")][0] == "unsupported"
    assert "cannot break a stream" in statuses[("errors/stream_disconnect", "stream")][1]
    for (scenario, mode), (status, message) in statuses.items():
        if scenario == "errors/stream_disconnect" and mode == "stream":
            continue
        assert status == "pass", (scenario, mode, message)
        assert (CHUNKS_NOTE in message) == (mode == "stream")


def test_a_retry_in_process_gets_the_same_answer_and_every_request_is_captured() -> None:
    cassette = load_cassette(CASSETTES / "anthropic" / "basic" / "get_time.yaml")
    client = TranslatorClient(for_format("anthropic"))
    [scenario] = chosen("basic/get_time")
    call = Call(
        wire="anthropic",
        base_url=PROVIDER_URLS["anthropic"],
        api_key="k",
        model="claude-sonnet-4-5",
        messages=(scenario_message(scenario),),
        tools=scenario.tools,
    )
    with intercepting(cassette) as capture:
        first = client.complete(call)
        second = client.complete(call)
    assert first == second
    assert isinstance(first, Response) and any(isinstance(p, ToolCall) for p in first.parts)
    assert [(s.answered_turn, s.stream, s.status) for s in capture.sent] == [(0, False, 200), (0, False, 200)]


def test_a_request_the_cassette_cannot_answer_never_reaches_the_network() -> None:
    cassette = load_cassette(CASSETTES / "anthropic" / "basic" / "get_time.yaml")
    client = TranslatorClient(for_format("anthropic"))
    [scenario] = chosen("basic/get_time")
    import vcr.errors

    history = (
        scenario_message(scenario),
        Message(role="assistant", parts=(Text(text="a"),)),
        Message(role="user", parts=(Text(text="b"),)),
        Message(role="assistant", parts=(Text(text="c"),)),
        Message(role="user", parts=(Text(text="d"),)),
    )
    call = Call(wire="anthropic", base_url=PROVIDER_URLS["anthropic"], api_key="k", model="m", messages=history)
    with intercepting(cassette) as capture:
        try:
            client.complete(call)
        except vcr.errors.CannotOverwriteExistingCassetteException:
            pass
        else:  # pragma: no cover - the assertion below explains
            raise AssertionError("turn 2 is not in the cassette: vcrpy must refuse it")
    assert [(s.answered_turn, s.status) for s in capture.sent] == [(2, None)]


def scenario_message(scenario: Any) -> Message:
    return Message(role="user", parts=scenario.turns[0].user)
