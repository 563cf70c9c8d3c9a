"""``conformance.adapters.gemini`` against real recorded traffic: its MANIFEST tables (``SPEC``, run
by the generic tests of ``test_realworld.py``) and the tests that are its own.

Expected values come from ``tests/realworld/MANIFEST.md`` (gemini section: tool names, argument
previews, SSE event and JSON-array chunk counts, stop reasons, error payloads), from wire-formats.md
(E31: the 3.5-flash ids ``dv8szvqe``/``j80tal12``; §4d: usage revised 55 -> 257), from the recorded
bytes read with a naive parser independent of the adapter, and from the clients' own next requests
(which replay the calls and signatures they received); never from our output. The cassettes are
read from ``tests/realworld``. No ``other/`` file routes to this adapter (Gemini's OpenAI-compatible
endpoint is ``openai_chat``; ``SPEC.files``); the discovery picks one up if that ever changes.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from conformance.adapters import gemini as adapter
from conformance.assembly import fold
from conformance.model import Reasoning, ReasoningSettings, Response, ToolCall, ToolResult
from conformance.traffic.cassettes import Interaction
from tests.adapters._realworld import (
    Error,
    NaiveCall,
    NaiveReading,
    RealWorld,
    Stream,
    naive_json_array_or_sse,
)

pytestmark = pytest.mark.realworld

CREWAI_429 = "crewai__TestAgentMultimodalGemini.test_video_file[gemini-gemini-2.0-flash].yaml"
CREWAI_STREAM = "crewai__TestGeminiToolCallStreaming.test_gemini_streaming_multiple_tool_calls_unique_ids.yaml"
LLM = "llm-gemini__test_tools.yaml"
LOGFIRE = "logfire__test_instrument_google_genai.yaml"
OI_AUTO = "openinference__test_generate_content_with_automatic_tool_calling.yaml"
OI_MULTI = "openinference__test_response_with_multiple_tool_calls[False].yaml"
OI_STREAM = "openinference__test_streaming_reasoning_with_multiple_tool_calls.yaml"
OTEL_400 = "otel-python-contrib__test_generate_content_invalid_role.yaml"
PYD_STRUCT = "pydantic-ai__test_google_model_structured_output.yaml"
PYD_STREAM = "pydantic-ai__test_google_streaming_tool_call_thought_signature.yaml"

# MANIFEST.md, gemini section: per interaction, ([(tool, argument preview)], stop reason)
NON_STREAM_CALLS: dict[str, list[tuple[list[tuple[str, str]], str]]] = {
    LOGFIRE: [([("get_current_weather", '{"location": "Boston, MA"}')], "STOP"), ([], "STOP")],
    OI_AUTO: [([("get_weather", '{"location": "San Francisco"}')], "STOP"), ([], "STOP")],
    OI_MULTI: [([("get_weather", '{"location": "Boston"}'), ("get_weather", '{"location": "New Delhi"}')], "STOP")],
    PYD_STRUCT: [
        ([("temperature", '{"city": "London", "date": "2022-01-01"}')], "STOP"),
        ([("final_result", '{"city": "London", "date": "2022-01-01",')], "STOP"),
    ],
}

# (tool names, SSE events or JSON-array chunks, no delta events in this format, stop reason)
STREAMS = {
    CREWAI_STREAM: [Stream(["get_current_temperature", "get_current_temperature"], 1, None, "STOP")],
    LLM: [
        Stream(["pelican_name_generator"], 2, None, "STOP"),
        Stream(["pelican_name_generator"], 1, None, "STOP"),
        Stream([], 2, None, "STOP"),
    ],
    OI_STREAM: [Stream(["get_weather", "get_weather"], 3, None, "STOP")],
    PYD_STREAM: [Stream(["get_country"], 2, None, "STOP"), Stream([], 3, None, "STOP")],
}

# (status, kind, error.status, error.message prefix)
ERRORS = {
    # §4e: the recorded 429 had neither RetryInfo nor retry-after
    CREWAI_429: Error(429, "rate_limit", "RESOURCE_EXHAUSTED", "Resource exhausted. Please try again later."),
    OTEL_400: Error(400, "invalid_request", "INVALID_ARGUMENT", "Please use a valid role: user, model."),
}


def _naive_reading(chunks: list[dict[str, Any]]) -> NaiveReading:
    """Calls from the ``functionCall`` parts (their ``id`` where sent), text from the non-thought
    ``text`` parts, usage from the last chunk's ``usageMetadata``."""
    parts = [part for chunk in chunks for part in chunk["candidates"][0]["content"]["parts"]]
    calls = [
        NaiveCall(p["functionCall"]["name"], p["functionCall"].get("args", {}), id=p["functionCall"].get("id"))
        for p in parts
        if "functionCall" in p
    ]
    text = "".join(p["text"] for p in parts if "text" in p and not p.get("thought"))
    usage = chunks[-1]["usageMetadata"]
    return NaiveReading(
        calls, text, {"input_tokens": usage["promptTokenCount"], "total_tokens": usage["totalTokenCount"]}
    )


