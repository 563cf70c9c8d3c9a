"""``conformance.adapters.openai_chat`` against real recorded traffic, and chunk invariance.

Expected values come from ``shared/realworld/MANIFEST.md`` (openai_chat section, and the ``other/``
files whose URL ``detect_adapter`` routes to ``openai_chat``: Azure, Mistral, Gemini's OpenAI
endpoint) and from the recorded bytes themselves, read here with a naive whole-body parser that is
independent of the adapter; never from the adapter's own output. The cassettes are read in place
from ``../shared/realworld`` next to the repository and the tests skip when it is absent.

Edge cases of wire-formats.md §10 seen in these recordings: E3/E6 (id only in the first fragment,
``arguments: ""`` first), E24 (Azure filter chunk), E25 (Mistral whole call without index), E27
(Gemini ``id: ""``), E35 (legacy ``function_call``), E1 (chunk invariance, below). The hand-made
cases are in ``test_openai_chat_streams.py`` and ``test_openai_chat_requests.py``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from deepdiff import DeepDiff
from hypothesis import given, settings
from hypothesis import strategies as st

from conformance.adapters import detect_adapter
from conformance.adapters import openai_chat as adapter
from conformance.assembly import fold, lifecycle_problems
from conformance.model import StreamEvent, TextDelta, ToolCall, ToolCallChunk, ToolResult, UsageEvent
from conformance.traffic.cassettes import Interaction, is_streaming, load_cassette

REPO_ROOT = Path(__file__).resolve().parents[2]
CASSETTES = REPO_ROOT.parent / "shared" / "realworld" / "cassettes"
MISSING = f"real cassettes not found at {CASSETTES} (shared/realworld must sit next to the repository)"

pytestmark = pytest.mark.realworld


def _ours(path: Path) -> list[Interaction]:
    return [
        i for i in load_cassette(path).interactions if detect_adapter(i.request.uri, i.request.json) == "openai_chat"
    ]


def _files() -> list[Path]:
    if not CASSETTES.is_dir():
        return []
    return sorted((CASSETTES / "openai_chat").glob("*.yaml")) + [
        p for p in sorted((CASSETTES / "other").glob("*.yaml")) if _ours(p)
    ]


FILES = _files()
INTERACTIONS = [(p, i) for p in FILES for i in _ours(p)]
STREAMS = [(p, i) for p, i in INTERACTIONS if i.response is not None and is_streaming(i)]


def _params(items: list[tuple[Path, Interaction]]) -> list[Any]:
    if not items:
        return [pytest.param(None, None, marks=pytest.mark.skip(reason=MISSING))]
    return [pytest.param(p, i, id=f"{p.parent.name}/{p.name}#{i.index}") for p, i in items]


def _events(chunks: list[bytes]) -> list[StreamEvent]:
    return list(adapter.stream_from_wire(chunks))


def _cassette(relative: str) -> list[Interaction]:
    path = CASSETTES / relative
    if not path.is_file():
        pytest.skip(MISSING)
    return _ours(path)


# --------------------------------------------------------------------------------------------
# A naive reference reading of a recorded SSE body (independent of the adapter)
# --------------------------------------------------------------------------------------------


def _naive_chunks(body: bytes) -> tuple[list[dict[str, Any]], bool]:
    """The ``data:`` payloads of a whole body (split on blank lines), and whether ``[DONE]`` came."""
    payloads = [line[len("data:") :].strip() for line in body.decode("utf-8").split("\n") if line.startswith("data:")]
    done = payloads[-1] == "[DONE]"
    return [json.loads(p) for p in payloads if p != "[DONE]"], done


def _naive_calls(chunks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Accumulate ``delta.tool_calls`` by index as §9 rule 2 says (position when there is no index)."""
    calls: dict[int, dict[str, Any]] = {}
    for chunk in chunks:
        for choice in chunk.get("choices") or []:
            for position, frag in enumerate((choice.get("delta") or {}).get("tool_calls") or []):
                call = calls.setdefault(frag.get("index", position), {"id": "", "name": "", "arguments": ""})
                call["id"] = call["id"] or frag.get("id") or ""
                call["name"] = call["name"] or (frag.get("function") or {}).get("name") or ""
                call["arguments"] += (frag.get("function") or {}).get("arguments") or ""
    return [calls[k] for k in sorted(calls)]


# --------------------------------------------------------------------------------------------
# Every interaction
# --------------------------------------------------------------------------------------------


