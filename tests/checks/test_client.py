"""The ``client`` family and the normalisations that let the shared checks judge a black-box
client's own body by its meaning (expected values from JSON Schema 2020-12 and the Gemini API
reference, not from our output)."""

from __future__ import annotations

from conformance.checks import FAMILIES
from conformance.checks._common import unwrapped_results, without_details
from conformance.checks._meaning import canonical_schema as _canonical_schema
from conformance.model import Message, Request, Text, Tool, ToolCall, ToolResult


def test_the_client_family_is_registered_and_silent_on_an_adapter_case() -> None:
    from pathlib import Path

    from conformance.adapters import for_format
    from conformance.checks.client import check_client
    from conformance.run.runner import RunOptions, run_suite
    from conformance.scenarios.loader import load_scenarios

    assert FAMILIES["client"] is check_client
    scenarios = [s for s in load_scenarios([]).scenarios if s.id == "basic/get_time"]
    cassettes = Path(__file__).resolve().parents[2] / "cassettes"
    result = run_suite(scenarios, [for_format("openai_chat")], RunOptions(cassette_dir=cassettes))
    ran = {v.check for case in result.cases for v in case.checks}
    assert ran and not {c for c in ran if c.startswith("client.")}
    # each client.* check failing on a client with the defect: tests/clients/test_harness.py


def test_canonical_schema_drops_what_constrains_nothing_and_keeps_what_does() -> None:
    mcp = {
        "type": "object",
        "title": "get_timeArguments",
        "properties": {
            "offset_ms": {"type": "integer", "title": "Offset Ms", "minimum": 0},
            "title": {"type": "string"},  # a property named "title" is not the annotation
        },
        "required": ["offset_ms"],
    }
    gemini_sdk = {
        "type": "OBJECT",
        "properties": {"offset_ms": {"type": "INTEGER", "minimum": 0.0}, "title": {"type": "STRING"}},
        "required": ["offset_ms"],
    }
    assert _canonical_schema(mcp) == _canonical_schema(gemini_sdk)
    assert _canonical_schema({"type": "object", "properties": {}, "$schema": "x"}) == {"type": "object"}
    loosened = {**gemini_sdk, "required": []}
    assert _canonical_schema(mcp) != _canonical_schema(loosened)
    assert _canonical_schema({"type": ["STRING", "NULL"]}) == {"type": ["string", "null"]}
    assert _canonical_schema({"type": "number", "maximum": 1.5}) == {"type": "number", "maximum": 1.5}


def result(text: str) -> Request:
    return Request(messages=(Message(role="tool", parts=(ToolResult(call_id="c", content=(Text(text=text),)),)),))


def text_of(request: Request) -> str:
    part = request.messages[0].parts[0]
    assert isinstance(part, ToolResult) and isinstance(part.content[0], Text)
    return part.content[0].text


def test_a_result_wrapped_in_a_one_key_object_is_compared_by_its_text() -> None:
    assert text_of(unwrapped_results(result('{"return_value": "14°C"}'))) == "14°C"
    assert text_of(unwrapped_results(result('{"error": "boom"}'))) == "boom"
    for kept in ('{"a": "x", "b": "y"}', '{"value": 3}', "plain text", "[1, 2]"):
        assert text_of(unwrapped_results(result(kept))) == kept


def test_without_details_empties_provider_details_at_every_depth_or_only_the_keys_named() -> None:
    call = ToolCall(id="c", name="f", arguments={}, provider_details={"spelling": {"a": "b"}, "sig": "s"})
    request = Request(
        messages=(Message(role="assistant", parts=(call,), provider_details={"x": 1}),),
        tools=(Tool(name="f", provider_details={"schema_field": "parameters"}),),
        provider_details={"spelling": {}},
    )
    bare = without_details(request)
    assert bare.provider_details == {} and bare.messages[0].provider_details == {}
    assert bare.messages[0].parts[0].provider_details == {} and bare.tools[0].provider_details == {}
    spelled = without_details(request, only=("spelling",))
    assert spelled.messages[0].parts[0].provider_details == {"sig": "s"}
    assert spelled.tools[0].provider_details == {"schema_field": "parameters"}
