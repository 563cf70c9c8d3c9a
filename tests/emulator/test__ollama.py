"""The emulator's Ollama wire, checked against wire facts (wire-formats.md §5, ollama
``api/types.go`` and ``docs/api.md``, the recorded Ollama bodies and stream) and decoded with the
reference ``ollama`` adapter."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import httpx
import pytest
from _emulator_http import check_fault, exchange, fault_cases, json_paths, play_fault, real_body_paths, request_for

from conformance.assembly import lifecycle_problems
from conformance.emulator import Emulator, EmulatorScript
from conformance.scenarios.values import Reply, ScriptedCall

WIRE = "ollama"
WEATHER = ScriptedCall(name="get_weather", arguments={"city": "Paris"}, arguments_raw='{"city": "Paris"}')
TIME = ScriptedCall(name="get_time", arguments={}, arguments_raw="{}")
CALLS = Reply(text="Checking.", tool_calls=(WEATHER, TIME), finish="tool_calls")


def _play(emu: Emulator, client: httpx.Client, reply: Reply, *, stream: bool) -> Any:
    emu.set_script(EmulatorScript(scenario_id="ollama/x", replies=(reply,)))
    return exchange(client, WIRE, request_for(WIRE, stream=stream))


def _lines(body: bytes) -> list[dict[str, Any]]:
    return [json.loads(line) for line in body.splitlines()]


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "stream"])
def test_text_and_calls_decode(emu: Emulator, client: httpx.Client, stream: bool) -> None:
    outcome = _play(emu, client, CALLS, stream=stream)
    response = outcome.response
    assert response.text == "Checking."
    assert [(c.name, c.arguments) for c in response.tool_calls] == [
        ("get_weather", {"city": "Paris"}),
        ("get_time", {}),
    ]
    assert all(re.fullmatch(r"call_[a-z0-9]{8}", c.id) for c in response.tool_calls)  # server ids (§5c)
    assert response.finish_reason == "tool_calls"
    if stream:
        assert lifecycle_problems(outcome.events) == []


def test_the_stream_sends_calls_whole_then_the_done_line(emu: Emulator, client: httpx.Client) -> None:
    lines = _lines(_play(emu, client, CALLS, stream=True).body)
    assert all(line["model"] == "llama3.1" and line["created_at"].endswith("Z") for line in lines)
    assert [line["done"] for line in lines] == [False] * (len(lines) - 1) + [True]
    calls = [line for line in lines if "tool_calls" in line["message"]]
    assert len(calls) == 1  # every call whole, in one line (§5d)
    assert calls[0]["message"]["tool_calls"][0]["function"] == {
        "index": 0,
        "name": "get_weather",
        "arguments": {"city": "Paris"},  # an object, not a string
    }
    last = lines[-1]
    assert last["done_reason"] == "stop" and last["message"] == {"role": "assistant", "content": ""}
    assert last["eval_count"] > 0 and last["prompt_eval_count"] > 0
    assert last["total_duration"] > last["eval_duration"] > 0


def test_the_request_streams_unless_stream_is_false(emu: Emulator, client: httpx.Client) -> None:
    emu.set_script(EmulatorScript(scenario_id="ollama/default", replies=(Reply(text="hi there"),)))
    body = {"model": "llama3.1", "messages": [{"role": "user", "content": "hi"}]}
    streamed = client.post("/api/chat", json=body)
    assert streamed.headers["content-type"] == "application/x-ndjson" and len(streamed.text.splitlines()) == 3
    whole = client.post("/api/chat", json={**body, "stream": False})
    assert whole.json()["message"]["content"] == "hi there" and whole.json()["done"] is True


def test_the_whole_body_uses_only_field_paths_real_ollama_bodies_have(
    emu: Emulator, client: httpx.Client, realworld_dir: Path
) -> None:
    real = real_body_paths(realworld_dir, "ollama")
    for reply in (Reply(tool_calls=(WEATHER,)), Reply(text="Plain answer.")):
        body = json.loads(_play(emu, client, reply, stream=False).body)
        assert json_paths(body) - real == set()


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "stream"])
def test_reasoning_is_thinking(emu: Emulator, client: httpx.Client, stream: bool) -> None:
    outcome = _play(emu, client, Reply(reasoning="Weather needs a tool.", text="Sunny."), stream=stream)
    assert [p.text for p in outcome.response.parts if p.kind == "reasoning"] == ["Weather needs a tool."]


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "stream"])
def test_length_is_done_reason_length(emu: Emulator, client: httpx.Client, stream: bool) -> None:
    outcome = _play(emu, client, Reply(text="Cut sho", finish="length"), stream=stream)
    last = _lines(outcome.body)[-1]
    assert last["done_reason"] == "length"
    assert outcome.response.finish_reason == "length"


def test_malformed_arguments_reach_the_client_as_text(emu: Emulator, client: httpx.Client) -> None:
    broken = ScriptedCall(name="get_weather", arguments_raw='{"city": "Par')
    for stream in (False, True):
        (call,) = _play(emu, client, Reply(tool_calls=(broken,)), stream=stream).response.tool_calls
        assert call.arguments_raw == '{"city": "Par' and call.arguments_error


def test_no_call_ids_makes_the_adapter_synthesize_them(emu: Emulator, client: httpx.Client) -> None:
    outcome = _play(emu, client, Reply(tool_calls=(WEATHER,), quirks=("no_call_ids",)), stream=False)
    call_json = json.loads(outcome.body)["message"]["tool_calls"][0]
    assert call_json == {"function": {"name": "get_weather", "arguments": {"city": "Paris"}}}
    assert outcome.response.tool_calls[0].provider_details["synthetic_id"] is True


def test_empty_args_string_omits_arguments(emu: Emulator, client: httpx.Client) -> None:
    outcome = _play(emu, client, Reply(tool_calls=(TIME,), quirks=("empty_args_string",)), stream=True)
    line = next(line for line in _lines(outcome.body) if "tool_calls" in line["message"])
    assert "arguments" not in line["message"]["tool_calls"][0]["function"]
    assert outcome.response.tool_calls[0].arguments == {}


@pytest.mark.parametrize(("kind", "stream"), fault_cases(WIRE))
def test_each_fault_decodes_to_the_kind_of_the_table(
    emu: Emulator, client: httpx.Client, kind: str, stream: bool
) -> None:
    check_fault(play_fault(emu, client, WIRE, kind, stream), WIRE, kind)


def test_errors_are_an_error_string(emu: Emulator, client: httpx.Client) -> None:
    outcome = play_fault(emu, client, WIRE, "overloaded", False)
    assert outcome.status == 503
    assert json.loads(outcome.body) == {"error": "server busy, please try again.  maximum pending requests exceeded"}


def test_error_event_is_an_error_line(emu: Emulator, client: httpx.Client) -> None:
    lines = _lines(play_fault(emu, client, WIRE, "error_event", True).body)
    assert set(lines[-1]) == {"error"} and len(lines) == 3


# --------------------------------------------------------------------------------------------
# Issue 28: every reasoning of a turn in the one thinking field, in order (ollama-python
# Message.thinking: Optional[str]); redacted reasoning has no form
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "stream"])
def test_the_replys_and_each_calls_reasoning_join_into_thinking(
    emu: Emulator, client: httpx.Client, stream: bool
) -> None:
    from ollama import ChatResponse

    weather = ScriptedCall(
        name="get_weather", arguments={"city": "Paris"}, arguments_raw='{"city": "Paris"}', reasoning="Weather first."
    )
    reply = Reply(reasoning="Two things.", tool_calls=(weather, TIME), finish="tool_calls")
    outcome = _play(emu, client, reply, stream=stream)
    lines = _lines(outcome.body)
    thinking = "".join(ChatResponse.model_validate(line).message.thinking or "" for line in lines)
    assert thinking == "Two things.\nWeather first."
    (reasoning, *calls) = outcome.response.parts
    assert reasoning.kind == "reasoning" and (reasoning.text, reasoning.source) == (thinking, "ollama")
    assert [c.kind for c in calls] == ["tool_call", "tool_call"]
    hidden = _play(emu, client, Reply(reasoning="secret", reasoning_redacted=True, text="ok"), stream=stream)
    assert b"thinking" not in hidden.body and [p.kind for p in hidden.response.parts] == ["text"]