def test_the_recordings_are_found() -> None:
    if not CASSETTES.is_dir():
        pytest.skip(MISSING)
    # MANIFEST: 10 openai_chat files; other/ holds Azure x2, Mistral and Gemini's OpenAI endpoint
    assert len([p for p in FILES if p.parent.name == "openai_chat"]) == 10
    assert len([p for p in FILES if p.parent.name == "other"]) == 4
    assert len(STREAMS) == 6


@pytest.mark.parametrize(("path", "interaction"), _params(INTERACTIONS))
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
    if expected.status >= 400:
        return  # test_recorded_errors_map_to_their_kind
    if is_streaming(interaction):
        events = _events([response.body])
        assert lifecycle_problems(events) == []
        folded = fold(events)
        chunks, _ = _naive_chunks(response.body)
        assert len(chunks) + 1 == expected.sse_events  # the MANIFEST counts [DONE] too
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


@pytest.mark.parametrize(("path", "interaction"), _params(INTERACTIONS))
def test_every_recorded_request_round_trips_json_equal(path: Path, interaction: Interaction) -> None:
    body = interaction.request.json
    wire = adapter.request_to_wire(adapter.request_from_wire(body))
    # the documented normalisation (a tool without parameters) applies to none of the recordings
    assert DeepDiff(body, wire.body) == {}
    assert wire.path == "/v1/chat/completions"
    assert wire.stream is (body.get("stream") is True)


@pytest.mark.parametrize(("path", "interaction"), _params(STREAMS))
def test_streams_fold_to_the_calls_of_a_naive_whole_body_reading(path: Path, interaction: Interaction) -> None:
    assert interaction.response is not None
    body = interaction.response.body
    chunks, done = _naive_chunks(body)
    assert done  # every recorded Chat stream ends with [DONE] (§1d)
    folded = fold(_events([body]))
    naive = _naive_calls(chunks)
    assert [(c.id, c.name, c.arguments_raw) for c in folded.tool_calls] == [
        (n["id"], n["name"], n["arguments"]) for n in naive
    ]
    assert [c.arguments for c in folded.tool_calls] == [json.loads(n["arguments"]) for n in naive]
    content = "".join(
        (choice.get("delta") or {}).get("content") or "" for c in chunks for choice in c.get("choices") or []
    )
    assert folded.text == content
    usages = [c["usage"] for c in chunks if c.get("usage")]
    if usages:  # include_usage chunk (or Mistral's usage on the finish chunk): the last one wins
        assert folded.usage is not None
        last = usages[-1]
        assert (folded.usage.input_tokens, folded.usage.output_tokens, folded.usage.total_tokens) == (
            last["prompt_tokens"],
            last["completion_tokens"],
            last["total_tokens"],
        )


# --------------------------------------------------------------------------------------------
# One file each
# --------------------------------------------------------------------------------------------


def test_recorded_errors_map_to_their_kind() -> None:
    cases = {
        # §1e: 404 model_not_found, 401 invalid_api_key (headers stripped), 400 invalid_request_error, code null
        "openai_chat/crewai__test_llm_call_with_error.yaml": (404, "not_found", "model_not_found"),
        "openai_chat/openinference__test_error_status_code_and_exception_events_with_invalid_api_key.yaml": (
            401,
            "auth",
            "invalid_api_key",
        ),
        "openai_chat/pydantic-ai__test_openai_web_search_tool_model_not_supported.yaml": (
            400,
            "invalid_request",
            "invalid_request_error",
        ),
    }
    for relative, (status, kind, code) in cases.items():
        (interaction,) = _cassette(relative)
        response = interaction.response
        assert response is not None and response.status == status
        error = adapter.error_from_wire(response.status, response.headers, response.body)
        assert (error.status, error.kind, error.info.code) == (status, kind, code)
        assert error.message == response.json["error"]["message"]
        assert error.retry_after is None


def test_legacy_function_call_reads_as_one_call_with_a_synthetic_stable_id() -> None:
    (interaction,) = _cassette("openai_chat/dd-trace-py__chat_completion_function_call.yaml")
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
    first, second = _cassette("other/pydantic-ai__test_compatible_api_with_tool_calls_without_id.yaml")
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
    (interaction,) = _cassette(
        "other/crewai__TestAzureToolCallStreaming.test_azure_streaming_emits_tool_call_events.yaml"
    )
    assert interaction.response is not None
    chunks, _ = _naive_chunks(interaction.response.body)
    assert chunks[0]["choices"] == [] and "prompt_filter_results" in chunks[0]  # E24
    events = _events([interaction.response.body])
    assert lifecycle_problems(events) == []
    (call,) = fold(events).tool_calls
    assert (call.name, call.arguments) == ("get_current_temperature", {"city": "San Francisco"})


