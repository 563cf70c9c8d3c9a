"""``conformance.adapters.gemini`` against real recorded traffic, and chunk invariance of its streams.

Expected values come from ``shared/realworld/MANIFEST.md`` (gemini section: tool names, argument
previews, SSE event and JSON-array chunk counts, stop reasons, error payloads), from wire-formats.md
(E31: the 3.5-flash ids ``dv8szvqe``/``j80tal12``; §4d: usage revised 55 -> 257), from the recorded
bytes read here with a naive parser independent of the adapter, and from the clients' own next
requests (which replay the calls and signatures they received); never from our output. The
cassettes are read from ``../shared/realworld`` next to the repository and skipped when absent. No
``other/`` file routes to this adapter (Gemini's OpenAI-compatible endpoint is ``openai_chat``); the
discovery below picks one up if that ever changes.
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import pytest
from deepdiff import DeepDiff
from hypothesis import given, settings
from hypothesis import strategies as st

from conformance.adapters import detect_adapter
from conformance.adapters import gemini as adapter
from conformance.assembly import fold, lifecycle_problems
from conformance.model import Finish, StreamEvent, ToolCall, ToolResult
from conformance.traffic.cassettes import Interaction, is_streaming, load_cassette

REPO_ROOT = Path(__file__).resolve().parents[2]
CASSETTES = REPO_ROOT.parent / "shared" / "realworld" / "cassettes"

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

# (tool names, SSE events or JSON-array chunks, stop reason)
STREAMS: dict[str, list[tuple[list[str], int, str]]] = {
    CREWAI_STREAM: [(["get_current_temperature", "get_current_temperature"], 1, "STOP")],
    LLM: [(["pelican_name_generator"], 2, "STOP"), (["pelican_name_generator"], 1, "STOP"), ([], 2, "STOP")],
    OI_STREAM: [(["get_weather", "get_weather"], 3, "STOP")],
    PYD_STREAM: [(["get_country"], 2, "STOP"), ([], 3, "STOP")],
}

# (status, error.status, error.message prefix, kind)
ERRORS = {
    CREWAI_429: (429, "RESOURCE_EXHAUSTED", "Resource exhausted. Please try again later.", "rate_limit"),
    OTEL_400: (400, "INVALID_ARGUMENT", "Please use a valid role: user, model.", "invalid_request"),
}

FINISH = {"STOP": "stop"}


def _files() -> list[Path]:
    if not CASSETTES.is_dir():
        return []
    own = sorted((CASSETTES / "gemini").glob("*.yaml"))
    other = [
        p
        for p in sorted((CASSETTES / "other").glob("*.yaml"))
        if any(detect_adapter(i.request.uri, i.request.json) == "gemini" for i in load_cassette(p).interactions)
    ]
    return own + other


FILES = _files()


def _cassette(name: str) -> list[Interaction]:
    path = CASSETTES / "gemini" / name
    if not path.is_file():
        pytest.skip(f"real cassettes not found at {CASSETTES} (clone shared/realworld next to the repo)")
    return list(load_cassette(path).interactions)


def _interactions() -> list[Any]:
    if not FILES:
        return [pytest.param(None, marks=pytest.mark.skip(reason=f"real cassettes not found at {CASSETTES}"))]
    return [
        pytest.param(i, id=f"{p.name}#{i.index}")
        for p in FILES
        for i in load_cassette(p).interactions
        if detect_adapter(i.request.uri, i.request.json) == "gemini"
    ]


def _events(body: bytes, chunks: list[bytes] | None = None) -> list[StreamEvent]:
    return list(adapter.stream_from_wire(chunks if chunks is not None else [body]))


def _naive_chunks(body: bytes) -> list[dict[str, Any]]:
    """Each streamed ``GenerateContentResponse``: a JSON array parsed whole, or SSE blocks split on
    the CRLF blank line with their ``data: `` prefix cut."""
    text = body.decode()
    if text.lstrip().startswith("["):
        chunks: list[dict[str, Any]] = json.loads(text)
        return chunks
    return [json.loads(block[len("data: ") :]) for block in text.split("\r\n\r\n") if block.strip()]


def _naive_calls(chunks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        part["functionCall"]
        for chunk in chunks
        for part in chunk["candidates"][0]["content"]["parts"]
        if "functionCall" in part
    ]


# --------------------------------------------------------------------------------------------
# Every interaction
# --------------------------------------------------------------------------------------------


def test_all_ten_files_are_found() -> None:
    if not FILES:
        pytest.skip(f"real cassettes not found at {CASSETTES}")
    assert len([p for p in FILES if p.parent.name == "gemini"]) == 10  # MANIFEST: gemini (10 files)


@pytest.mark.parametrize("interaction", _interactions())
def test_every_interaction_decodes_and_the_request_round_trips(interaction: Interaction) -> None:
    response = interaction.response
    assert response is not None
    body = interaction.request.json
    request = adapter.request_from_wire(body, path=interaction.request.uri)
    wire = adapter.request_to_wire(request)
    # no documented normalisation applies to a recorded body: the diff is empty
    assert DeepDiff(body, wire.body) == {}
    assert wire.path == interaction.request.uri.split(".com", 1)[1]  # model, method and query survive
    assert wire.stream == is_streaming(interaction)
    if response.status >= 400:
        error = adapter.error_from_wire(response.status, response.headers, response.body)
        assert error.status == response.status
    elif is_streaming(interaction):
        assert lifecycle_problems(_events(response.body)) == []
    else:
        assert adapter.response_from_wire(response.json).finish_reason is not None


# --------------------------------------------------------------------------------------------
# Non-streamed replies (MANIFEST names and argument previews)
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(NON_STREAM_CALLS))
def test_non_streamed_calls_match_the_manifest(name: str) -> None:
    interactions = _cassette(name)
    assert len(interactions) == len(NON_STREAM_CALLS[name])
    for interaction, (calls, stop) in zip(interactions, NON_STREAM_CALLS[name], strict=True):
        assert interaction.response is not None and interaction.response.status == 200
        response = adapter.response_from_wire(interaction.response.json)
        assert [c.name for c in response.tool_calls] == [n for n, _ in calls]
        for call, (_, preview) in zip(response.tool_calls, calls, strict=True):
            assert call.arguments_error is None
            assert json.dumps(call.arguments, ensure_ascii=False).startswith(preview)  # the preview is a prefix
            assert call.provider_details["synthetic_id"] is True  # none of these replies sent an id
        assert response.provider_details["finish_reason"] == stop
        assert response.finish_reason == ("tool_calls" if calls else FINISH[stop])
        assert response.provider_details["responseId"] == interaction.response.json["responseId"]


def test_parallel_calls_without_ids_get_distinct_stable_ids() -> None:
    (interaction,) = _cassette(OI_MULTI)
    assert interaction.response is not None
    first = adapter.response_from_wire(interaction.response.json).tool_calls
    again = adapter.response_from_wire(interaction.response.json).tool_calls
    assert len({c.id for c in first}) == 2  # same tool twice, no ids on the wire: distinct ids
    assert [c.id for c in first] == [c.id for c in again]  # same bytes, same ids


def test_non_ascii_arguments_are_kept() -> None:
    _, second = _cassette(PYD_STRUCT)
    assert second.response is not None
    (call,) = adapter.response_from_wire(second.response.json).tool_calls
    assert call.arguments == {"city": "London", "date": "2022-01-01", "temperature": "30°C"}  # MANIFEST: 30°C


@pytest.mark.parametrize("name", [LOGFIRE, OI_AUTO])
def test_id_less_results_answer_the_id_less_calls_of_the_previous_turn(name: str) -> None:
    # google-genai sends neither functionCall.id nor functionResponse.id (§4b): matched by order and name
    _, second = _cassette(name)
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
    (result,) = adapter.request_from_wire(_cassette(LOGFIRE)[1].request.json).messages[2].parts
    assert isinstance(result, ToolResult) and result.content[0].kind == "text"
    assert (result.content[0].text, result.is_error) == ("rainy", False)  # type: ignore[union-attr]
    (result,) = adapter.request_from_wire(_cassette(OI_AUTO)[1].request.json).messages[2].parts
    assert isinstance(result, ToolResult)
    assert json.loads(result.content[0].text) == {  # type: ignore[union-attr]
        "location": "San Francisco",
        "temperature": 65,
        "unit": "fahrenheit",
        "condition": "foggy",
        "humidity": "85%",
    }


def test_a_forced_choice_among_all_tools_and_client_ids() -> None:
    first, second = _cassette(PYD_STRUCT)
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


@pytest.mark.parametrize("name", sorted(STREAMS))
def test_streams_match_the_manifest_and_the_naive_parse(name: str) -> None:
    for interaction, (names, n_chunks, stop) in zip(_cassette(name), STREAMS[name], strict=True):
        assert interaction.response is not None
        body = interaction.response.body
        naive = _naive_chunks(body)
        assert len(naive) == n_chunks
        events = _events(body)
        assert lifecycle_problems(events) == []
        folded = fold(events)
        assert [c.name for c in folded.tool_calls] == names
        wire_calls = _naive_calls(naive)
        for call, wire_call in zip(folded.tool_calls, wire_calls, strict=True):
            assert call.arguments == wire_call.get("args", {})
            assert call.arguments_error is None
            if "id" in wire_call:
                assert call.id == wire_call["id"] and "synthetic_id" not in call.provider_details
        texts = [
            p["text"]
            for chunk in naive
            for p in chunk["candidates"][0]["content"]["parts"]
            if "text" in p and not p.get("thought")
        ]
        assert folded.text == "".join(texts)
        assert events[-1] == Finish("tool_calls" if names else FINISH[stop], stop)
        usage = naive[-1]["usageMetadata"]
        assert folded.usage is not None
        assert (folded.usage.input_tokens, folded.usage.total_tokens) == (
            usage["promptTokenCount"],
            usage["totalTokenCount"],
        )


def test_gemini_3_5_flash_sends_ids_and_signs_the_first_call_only() -> None:
    (interaction,) = _cassette(OI_STREAM)
    assert interaction.response is not None
    first, second = fold(_events(interaction.response.body)).tool_calls
    assert (first.id, second.id) == ("dv8szvqe", "j80tal12")  # E31
    assert first.provider_details["thoughtSignature"].startswith("EvsDCvgDAQw51sfO")
    assert "thoughtSignature" not in second.provider_details  # §4c: only the first of a parallel batch


def test_usage_takes_the_last_chunk_which_may_revise_the_prompt_count() -> None:
    _, interaction = _cassette(PYD_STREAM)
    assert interaction.response is not None
    usage = fold(_events(interaction.response.body)).usage
    assert usage is not None and (usage.input_tokens, usage.output_tokens) == (257, 8)  # §4d: 55 -> 257


def test_thought_text_is_reasoning_and_the_signature_is_what_the_client_replayed() -> None:
    first, second, third = _cassette(LLM)
    assert first.response is not None
    folded = fold(_events(first.response.body))
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
    first, second = _cassette(PYD_STREAM)
    assert first.response is not None and second.response is not None and second.response.status == 200
    (call,) = fold(_events(first.response.body)).tool_calls
    (replayed,) = adapter.request_from_wire(second.request.json).messages[1].parts
    assert isinstance(replayed, ToolCall)
    signature = call.provider_details["thoughtSignature"]
    assert replayed.provider_details["thoughtSignature"] == signature.replace("+", "-").replace("/", "_")


def test_the_json_array_stream_and_sse_give_the_same_fold() -> None:
    # the same chunks framed both ways (§4d) fold to the same response
    for interaction in _cassette(LLM):
        assert interaction.response is not None
        body = interaction.response.body
        as_sse = b"".join(b"data: " + json.dumps(c).encode() + b"\r\n\r\n" for c in _naive_chunks(body))
        assert fold(_events(as_sse)) == fold(_events(body))


# --------------------------------------------------------------------------------------------
# Errors
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_map_to_the_right_kind(name: str) -> None:
    status, code, message, kind = ERRORS[name]
    (interaction,) = _cassette(name)
    response = interaction.response
    assert response is not None and response.status == status
    error = adapter.error_from_wire(response.status, response.headers, response.body)
    assert (error.kind, error.info.code) == (kind, code)
    assert error.message.startswith(message)
    assert error.retry_after is None  # §4e: the recorded 429 had neither RetryInfo nor retry-after


# --------------------------------------------------------------------------------------------
# Chunk invariance (E1)
# --------------------------------------------------------------------------------------------


def _stream_bodies() -> list[Any]:
    params = []
    for name, indexes in sorted(STREAMS.items()):
        path = CASSETTES / "gemini" / name
        if not path.is_file():
            continue
        interactions = load_cassette(path).interactions
        for index in range(len(indexes)):
            response = interactions[index].response
            assert response is not None
            params.append(pytest.param(response.body, id=f"{name.split('__')[0]}#{index}"))
    return params or [pytest.param(b"", marks=pytest.mark.skip(reason=f"real cassettes not found at {CASSETTES}"))]


def _cut(body: bytes, cuts: list[int]) -> list[bytes]:
    bounds = [0, *sorted(set(cuts)), len(body)]
    return [body[a:b] for a, b in itertools.pairwise(bounds)]


@pytest.mark.parametrize("body", _stream_bodies())
def test_random_cuts_give_the_one_piece_events(body: bytes) -> None:
    expected = _events(body)

    @settings(max_examples=30, deadline=None)
    @given(st.lists(st.integers(min_value=1, max_value=len(body) - 1), max_size=40))
    def check(cuts: list[int]) -> None:
        assert _events(body, _cut(body, cuts)) == expected

    check()


@pytest.mark.parametrize("body", _stream_bodies())
def test_single_byte_chunks_give_the_one_piece_events(body: bytes) -> None:
    assert _events(body, [body[i : i + 1] for i in range(len(body))]) == _events(body)


def test_cuts_inside_utf8_code_points_give_the_one_piece_events() -> None:
    # built from a recorded call (pydantic-ai's 30°C reply) framed as CRLF SSE: no recorded stream
    # holds a multi-byte code point
    _, interaction = _cassette(PYD_STRUCT)
    assert interaction.response is not None
    body = b"data: " + interaction.response.body + b"\r\n\r\n"
    body += b'data: {"candidates": [{"content": {"parts": [{"text": "\xc3\xa9t\xc3\xa9 \xf0\x9f\x8c\xa1"}]}}]}\r\n\r\n'
    inside = [i for i in range(1, len(body)) if body[i] & 0xC0 == 0x80]  # UTF-8 continuation bytes
    assert inside
    expected = _events(body)
    for i in inside:
        assert _events(body, [body[:i], body[i:]]) == expected
    folded = fold(expected)
    assert folded.tool_calls[0].arguments == {"city": "London", "date": "2022-01-01", "temperature": "30°C"}
    assert folded.text == "été 🌡"