def _check_call(call: ToolCall) -> None:
    assert call.provider_details["synthetic_id"] is True  # none of these replies sent an id


def _check_reply(response: Response, raw: Any) -> None:
    assert response.provider_details["responseId"] == raw["responseId"]


def _utf8_stream() -> bytes:
    # built from a recorded call (pydantic-ai's 30°C reply) framed as CRLF SSE: no recorded stream
    # holds a multi-byte code point
    _, interaction = SPEC.cassette(PYD_STRUCT)
    assert interaction.response is not None
    body = b"data: " + interaction.response.body + b"\r\n\r\n"
    return (
        body
        + b'data: {"candidates": [{"content": {"parts": [{"text": "\xc3\xa9t\xc3\xa9 \xf0\x9f\x8c\xa1"}]}}]}\r\n\r\n'
    )


def _check_utf8_fold(folded: Response) -> None:
    assert folded.tool_calls[0].arguments == {"city": "London", "date": "2022-01-01", "temperature": "30°C"}
    assert folded.text == "été 🌡"


def _wire_path(interaction: Interaction) -> str:
    return interaction.request.uri.split(".com", 1)[1]  # model, method and query survive


SPEC = RealWorld(
    name="gemini",
    adapter=adapter,
    files=(10, 0),  # MANIFEST: gemini (10 files)
    wire_path=_wire_path,
    pass_path=True,
    finish={"STOP": "stop"},
    calls_finish=True,
    non_stream_calls=NON_STREAM_CALLS,
    check_call=_check_call,
    check_reply=_check_reply,
    streams=STREAMS,
    naive_chunks=naive_json_array_or_sse,
    naive_reading=_naive_reading,
    errors=ERRORS,
    error_message_is_prefix=True,
    utf8_stream=_utf8_stream,
    check_utf8_fold=_check_utf8_fold,
)


# --------------------------------------------------------------------------------------------
# Non-streamed replies and the requests that answered them
# --------------------------------------------------------------------------------------------


def test_parallel_calls_without_ids_get_distinct_stable_ids() -> None:
    (interaction,) = SPEC.cassette(OI_MULTI)
    assert interaction.response is not None
    first = adapter.response_from_wire(interaction.response.json).tool_calls
    again = adapter.response_from_wire(interaction.response.json).tool_calls
    assert len({c.id for c in first}) == 2  # same tool twice, no ids on the wire: distinct ids
    assert [c.id for c in first] == [c.id for c in again]  # same bytes, same ids


def test_non_ascii_arguments_are_kept() -> None:
    _, second = SPEC.cassette(PYD_STRUCT)
    assert second.response is not None
    (call,) = adapter.response_from_wire(second.response.json).tool_calls
    assert call.arguments == {"city": "London", "date": "2022-01-01", "temperature": "30°C"}  # MANIFEST: 30°C


@pytest.mark.parametrize("name", [LOGFIRE, OI_AUTO])
def test_id_less_results_answer_the_id_less_calls_of_the_previous_turn(name: str) -> None:
    # google-genai sends neither functionCall.id nor functionResponse.id (§4b): matched by order and name
    _, second = SPEC.cassette(name)
    request = adapter.request_from_wire(second.request.json)
    _, assistant, results = request.messages
    (call,) = assistant.parts
    (result,) = results.parts
    assert isinstance(call, ToolCall) and isinstance(result, ToolResult)
    assert result.call_id == call.id and result.name == call.name
    assert call.provider_details["synthetic_id"] is True
    wire = adapter.request_to_wire(request).body["contents"]
    assert "id" not in wire[1]["parts"][0]["functionCall"] and "id" not in wire[2]["parts"][0]["functionResponse"]


