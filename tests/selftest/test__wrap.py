"""Tests for ``conformance.selftest._wrap``: the wrappers change nothing but what they are told to
(identity rewrites leave every bundled case as the reference decodes it), and the small rewrites
(SSE data, NDJSON lines, call renaming, partial-JSON salvage) do exactly what they say."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import pytest

from conformance.adapters import get_adapter
from conformance.adapters.base import Adapter
from conformance.assembly import fold
from conformance.model import (
    ErrorInfo,
    Finish,
    ReasoningDelta,
    StreamEvent,
    TextDelta,
    Tool,
    ToolCallChunk,
    ToolCallEnd,
    ToolCallStart,
    Usage,
    UsageEvent,
)
from conformance.run.runner import RunOptions
from conformance.scenarios.values import Scenario
from conformance.selftest import Mutant, run_mutant
from conformance.selftest._wrap import (
    decoded_events,
    each_chunk,
    map_ndjson,
    map_sse_data,
    rename_calls,
    request_body,
    response_body,
    response_events,
    salvage_partial_json,
    stream_bytes,
    typed_error,
)
from tests.selftest._support import NATIVE, References


def _same(value: Any) -> Any:
    return value


def _same_events(events: list[StreamEvent], tools: Sequence[Tool]) -> list[StreamEvent]:
    return events


def _transparent(adapter: Adapter) -> dict[str, Any]:
    """Every wrapper at once, each with an identity rewrite (stream bytes re-serialized as parsed JSON)."""
    framed = map_ndjson if adapter.wire_format == "ollama" else map_sse_data
    patched = replace(adapter, **decoded_events(adapter, _same_events))
    patched = replace(patched, **stream_bytes(patched, lambda data: framed(data, _same)))
    patched = replace(patched, **each_chunk(patched, _same))
    patched = replace(patched, **response_body(patched, _same))
    patched = replace(patched, **request_body(patched, _same))
    patched = replace(patched, **typed_error(patched, _same))
    fields = ("request_to_wire", "response_from_wire", "stream_from_wire", "error_from_wire")
    return {f: getattr(patched, f) for f in fields}


@pytest.mark.parametrize("base", NATIVE)
def test_identity_rewrites_leave_every_bundled_case_unchanged(
    base: str, scenarios: Sequence[Scenario], options: RunOptions, references: References
) -> None:
    mutant = Mutant(base=base, bug="transparent", description="identity", source="(control)", patch=_transparent)
    reference, _ = references(base)
    result = run_mutant(mutant, scenarios, options, reference)
    assert result.status == "survived", result.kills[:3]
    assert result.cases == len(reference)


def test_response_events_fold_back_to_the_same_response() -> None:
    events: list[StreamEvent] = [
        ReasoningDelta("thinking", signature="sig", source="anthropic"),
        ReasoningDelta(redacted="opaque", source="anthropic"),
        ReasoningDelta(redacted="gAAAA", provider_details={"id": "rs_1", "type": "reasoning"}, source="anthropic"),
        TextDelta("Let me look."),
        ToolCallStart("call_1", "get_weather", 0, {"item_id": "fc_1"}),
        ToolCallChunk("call_1", '{"city":"Paris"}'),
        ToolCallEnd("call_1", '{"city":"Paris"}', {"city": "Paris"}),
        ToolCallStart("call_2", "get_weather", 1),
        ToolCallChunk("call_2", '{"city":'),
        ToolCallEnd("call_2", '{"city":', None, "invalid JSON"),
        UsageEvent(Usage(input_tokens=3, output_tokens=4)),
        Finish("tool_calls", "tool_use"),
    ]
    response = fold(events, provider_details={"id": "msg_1"})
    assert fold(response_events(response), provider_details={"id": "msg_1"}) == response


def test_map_sse_data_rewrites_json_data_and_keeps_the_rest_byte_for_byte() -> None:
    data = (
        b'event: message_start\r\ndata: {"type": "a" }\r\n\r\n'
        b"data: [DONE]\n\n"
        b": comment\n\n"
        b'data: {"type":"drop"}\n\n'
        b'data: {"type":"b"}'
    )

    def rewrite(value: Any) -> Any:
        return None if value["type"] == "drop" else {**value, "seen": True}

    assert map_sse_data(data, rewrite) == (
        b'event: message_start\r\ndata: {"type":"a","seen":true}\r\n\r\n'
        b"data: [DONE]\n\n"
        b": comment\n\n"
        b'data: {"type":"b","seen":true}'
    )


def test_map_ndjson_rewrites_each_json_line_and_keeps_line_ends() -> None:
    data = b'{"done":false}\n{"done":true,"done_reason":"length"}\r\nnot json\n{"x":1}'
    out = map_ndjson(data, lambda v: {**v, "n": 1})
    assert out == b'{"done":false,"n":1}\n{"done":true,"done_reason":"length","n":1}\r\nnot json\n{"x":1,"n":1}'


def test_rename_calls_renames_start_chunks_and_end_together() -> None:
    events: list[StreamEvent] = [
        ToolCallStart("a", "x", 0),
        ToolCallChunk("a", "{}"),
        ToolCallEnd("a", "{}", {}),
        Finish("tool_calls"),
    ]
    renamed = rename_calls(events, lambda s: ("b", s.tool_call_name + "_wire"))
    assert renamed == [
        ToolCallStart("b", "x_wire", 0),
        ToolCallChunk("b", "{}"),
        ToolCallEnd("b", "{}", {}),
        Finish("tool_calls"),
    ]


@pytest.mark.parametrize(
    ("text", "salvaged"),
    [
        # partial-json style: the longest prefix that closes into an object (earendil-works/pi#6284)
        ('{"city":"Par', {"city": "Par"}),
        ('{"city":"Paris","unit":', {"city": "Paris"}),
        ('{"path":"C:\\', {"path": "C:"}),
        ('{"tags":["a","b', {"tags": ["a", "b"]}),
        ('{"a":{"b":1}', {"a": {"b": 1}}),
        ("", {}),
        ("[1, 2", {}),
        ("not json", {}),
    ],
)
def test_salvage_partial_json(text: str, salvaged: dict[str, Any]) -> None:
    assert salvage_partial_json(text) == salvaged


def test_typed_error_keeps_the_error_type_and_rewrites_its_info() -> None:
    adapter = get_adapter("openai_chat")
    patched = replace(adapter, **typed_error(adapter, lambda info: replace(info, retry_after=None)))
    body = b'{"error": {"message": "slow down", "type": "requests", "code": "rate_limit_exceeded"}}'
    original = adapter.error_from_wire(429, {"retry-after": "2"}, body)
    error = patched.error_from_wire(429, {"retry-after": "2"}, body)
    assert original.info.retry_after == 2.0
    assert error.info == ErrorInfo(**{**original.info.__dict__, "retry_after": None})
