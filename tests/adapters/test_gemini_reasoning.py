"""``conformance.adapters.gemini``: reasoning state and reasoning settings (issue 28).

Expected values come from the wire facts (/work/notes/issue28-wire-facts.md §2, citing google-genai
``types.py`` ``Part.thought``/``Part.thought_signature``/``ThinkingConfig``/``ThinkingLevel``, the
thought-signatures page ai.google.dev/gemini-api/docs/thought-signatures, wire-formats.md §4b-§4d,
E10) and from the real recordings in ``tests/realworld/cassettes/gemini``: llm-gemini
``test_tools`` (``thinkingConfig{includeThoughts}``), openinference
``..._multiple_tool_calls`` (``include_thoughts``/``thinking_level: "LOW"``, only the first parallel
call signed), pydantic-ai ``..._structured_output`` (the base64 placeholder on a replayed call).
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from conformance.adapters import gemini as adapter
from conformance.adapters.base import reasoning_note
from conformance.assembly import fold
from conformance.errors import UnsupportedContentError, WireFormatError
from conformance.model import (
    Message,
    Reasoning,
    ReasoningSettings,
    Request,
    Text,
    ToolCall,
    ToolResult,
)

USER = Message(role="user", parts=(Text(text="Weather in Paris and London?"),))
SIGNATURE = "EvsDCvgDAQw51sfO+/Ab=="  # base64, as thoughtSignature is bytes (google-genai Part)


def _call(call_id: str, city: str, **details: Any) -> ToolCall:
    return ToolCall(
        id=call_id,
        name="get_weather",
        arguments={"city": city},
        arguments_raw=json.dumps({"city": city}, separators=(",", ":")),
        provider_details=details,
    )


def _result(call_id: str) -> Message:
    return Message(role="tool", parts=(ToolResult(call_id=call_id, name="get_weather", content=(Text(text="sun"),)),))


def _chunk(*parts: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    candidate: dict[str, Any] = {"content": {"role": "model", "parts": list(parts)}, "index": 0}
    if finish is not None:
        candidate["finishReason"] = finish
    return {"candidates": [candidate], "responseId": "resp-1"}


def _sse(*chunks: dict[str, Any]) -> bytes:
    return b"".join(b"data: " + json.dumps(c).encode() + b"\r\n\r\n" for c in chunks)


def _stream(*chunks: dict[str, Any]) -> Any:
    return fold(adapter.stream_from_wire([_sse(*chunks)]))


def _model_parts(request: Request, index: int = 1) -> list[dict[str, Any]]:
    return list(adapter.request_to_wire(request).body["contents"][index]["parts"])


# --------------------------------------------------------------------------------------------
# Decode: thought parts and signatures, source = gemini
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "stream"])
def test_a_thought_then_a_signed_call_decodes_with_the_gemini_source(stream: bool) -> None:
    # §2a: thought text is a {"text", "thought": true} part; the signature rides on the functionCall part
    thought = {"text": "**Checking** the weather", "thought": True}
    call = {"functionCall": {"name": "get_weather", "args": {"city": "Paris"}}, "thoughtSignature": SIGNATURE}
    if stream:
        response = _stream(_chunk(thought), _chunk(call, finish="STOP"))
    else:
        response = adapter.response_from_wire(_chunk(thought, call, finish="STOP"))
    reasoning, decoded = response.parts
    assert reasoning == Reasoning(text="**Checking** the weather", source="gemini")
    assert isinstance(decoded, ToolCall) and decoded.provider_details["thoughtSignature"] == SIGNATURE
    assert response.finish_reason == "tool_calls"


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "stream"])
def test_parallel_calls_replay_the_signature_on_the_first_call_only(stream: bool) -> None:
    # §2a, WF §4c: only the first functionCall of a parallel batch is signed; it goes back on that part
    parts = [
        {"functionCall": {"name": "get_weather", "args": {"city": "Paris"}}, "thoughtSignature": SIGNATURE},
        {"functionCall": {"name": "get_weather", "args": {"city": "London"}}},
    ]
    response = _stream(_chunk(*parts, finish="STOP")) if stream else adapter.response_from_wire(_chunk(*parts))
    first, second = response.tool_calls
    request = Request(
        messages=(USER, Message(role="assistant", parts=response.parts), _result(first.id), _result(second.id))
    )
    replayed = _model_parts(request)
    assert [p.get("thoughtSignature") for p in replayed] == [SIGNATURE, None]
    assert [p["functionCall"]["args"] for p in replayed] == [{"city": "Paris"}, {"city": "London"}]
    assert adapter.request_to_wire(request).notes == ()


def test_a_signature_streamed_on_a_part_of_its_own_goes_back_in_the_same_place() -> None:
    # §2b: {"text": "", "thoughtSignature"} in a later chunk after the call (bellman#35, WF §4d); which
    # call it belongs to is not documented, so it stays a part of its own, after the call
    own = {"text": "", "thoughtSignature": SIGNATURE}
    response = _stream(
        _chunk({"functionCall": {"name": "get_weather", "args": {"city": "Paris"}}}),
        _chunk(own, finish="STOP"),
    )
    call, signature = response.parts
    assert isinstance(call, ToolCall) and "thoughtSignature" not in call.provider_details
    assert signature == Reasoning(text="", signature=SIGNATURE, source="gemini", provider_details={"thought": False})
    request = Request(messages=(USER, Message(role="assistant", parts=response.parts), _result(call.id)))
    assert _model_parts(request) == [{"functionCall": {"name": "get_weather", "args": {"city": "Paris"}}}, own]


def test_reasoning_read_from_a_request_is_gemini_reasoning_and_goes_back_unchanged() -> None:
    body = {
        "contents": [
            {"role": "user", "parts": [{"text": "Weather?"}]},
            {
                "role": "model",
                "parts": [
                    {"text": "plan", "thought": True, "thoughtSignature": "UjE="},
                    {"functionCall": {"name": "get_weather", "args": {"city": "Paris"}}, "thoughtSignature": "UzE="},
                ],
            },
        ]
    }
    request = adapter.request_from_wire(body)
    reasoning = request.messages[1].parts[0]
    assert reasoning == Reasoning(text="plan", signature="UjE=", source="gemini")
    wire = adapter.request_to_wire(request)
    assert wire.body == body and wire.notes == ()


# --------------------------------------------------------------------------------------------
# Replay: reasoning from another wire is left out, and the request says so
# --------------------------------------------------------------------------------------------


def test_reasoning_from_another_wire_is_left_out_with_a_note() -> None:
    # §2c: a foreign signature is answered with 400 "Base64 decoding failed" (openclaw c4e8b60)
    thinking = Reasoning(text="Let me look.", signature="ErUBCkYIBRgCIkB", source="anthropic")
    redacted = Reasoning(redacted="EmwKAhgBEgy3va", source="anthropic")
    call = _call("toolu_01", "Paris")
    request = Request(messages=(USER, Message(role="assistant", parts=(thinking, redacted, call)), _result("toolu_01")))
    wire = adapter.request_to_wire(request)
    assert wire.body["contents"][1]["parts"] == [
        {"functionCall": {"name": "get_weather", "args": {"city": "Paris"}, "id": "toolu_01"}}
    ]
    note = reasoning_note(thinking, "gemini")
    assert note is not None and wire.notes[0] == note
    # the call of the current tool loop now goes out unsigned: said, and no placeholder is invented (§2d)
    assert len(wire.notes) == 2 and "'toolu_01'" in wire.notes[1] and "without a thoughtSignature" in wire.notes[1]
    assert "thoughtSignature" not in json.dumps(wire.body)


def test_an_earlier_turns_foreign_reasoning_is_left_out_without_the_unsigned_call_note() -> None:
    # only the current turn's function-calling steps are validated (§2c): no note for earlier turns
    thinking = Reasoning(text="Let me look.", signature="ErUBCkYIBRgCIkB", source="anthropic")
    later = Message(role="user", parts=(Text(text="And Rome?"),))
    request = Request(
        messages=(USER, Message(role="assistant", parts=(thinking, _call("c1", "Paris"))), _result("c1"), later)
    )
    wire = adapter.request_to_wire(request)
    assert wire.notes == (reasoning_note(thinking, "gemini"),)


def test_reasoning_of_unknown_source_is_sent_when_its_signature_is_base64() -> None:
    # a caller's own history (source None): Gemini needs base64 bytes, standard or URL-safe (GG-SDK _common.py:710)
    kept = Reasoning(text="plan", signature="c2tpcF90aG91Z2h0-_8=")
    foreign = Reasoning(text="plan", signature="sig with spaces!")
    request = Request(messages=(USER, Message(role="assistant", parts=(kept, foreign, Text(text="Sunny.")))))
    wire = adapter.request_to_wire(request)
    assert wire.body["contents"][1]["parts"] == [
        {"text": "plan", "thought": True, "thoughtSignature": "c2tpcF90aG91Z2h0-_8="},
        {"text": "Sunny."},
    ]
    assert len(wire.notes) == 1 and "not base64" in wire.notes[0]


def test_redacted_reasoning_of_unknown_source_is_refused_with_what_to_do() -> None:
    request = Request(messages=(USER, Message(role="assistant", parts=(Reasoning(redacted="opaque"),))))
    with pytest.raises(UnsupportedContentError, match="leave the redacted part out"):
        adapter.request_to_wire(request)


# --------------------------------------------------------------------------------------------
# Settings: generationConfig.thinkingConfig
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("settings", "config"),
    [
        # §2e, GG-SDK ThinkingConfig / ThinkingLevel; includeThoughts so thought text comes back (REC llm-gemini)
        (ReasoningSettings(enabled=False), {"thinkingBudget": 0}),
        (ReasoningSettings(effort="minimal"), {"includeThoughts": True, "thinkingLevel": "MINIMAL"}),
        (ReasoningSettings(effort="high"), {"includeThoughts": True, "thinkingLevel": "HIGH"}),
        (ReasoningSettings(budget_tokens=1024), {"includeThoughts": True, "thinkingBudget": 1024}),
        (ReasoningSettings(), {"includeThoughts": True}),
    ],
)
def test_reasoning_settings_go_out_as_thinking_config_and_come_back(
    settings: ReasoningSettings, config: dict[str, Any]
) -> None:
    request = Request(model="gemini-3.5-flash", messages=(USER,), max_tokens=64, reasoning=settings)
    wire = adapter.request_to_wire(request)
    assert wire.body["generationConfig"] == {"maxOutputTokens": 64, "thinkingConfig": config}
    again = adapter.request_from_wire(wire.body, path=wire.path)
    assert again.reasoning == settings and again.max_tokens == 64
    assert again.provider_details == {}  # nothing left over: the settings say the whole thinkingConfig
    assert adapter.request_to_wire(again).body == wire.body


def test_off_with_an_effort_is_refused_not_dropped() -> None:
    request = Request(messages=(USER,), reasoning=ReasoningSettings(enabled=False, effort="low"))
    with pytest.raises(UnsupportedContentError, match="thinkingBudget 0"):
        adapter.request_to_wire(request)


@pytest.mark.parametrize(
    ("config", "settings"),
    [
        # the snake_case keys google-genai sends (REC openinference ..._multiple_tool_calls)
        ({"include_thoughts": True, "thinking_level": "LOW"}, ReasoningSettings(effort="low")),
        # a level as litellm spells it, and a client that leaves includeThoughts out
        ({"thinkingLevel": "low"}, ReasoningSettings(effort="low")),
        ({"includeThoughts": False, "thinkingBudget": 512}, ReasoningSettings(budget_tokens=512)),
        ({"thinkingBudget": 0, "includeThoughts": True}, ReasoningSettings(enabled=False)),
    ],
)
def test_thinking_configs_clients_send_are_read_and_given_back_as_sent(
    config: dict[str, Any], settings: ReasoningSettings
) -> None:
    body = {"contents": [{"role": "user", "parts": [{"text": "hi"}]}], "generationConfig": {"thinkingConfig": config}}
    request = adapter.request_from_wire(body)
    assert request.reasoning == settings
    assert adapter.request_to_wire(request).body == body


@pytest.mark.parametrize(
    "config",
    [
        {"thinkingBudget": -1},  # automatic: model-dependent (§2e), not a budget the settings can say
        {"includeThoughts": True, "thinkingLevel": "EXTREME"},
        {"includeThoughts": True, "thinkingBudget": "1024"},
        {"includeThoughts": True, "futureKnob": 1},
        "not an object",
    ],
)
def test_a_thinking_config_the_settings_cannot_say_stays_as_sent(config: Any) -> None:
    body = {
        "contents": [{"role": "user", "parts": [{"text": "hi"}]}],
        "generation_config": {"thinking_config": config, "temperature": 0},
    }
    request = adapter.request_from_wire(body)
    assert request.reasoning is None
    assert adapter.request_to_wire(request).body == body


# --------------------------------------------------------------------------------------------
# Bad input
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("signature", [12345, {"bytes": "x"}, ["UzE="], True])
def test_a_request_signature_that_is_not_a_string_names_its_place(signature: Any) -> None:
    body = {
        "contents": [
            {"role": "user", "parts": [{"text": "hi"}]},
            {"role": "model", "parts": [{"text": "x"}, {"functionCall": {"name": "f"}, "thoughtSignature": signature}]},
        ]
    }
    with pytest.raises(WireFormatError, match=r"contents\[1\]\.parts\[1\]\.thoughtSignature must be a base64 string"):
        adapter.request_from_wire(body)
    body["contents"][1]["parts"] = [{"text": "x", "thought": True, "thought_signature": signature}]
    with pytest.raises(WireFormatError, match=r"contents\[1\]\.parts\[0\]\.thoughtSignature"):
        adapter.request_from_wire(body)


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "stream"])
@pytest.mark.parametrize("part", [{"text": "x", "thought": True}, {"functionCall": {"name": "f"}}, {"text": ""}])
def test_a_response_signature_that_is_not_a_string_is_a_malformed_response(stream: bool, part: dict[str, Any]) -> None:
    bad = {**part, "thoughtSignature": 7}
    response = _stream(_chunk(bad, finish="STOP")) if stream else adapter.response_from_wire(_chunk(bad))
    assert response.error is not None and response.error.kind == "malformed_response"
    assert "thoughtSignature" in response.error.message
    assert response.finish_reason == "error"


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "stream"])
def test_a_megabyte_thought_decodes_whole_and_replays(stream: bool) -> None:
    # far below docs/limits.md body_bytes (32M): decoded as any thought, in one piece
    text = "think " * ((1 << 20) // 6 + 1)
    thought = {"text": text, "thought": True, "thoughtSignature": SIGNATURE}
    response = _stream(_chunk(thought, finish="STOP")) if stream else adapter.response_from_wire(_chunk(thought))
    (reasoning,) = response.parts
    assert isinstance(reasoning, Reasoning) and len(reasoning.text) == len(text) >= 1 << 20
    request = Request(messages=(USER, Message(role="assistant", parts=response.parts)))
    assert _model_parts(request) == [thought]


def test_a_signature_on_a_user_or_function_response_part_is_kept_as_sent_not_read_as_reasoning() -> None:
    # google-genai's Part has thought_signature on every part, so the wire can carry it anywhere; only a
    # model turn's signature is reasoning: elsewhere it is sent back as the client sent it
    body = {
        "contents": [
            {"role": "user", "parts": [{"text": "hi", "thoughtSignature": "VTE="}]},
            {"role": "model", "parts": [{"functionCall": {"name": "f", "id": "c1"}, "thoughtSignature": "UzE="}]},
            {
                "role": "user",
                "parts": [{"functionResponse": {"name": "f", "id": "c1", "response": {}}, "thoughtSignature": "WDE="}],
            },
        ]
    }
    request = adapter.request_from_wire(body)
    assert not any(isinstance(p, Reasoning) for m in request.messages for p in m.parts)
    assert adapter.request_to_wire(request).body == body


def test_reasoning_in_a_user_turn_is_refused_naming_the_part() -> None:
    request = Request(messages=(Message(role="user", parts=(Reasoning(text="x", source="gemini"),)),))
    with pytest.raises(UnsupportedContentError, match="user turn cannot carry reasoning"):
        adapter.request_to_wire(request)