def test_the_logfire_result_text_and_the_openinference_result_object() -> None:
    (result,) = adapter.request_from_wire(SPEC.cassette(LOGFIRE)[1].request.json).messages[2].parts
    assert isinstance(result, ToolResult) and result.content[0].kind == "text"
    assert (result.content[0].text, result.is_error) == ("rainy", False)  # type: ignore[union-attr]
    (result,) = adapter.request_from_wire(SPEC.cassette(OI_AUTO)[1].request.json).messages[2].parts
    assert isinstance(result, ToolResult)
    assert json.loads(result.content[0].text) == {  # type: ignore[union-attr]
        "location": "San Francisco",
        "temperature": 65,
        "unit": "fahrenheit",
        "condition": "foggy",
        "humidity": "85%",
    }


def test_a_forced_choice_among_all_tools_and_client_ids() -> None:
    first, second = SPEC.cassette(PYD_STRUCT)
    request = adapter.request_from_wire(second.request.json, path=second.request.uri)
    # toolConfig ANY with two allowed names: "required", the names kept for the round trip
    assert request.tool_choice == "required"
    assert request.system == "You are a helpful chatbot."
    assert [t.provider_details["schema_field"] for t in request.tools] == ["parameters_json_schema"] * 2
    assert request.tools[0].input_schema["additionalProperties"] is False  # forwarded untouched (§4a)
    _, assistant, results = request.messages
    (call,) = assistant.parts
    (result,) = results.parts
    assert isinstance(call, ToolCall) and isinstance(result, ToolResult)
    assert call.id == result.call_id == "pyd_ai_3b434062371141a69cab8ea6571e6812"  # client-made id (E31)
    assert call.provider_details["thoughtSignature"] == "c2tpcF90aG91Z2h0X3NpZ25hdHVyZV92YWxpZGF0b3I="  # §4b
    assert first.response is not None
    (received,) = adapter.response_from_wire(first.response.json).tool_calls
    assert (call.name, call.arguments) == (received.name, received.arguments)


# --------------------------------------------------------------------------------------------
# Streams
# --------------------------------------------------------------------------------------------


def test_gemini_3_5_flash_sends_ids_and_signs_the_first_call_only() -> None:
    (interaction,) = SPEC.cassette(OI_STREAM)
    assert interaction.response is not None
    first, second = fold(SPEC.events(interaction.response.body)).tool_calls
    assert (first.id, second.id) == ("dv8szvqe", "j80tal12")  # E31
    assert first.provider_details["thoughtSignature"].startswith("EvsDCvgDAQw51sfO")
    assert "thoughtSignature" not in second.provider_details  # §4c: only the first of a parallel batch


def test_usage_takes_the_last_chunk_which_may_revise_the_prompt_count() -> None:
    _, interaction = SPEC.cassette(PYD_STREAM)
    assert interaction.response is not None
    usage = fold(SPEC.events(interaction.response.body)).usage
    assert usage is not None and (usage.input_tokens, usage.output_tokens) == (257, 8)  # §4d: 55 -> 257


def test_thought_text_is_reasoning_and_the_signature_is_what_the_client_replayed() -> None:
    first, second, third = SPEC.cassette(LLM)
    assert first.response is not None
    folded = fold(SPEC.events(first.response.body))
    reasoning, call = folded.parts
    assert reasoning.kind == "reasoning" and reasoning.text.startswith("**Generating Pelican Names**")  # type: ignore[union-attr]
    assert isinstance(call, ToolCall) and call.arguments == {}
    assert folded.usage is not None and folded.usage.reasoning_tokens == 42
    # llm-gemini replays the call with its own id, in snake_case (E32), and the signature byte for byte (E10)
    replayed = second.request.json["contents"][1]["parts"][0]
    assert replayed["thoughtSignature"] == call.provider_details["thoughtSignature"]
    history = adapter.request_from_wire(third.request.json, path=third.request.uri)
    calls = [p for m in history.messages for p in m.parts if isinstance(p, ToolCall)]
    results = [p for m in history.messages for p in m.parts if isinstance(p, ToolResult)]
    assert (
        [c.id for c in calls]
        == [r.call_id for r in results]
        == [
            "call_27db36357f594e73b557ec8f70da9e87",
            "call_97666b91d4c14f44b94ab69dded4ab10",
        ]
    )
    assert calls[0].provider_details["thoughtSignature"] == call.provider_details["thoughtSignature"]
    assert calls[0].provider_details["spelling"] == {"functionCall": "function_call"}
    assert [r.content[0].text for r in results] == ["Charles", "Sammy"]  # type: ignore[union-attr]
    assert results[0].provider_details["response_key"] == "output"  # {"output": ...} kept as sent


