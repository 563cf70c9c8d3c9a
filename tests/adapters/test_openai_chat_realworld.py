"""``conformance.adapters.openai_chat`` against real recorded traffic: its MANIFEST tables (``SPEC``,
run by the generic tests of ``test_realworld.py``) and the tests that are its own.

Expected values come from ``tests/realworld/MANIFEST.md`` (openai_chat section, and the ``other/``
files whose URL ``detect_adapter`` routes to ``openai_chat``: Azure, Mistral, Gemini's OpenAI
endpoint) and from the recorded bytes themselves, read with a naive whole-body parser that is
independent of the adapter; never from the adapter's own output. The cassettes are read from
``tests/realworld``.

Edge cases of wire-formats.md §10 seen in these recordings: E3/E6 (id only in the first fragment,
``arguments: ""`` first), E24 (Azure filter chunk), E25 (Mistral whole call without index), E27
(Gemini ``id: ""``), E35 (legacy ``function_call``), E1 (chunk invariance, generic, plus the
multi-byte variant below). The hand-made cases are in ``test_openai_chat_streams.py`` and
``test_openai_chat_requests.py``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conformance.adapters import openai_chat as adapter
from conformance.assembly import fold, lifecycle_problems
from conformance.model import Response, TextDelta, ToolCall, ToolCallChunk, ToolResult, UsageEvent
from conformance.traffic.cassettes import Interaction, is_streaming
from tests.adapters._realworld import (
    Error,
    NaiveCall,
    NaiveReading,
    RealWorld,
    Stream,
    interaction_id,
    naive_sse,
    sse_done,
)

pytestmark = pytest.mark.realworld

MAX_USAGE = (
    "crewai__TestMaxUsageCountWithNativeToolCalling.test_max_usage_count_limit_enforced_in_native_tool_calling.yaml"
)
STREAMING = "crewai__test_handle_streaming_tool_calls.yaml"
ERROR_404 = "crewai__test_llm_call_with_error.yaml"
FAILING_TOOL = "crewai__test_native_tool_calling_error_handling.yaml"
LEGACY = "dd-trace-py__chat_completion_function_call.yaml"
ERROR_401 = "openinference__test_error_status_code_and_exception_events_with_invalid_api_key.yaml"
PARALLEL_STREAM = "otel-python-contrib__test_chat_completion_multiple_tools_streaming_with_content.yaml"
AG_UI = "pydantic-ai__test_openai_tool_call_roundtrip_wire_stable[ag_ui].yaml"
ERROR_400 = "pydantic-ai__test_openai_web_search_tool_model_not_supported.yaml"
RUN_STREAM = "pydantic-ai__test_run_stream_sync_streams_real_model.yaml"
AZURE_PARALLEL = (
    "other/crewai__TestAzureNativeToolCalling.test_azure_parallel_native_tool_calling_test_agent_kickoff.yaml"
)
AZURE_STREAM = "other/crewai__TestAzureToolCallStreaming.test_azure_streaming_emits_tool_call_events.yaml"
MISTRAL_STREAM = (
    "other/openinference__test_synchronous_streaming_chat_completions_with_tool_call_response_emits_expected_spans"
    "[False].yaml"
)
GEMINI_OPENAI = "other/pydantic-ai__test_compatible_api_with_tool_calls_without_id.yaml"

# MANIFEST.md, openai_chat section and other/: per interaction, ([(tool, argument preview)], stop reason)
NON_STREAM_CALLS: dict[str, list[tuple[list[tuple[str, str]], str]]] = {
    MAX_USAGE: [
        ([("counting_tool", f'{{"value": "{v}"}}') for v in ("one", "two", "three", "four")], "tool_calls"),
        ([("counting_tool", f'{{"value": "{v}"}}') for v in ("two", "three", "four")], "tool_calls"),
        ([("counting_tool", '{"value":"three"}')], "tool_calls"),  # later turns: compact JSON
        ([("counting_tool", '{"value":"four"}')], "tool_calls"),
        ([], "stop"),
    ],
    FAILING_TOOL: [([("failing_tool", "{}")], "tool_calls"), ([], "stop"), ([], "stop")],
    # MANIFEST lists no calls but an "Expected reading" of one: extract_student_info (its own test below)
    LEGACY: [([("extract_student_info", "{")], "function_call")],
    AG_UI: [([("get_weather", '{"city":"Paris"}')], "tool_calls"), ([], "stop"), ([], "stop"), ([], "stop")],
    AZURE_PARALLEL: [
        (
            [
                ("parallel_local_search_one", '{"query": "latest OpenAI model release n'),
                ("parallel_local_search_two", '{"query": "latest Anthropic model releas'),
                ("parallel_local_search_three", '{"query": "latest Gemini model release n'),
            ],
            "tool_calls",
        ),
        ([], "stop"),
    ],
    GEMINI_OPENAI: [([("get_current_time", "{}")], "tool_calls"), ([], "stop")],
}

# (tool names, SSE events without the [DONE] the MANIFEST counts too, arg deltas, stop reason); the
# text-only answer lists no arg deltas: none of its fragments carries arguments
STREAMS = {
    STREAMING: [Stream(["get_weather"], 12 - 1, 8, "tool_calls")],
    PARALLEL_STREAM: [Stream(["get_current_weather", "get_current_weather"], 19 - 1, 13, "tool_calls")],
    RUN_STREAM: [Stream(["get_capital"], 9 - 1, 5, "tool_calls"), Stream([], 12 - 1, 0, "stop")],
    AZURE_STREAM: [Stream(["get_current_temperature"], 11 - 1, 6, "tool_calls")],
    MISTRAL_STREAM: [Stream(["get_weather"], 3 - 1, 1, "tool_calls")],
}

# §1e: (status, kind, error.code, message preview): 404 model_not_found, 401 invalid_api_key (headers
# stripped), 400 invalid_request_error with code null (the kind's type stands in for it)
ERRORS = {
    ERROR_404: Error(
        404,
        "not_found",
        "model_not_found",
        "The model `non-existent-model` does not exist or you do not have access to it.",
    ),
    ERROR_401: Error(
        401,
        "auth",
        "invalid_api_key",
        "Incorrect API key provided: sk-. You can find your API key at https://platform.openai.com/account",
    ),
    ERROR_400: Error(
        400, "invalid_request", "invalid_request_error", "Web search options not supported with this model."
    ),
}


def _naive_chunks(body: bytes) -> list[dict[str, Any]]:
    """The ``data:`` payloads of a whole body; every recorded Chat stream ends with [DONE] (§1d)."""
    assert sse_done(body)
    return naive_sse(body)


def _naive_reading(chunks: list[dict[str, Any]]) -> NaiveReading:
    """Accumulate ``delta.tool_calls`` by index as §9 rule 2 says (position when there is no index);
    text from ``delta.content``; usage from the last chunk that has one (the include_usage chunk, or
    Mistral's usage on the finish chunk)."""
    calls: dict[int, dict[str, Any]] = {}
    deltas = 0
    content = []
    for chunk in chunks:
        for choice in chunk.get("choices") or []:
            delta = choice.get("delta") or {}
            content.append(delta.get("content") or "")
            for position, frag in enumerate(delta.get("tool_calls") or []):
                call = calls.setdefault(frag.get("index", position), {"id": "", "name": "", "arguments": ""})
                call["id"] = call["id"] or frag.get("id") or ""
                call["name"] = call["name"] or (frag.get("function") or {}).get("name") or ""
                fragment = (frag.get("function") or {}).get("arguments") or ""
                call["arguments"] += fragment
                deltas += bool(fragment)
    naive = [calls[k] for k in sorted(calls)]
    usages = [c["usage"] for c in chunks if c.get("usage")]
    last = usages[-1]
    usage = {
        "input_tokens": last["prompt_tokens"],
        "output_tokens": last["completion_tokens"],
        "total_tokens": last["total_tokens"],
    }
    return NaiveReading(
        [NaiveCall(c["name"], json.loads(c["arguments"]), c["arguments"], c["id"]) for c in naive],
        "".join(content),
        usage,
        deltas,
    )


def _check_call(call: ToolCall) -> None:
    assert call.arguments == json.loads(call.arguments_raw)
    assert call.id


# Letters that never occur in a JSON escape (\b \f \n \r \t \uXXXX), mapped to 2-, 3- and 4-byte code points
_WIDE = str.maketrans({"o": "ø", "i": "日", "s": "ş", "l": "ł", "y": "🙂"})


def _widened(body: bytes) -> bytes:
    """The recorded stream with its text and argument fragments made multi-byte (E1): each fragment
    is mapped on its own, so the fragments still concatenate to valid JSON."""
    lines = []
    for line in body.split(b"\n"):
        if line.startswith(b"data: {"):
            chunk = json.loads(line[len(b"data: ") :])
            for choice in chunk.get("choices") or []:
                delta = choice.get("delta") or {}
                if isinstance(delta.get("content"), str):
                    delta["content"] = delta["content"].translate(_WIDE)
                for fragment in delta.get("tool_calls") or []:
                    function = fragment.get("function") or {}
                    if isinstance(function.get("arguments"), str):
                        function["arguments"] = function["arguments"].translate(_WIDE)
            line = b"data: " + json.dumps(chunk, ensure_ascii=False).encode()
        lines.append(line)
    return b"\n".join(lines)


def _utf8_stream() -> bytes:
    (interaction,) = SPEC.cassette(PARALLEL_STREAM)
    assert interaction.response is not None
    return _widened(interaction.response.body)


def _check_utf8_fold(folded: Response) -> None:
    assert [c.arguments for c in folded.tool_calls] == [
        {"location".translate(_WIDE): "Seattle, WA".translate(_WIDE)},
        {"location".translate(_WIDE): "San Francisco, CA".translate(_WIDE)},
    ]


SPEC = RealWorld(
    name="openai_chat",
    adapter=adapter,
    # MANIFEST: 10 openai_chat files; other/ holds Azure x2, Mistral and Gemini's OpenAI endpoint
    files=(10, 4),
    # Azure's deployment path, Mistral's #stream and Gemini's /v1beta/openai are not kept: the
    # adapter speaks /v1/chat/completions and the runner owns the base URL
    wire_path=lambda interaction: "/v1/chat/completions",
    finish={"stop": "stop", "tool_calls": "tool_calls", "function_call": "tool_calls"},
    non_stream_calls=NON_STREAM_CALLS,
    preview_of=lambda call: call.arguments_raw,  # MANIFEST copies the wire's argument string
    check_call=_check_call,
    streams=STREAMS,
    naive_chunks=_naive_chunks,
    naive_reading=_naive_reading,
    errors=ERRORS,
    error_message_is_prefix=True,  # the 401 preview is cut; test_error_messages_are_the_recorded_ones
    utf8_stream=_utf8_stream,
    utf8_min=15,
    check_utf8_fold=_check_utf8_fold,
)


def _params(streams_only: bool = False) -> list[Any]:
    """``(path, interaction)`` for every interaction routed here (only the streamed ones with
    ``streams_only``)."""
    return [
        pytest.param(p, i, id=interaction_id(SPEC, p, i))
        for p, i in SPEC.interactions()
        if not streams_only or (i.response is not None and is_streaming(i))
    ]


# --------------------------------------------------------------------------------------------
# Every interaction
# --------------------------------------------------------------------------------------------


def test_six_streams_are_found() -> None:
    assert len([i for _, i in SPEC.interactions() if i.response is not None and is_streaming(i)]) == 6


@pytest.mark.parametrize(("path", "interaction"), _params())
def test_every_interaction_reads_as_the_manifest_says(
    path: Path, interaction: Interaction, realworld_manifest: dict[str, Any]
) -> None:
    entry = realworld_manifest[f"{path.parent.name}/{path.name}"]
    expected = entry.interactions[interaction.index]
    response = interaction.response
    assert response is not None and response.status == expected.status
    request = adapter.request_from_wire(interaction.request.json)
    results = [p for m in request.messages for p in m.parts if isinstance(p, ToolResult)]
    assert len(results) == expected.tool_results
    assert (interaction.request.json.get("stream") is True) is is_streaming(interaction)
    if expected.status >= 400:
        return  # test_realworld.py::test_errors_map_to_the_right_kind
    if is_streaming(interaction):
        events = SPEC.events(response.body)
        assert lifecycle_problems(events) == []
        folded = fold(events)
        assert len(naive_sse(response.body)) + 1 == expected.sse_events  # the MANIFEST counts [DONE] too
        assert [c.name for c in folded.tool_calls] == (expected.streamed_tool_calls or [])
        if expected.arg_deltas is not None:
            assert sum(isinstance(e, ToolCallChunk) for e in events) == expected.arg_deltas
    else:
        folded = adapter.response_from_wire(response.json)
        # the legacy file lists no calls but an "Expected reading" of one (its own test below)
        want = expected.tool_calls or ([] if entry.expected_reading is None else [("extract_student_info", "{")])
        assert [c.name for c in folded.tool_calls] == [name for name, _ in want]
        for call, (_, preview) in zip(folded.tool_calls, want, strict=True):
            assert call.arguments_raw.startswith(preview)
    assert folded.provider_details["finish_reason"] == expected.stop
    assert (
        folded.finish_reason
        == {"stop": "stop", "tool_calls": "tool_calls", "function_call": "tool_calls"}[expected.stop or ""]
    )
    for call in folded.tool_calls:
        assert call.arguments_error is None and call.arguments == json.loads(call.arguments_raw)
        assert call.id


# --------------------------------------------------------------------------------------------
# One file each
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_error_messages_are_the_recorded_ones(name: str) -> None:
    (interaction,) = SPEC.cassette(name)
    response = interaction.response
    assert response is not None
    error = adapter.error_from_wire(response.status, response.headers, response.body)
    assert error.message == response.json["error"]["message"]


def test_legacy_function_call_reads_as_one_call_with_a_synthetic_stable_id() -> None:
    (interaction,) = SPEC.cassette(LEGACY)
    body = interaction.request.json
    assert "functions" in body and body["function_call"] == "auto"  # E35
    request = adapter.request_from_wire(body)
    assert [t.name for t in request.tools] == ["extract_student_info"] and request.tool_choice == "auto"
    assert interaction.response is not None
    raw = interaction.response.json
    response = adapter.response_from_wire(raw)
    (call,) = response.tool_calls  # MANIFEST "Expected reading"
    wire_call = raw["choices"][0]["message"]["function_call"]
    assert call.name == "extract_student_info"
    assert call.arguments_raw == wire_call["arguments"]
    assert call.arguments == json.loads(wire_call["arguments"])
    assert response.finish_reason == "tool_calls" and response.provider_details["finish_reason"] == "function_call"
    assert call.id and call.id == adapter.response_from_wire(json.loads(interaction.response.body)).tool_calls[0].id


def test_gemini_openai_endpoint_empty_id_gets_a_deterministic_id() -> None:
    first, second = SPEC.cassette(GEMINI_OPENAI)
    assert first.response is not None
    raw = first.response.json
    assert raw["choices"][0]["message"]["tool_calls"][0]["id"] == ""  # E27
    (call,) = adapter.response_from_wire(raw).tool_calls
    assert call.id and call.id.startswith("call_")
    again = adapter.response_from_wire(json.loads(first.response.body))
    assert again.tool_calls[0].id == call.id  # same bytes, same id
    assert (call.name, call.arguments) == ("get_current_time", {})
    usage = adapter.response_from_wire(raw).usage
    assert usage is not None and (usage.input_tokens, usage.output_tokens, usage.total_tokens) == (35, 12, 109)
    # the second request replays pydantic-ai's own id; extra_content/thought_signature are not in the request
    request = adapter.request_from_wire(second.request.json)
    (result,) = [p for m in request.messages for p in m.parts if isinstance(p, ToolResult)]
    (replayed,) = [p for m in request.messages for p in m.parts if isinstance(p, ToolCall)]
    assert result.call_id == replayed.id == "pyd_ai_cee885c699414386a7e14b7ec43cadbc"


def test_azure_stream_skips_the_prompt_filter_chunk() -> None:
    (interaction,) = SPEC.cassette(AZURE_STREAM)
    assert interaction.response is not None
    chunks = naive_sse(interaction.response.body)
    assert chunks[0]["choices"] == [] and "prompt_filter_results" in chunks[0]  # E24
    events = SPEC.events(interaction.response.body)
    assert lifecycle_problems(events) == []
    (call,) = fold(events).tool_calls
    assert (call.name, call.arguments) == ("get_current_temperature", {"city": "San Francisco"})


def test_mistral_whole_call_without_index_in_the_finish_chunk() -> None:
    (interaction,) = SPEC.cassette(MISTRAL_STREAM)
    assert interaction.request.json["tool_choice"] == "any"  # E25
    request = adapter.request_from_wire(interaction.request.json)
    assert request.tool_choice == "required"
    assert interaction.response is not None
    events = SPEC.events(interaction.response.body)
    assert lifecycle_problems(events) == []
    response = fold(events)
    (call,) = response.tool_calls
    assert (call.id, call.name, call.arguments) == ("EscTeQY62", "get_weather", {"city": "San Francisco"})
    assert response.finish_reason == "tool_calls"
    assert response.usage is not None and response.usage.total_tokens == 119


def test_parallel_streamed_calls_interleave_by_index() -> None:
    (interaction,) = SPEC.cassette(PARALLEL_STREAM)
    assert interaction.response is not None
    events = SPEC.events(interaction.response.body)
    calls = fold(events).tool_calls
    assert [c.arguments for c in calls] == [{"location": "Seattle, WA"}, {"location": "San Francisco, CA"}]
    assert len({c.id for c in calls}) == 2


def test_text_then_call_history_round_trip_and_text_stream() -> None:
    first, second = SPEC.cassette(RUN_STREAM)
    assert first.response is not None and second.response is not None
    (call,) = fold(SPEC.events(first.response.body)).tool_calls
    request = adapter.request_from_wire(second.request.json)
    (replayed,) = [p for m in request.messages for p in m.parts if isinstance(p, ToolCall)]
    assert (replayed.id, replayed.name, replayed.arguments) == (call.id, call.name, call.arguments)
    events = SPEC.events(second.response.body)
    assert all(e.text for e in events if isinstance(e, TextDelta))  # the first delta has content ""
    assert fold(events).text == "The capital of the UK is London."
    assert sum(isinstance(e, UsageEvent) for e in events) == 1


# --------------------------------------------------------------------------------------------
# Chunk invariance (E1) over every recorded stream made multi-byte (the recorded bytes are
# test_realworld.py's); cuts are drawn inside code points as often as anywhere
# --------------------------------------------------------------------------------------------


def _widened_body(interaction: Interaction) -> bytes:
    assert interaction.response is not None
    return _widened(interaction.response.body)


@pytest.mark.parametrize(("path", "interaction"), _params(streams_only=True))
def test_multibyte_single_byte_chunks_give_the_same_events(path: Path, interaction: Interaction) -> None:
    body = _widened_body(interaction)
    whole = SPEC.events(body)
    split = SPEC.events(body, [body[i : i + 1] for i in range(len(body))])
    assert split == whole
    assert lifecycle_problems(split) == []
    naive = _naive_reading(_naive_chunks(body))
    assert [c.arguments for c in fold(whole).tool_calls] == [n.arguments for n in naive.calls]


@pytest.mark.parametrize(("path", "interaction"), _params(streams_only=True))
@settings(max_examples=30, deadline=None)
@given(data=st.data())
def test_multibyte_random_cuts_give_the_same_events(path: Path, interaction: Interaction, data: st.DataObject) -> None:
    body = _widened_body(interaction)
    inside = [i for i in range(1, len(body)) if 0x80 <= body[i] < 0xC0]  # continuation bytes: mid code point
    positions = st.sampled_from(inside) if inside else st.integers(0, len(body))
    cuts = sorted(data.draw(st.sets(st.integers(0, len(body)) | positions, max_size=40)))
    pieces = [body[a:b] for a, b in zip([0, *cuts], [*cuts, len(body)], strict=True)]
    assert b"".join(pieces) == body
    events = SPEC.events(body, pieces)
    assert events == SPEC.events(body)
    assert lifecycle_problems(events) == []