def test_mistral_whole_call_without_index_in_the_finish_chunk() -> None:
    (interaction,) = _cassette(
        "other/openinference__test_synchronous_streaming_chat_completions_with_tool_call_response_emits_expected_spans[False].yaml"
    )
    assert interaction.request.json["tool_choice"] == "any"  # E25
    request = adapter.request_from_wire(interaction.request.json)
    assert request.tool_choice == "required"
    assert interaction.response is not None
    events = _events([interaction.response.body])
    assert lifecycle_problems(events) == []
    response = fold(events)
    (call,) = response.tool_calls
    assert (call.id, call.name, call.arguments) == ("EscTeQY62", "get_weather", {"city": "San Francisco"})
    assert response.finish_reason == "tool_calls"
    assert response.usage is not None and response.usage.total_tokens == 119


def test_parallel_streamed_calls_interleave_by_index() -> None:
    (interaction,) = _cassette(
        "openai_chat/otel-python-contrib__test_chat_completion_multiple_tools_streaming_with_content.yaml"
    )
    assert interaction.response is not None
    events = _events([interaction.response.body])
    calls = fold(events).tool_calls
    assert [c.arguments for c in calls] == [{"location": "Seattle, WA"}, {"location": "San Francisco, CA"}]
    assert len({c.id for c in calls}) == 2


def test_text_then_call_history_round_trip_and_text_stream() -> None:
    first, second = _cassette("openai_chat/pydantic-ai__test_run_stream_sync_streams_real_model.yaml")
    assert first.response is not None and second.response is not None
    (call,) = fold(_events([first.response.body])).tool_calls
    request = adapter.request_from_wire(second.request.json)
    (replayed,) = [p for m in request.messages for p in m.parts if isinstance(p, ToolCall)]
    assert (replayed.id, replayed.name, replayed.arguments) == (call.id, call.name, call.arguments)
    events = _events([second.response.body])
    assert all(e.text for e in events if isinstance(e, TextDelta))  # the first delta has content ""
    assert fold(events).text == "The capital of the UK is London."
    assert sum(isinstance(e, UsageEvent) for e in events) == 1


# --------------------------------------------------------------------------------------------
# Chunk invariance (E1) over every recorded Chat-format stream
# --------------------------------------------------------------------------------------------


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


def _bodies(interaction: Interaction, wide: bool) -> bytes:
    assert interaction.response is not None
    return _widened(interaction.response.body) if wide else interaction.response.body


@pytest.mark.parametrize("wide", [False, True], ids=["recorded", "multibyte"])
@pytest.mark.parametrize(("path", "interaction"), _params(STREAMS))
def test_single_byte_chunks_give_the_same_events(path: Path, interaction: Interaction, wide: bool) -> None:
    body = _bodies(interaction, wide)
    whole = _events([body])
    split = _events([body[i : i + 1] for i in range(len(body))])
    assert split == whole
    assert lifecycle_problems(split) == []
    naive = _naive_calls(_naive_chunks(body)[0])
    assert [c.arguments for c in fold(whole).tool_calls] == [json.loads(n["arguments"]) for n in naive]


@pytest.mark.parametrize("wide", [False, True], ids=["recorded", "multibyte"])
@pytest.mark.parametrize(("path", "interaction"), _params(STREAMS))
@settings(max_examples=30, deadline=None)
@given(data=st.data())
def test_random_cuts_give_the_same_events(
    path: Path, interaction: Interaction, wide: bool, data: st.DataObject
) -> None:
    body = _bodies(interaction, wide)
    inside = [i for i in range(1, len(body)) if 0x80 <= body[i] < 0xC0]  # continuation bytes: mid code point
    positions = st.sampled_from(inside) if inside else st.integers(0, len(body))
    cuts = sorted(data.draw(st.sets(st.integers(0, len(body)) | positions, max_size=40)))
    pieces = [body[a:b] for a, b in zip([0, *cuts], [*cuts, len(body)], strict=True)]
    assert b"".join(pieces) == body
    events = _events(pieces)
    assert events == _events([body])
    assert lifecycle_problems(events) == []