def test_pydantic_ai_replayed_the_signature_as_url_safe_base64_and_it_was_accepted() -> None:
    # the signature came back with +/ turned into -_ and the API answered 200: recorded, not our doing
    first, second = SPEC.cassette(PYD_STREAM)
    assert first.response is not None and second.response is not None and second.response.status == 200
    (call,) = fold(SPEC.events(first.response.body)).tool_calls
    (replayed,) = adapter.request_from_wire(second.request.json).messages[1].parts
    assert isinstance(replayed, ToolCall)
    signature = call.provider_details["thoughtSignature"]
    assert replayed.provider_details["thoughtSignature"] == signature.replace("+", "-").replace("/", "_")


def test_the_json_array_stream_and_sse_give_the_same_fold() -> None:
    # the same chunks framed both ways (§4d) fold to the same response
    for interaction in SPEC.cassette(LLM):
        assert interaction.response is not None
        body = interaction.response.body
        as_sse = b"".join(b"data: " + json.dumps(c).encode() + b"\r\n\r\n" for c in naive_json_array_or_sse(body))
        assert fold(SPEC.events(as_sse)) == fold(SPEC.events(body))


# --------------------------------------------------------------------------------------------
# Reasoning (issue 28)
# --------------------------------------------------------------------------------------------


def test_the_recorded_thinking_configs_are_read_as_reasoning_settings() -> None:
    # llm-gemini asks {"thinkingConfig": {"includeThoughts": true}}; openinference (google-genai) the
    # snake_case {"include_thoughts": true, "thinking_level": "LOW"} (issue28-wire-facts §2e, §7)
    for interaction in SPEC.cassette(LLM):
        request = adapter.request_from_wire(interaction.request.json, path=interaction.request.uri)
        assert request.reasoning == ReasoningSettings()
        assert "thinkingConfig" not in json.dumps(request.provider_details)
    (interaction,) = SPEC.cassette(OI_STREAM)
    request = adapter.request_from_wire(interaction.request.json, path=interaction.request.uri)
    assert request.reasoning == ReasoningSettings(effort="low")
    assert adapter.request_to_wire(request).body == interaction.request.json


def test_the_recorded_thought_is_gemini_reasoning() -> None:
    first = SPEC.cassette(LLM)[0]
    assert first.response is not None
    reasoning = fold(SPEC.events(first.response.body)).parts[0]
    assert isinstance(reasoning, Reasoning) and reasoning.source == "gemini"


def test_the_recorded_placeholder_signature_is_kept_on_its_call() -> None:
    # pydantic-ai replayed a call with the base64 of skip_thought_signature_validator (gemini-2.0-flash,
    # 200); it is read as that call's signature and sent back unchanged, with nothing left out
    _, second = SPEC.cassette(PYD_STRUCT)
    request = adapter.request_from_wire(second.request.json, path=second.request.uri)
    (call,) = [p for m in request.messages for p in m.parts if isinstance(p, ToolCall)]
    assert call.provider_details["thoughtSignature"] == "c2tpcF90aG91Z2h0X3NpZ25hdHVyZV92YWxpZGF0b3I="
    wire = adapter.request_to_wire(request)
    assert wire.body == second.request.json and wire.notes == ()


@pytest.mark.parametrize("name", [LLM, OI_STREAM, PYD_STREAM])
def test_the_recorded_thoughts_and_signatures_decode_as_google_genai_reads_them(name: str) -> None:
    # issue 28 point 3: each chunk read by the SDK (types.GenerateContentResponse, Part.thought and
    # Part.thought_signature as bytes); our reasoning text is its thought texts, our signatures its bytes
    import base64

    from google.genai import types

    interaction = SPEC.cassette(name)[0]
    assert interaction.response is not None
    sdk_parts = [
        part
        for chunk in naive_json_array_or_sse(interaction.response.body)
        for candidate in types.GenerateContentResponse._from_response(response=chunk, kwargs={}).candidates or ()
        if candidate.content is not None
        for part in candidate.content.parts or ()
    ]
    folded = fold(SPEC.events(interaction.response.body))
    thoughts = "".join(p.text or "" for p in sdk_parts if p.thought)
    assert "".join(p.text for p in folded.parts if isinstance(p, Reasoning)) == thoughts
    signed = [p.thought_signature for p in sdk_parts if p.function_call is not None]
    ours = [c.provider_details.get("thoughtSignature") for c in folded.tool_calls]
    assert [None if s is None else base64.b64decode(s) for s in ours] == signed
    assert any(s is not None for s in signed)
