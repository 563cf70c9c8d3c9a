"""``conformance.adapters.gemini`` requests: contents, results, ids, signatures and round trips.

Expected values come from the documented wire shapes: wire-formats.md §4b and §8 (google-genai
``types.py``: ``FunctionCall``, ``FunctionResponse``, ``FunctionResponsePart``; ``_extra_utils.py`` for
the ``{"result"}``/``{"error"}`` wrapping), the recorded request shapes of MANIFEST.md, never from
the adapter's own output.

Edge cases of wire-formats.md §10 covered in this file:
- E3  ``args`` absent -> ``{}`` and replayed absent: test_a_call_without_args_is_replayed_without_args
- E10 ``thoughtSignature`` replayed byte for byte, signed empty text part: test_signatures_are_replayed_byte_for_byte,
      test_a_signed_empty_text_part_is_replayed_as_one
- E13 a foreign (client-made) call id is sent as functionCall.id and answered with it: test_client_ids_*
- E16 ``functionResponse.response`` is always an object: test_results_*, test_response_shapes_round_trip
- E18 all results of a turn in one user content, never in the call turn: test_results_*,
      test_parts_a_message_cannot_carry_raise
- E31 ids used when sent, synthesized (stable, not sent) when absent, results matched by order and
      name: test_ids_*, test_id_less_results_*, test_synthetic_ids_*
- E32 snake_case request fields read and written back as spelled: test_snake_case_*,
      test_any_body_of_the_documented_shapes_round_trips
"""

from __future__ import annotations

from typing import Any

import pytest
from deepdiff import DeepDiff
from hypothesis import given, settings
from hypothesis import strategies as st

from conformance.adapters import gemini as adapter
from conformance.adapters._tool_output import left_out_note, placeholder_text
from conformance.errors import UnsupportedContentError, WireFormatError
from conformance.model import (
    Audio,
    Image,
    Message,
    Reasoning,
    Request,
    Resource,
    Text,
    Tool,
    ToolCall,
    ToolResult,
)

SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
WEATHER = Tool(name="get_weather", description="Weather of a city", input_schema=SCHEMA)
TIME = Tool(name="get_time", description="Time in a zone", input_schema={"type": "object", "properties": {}})
USER = Message(role="user", parts=(Text(text="Weather in Paris?"),))


def _body(request: Request) -> dict[str, Any]:
    return adapter.request_to_wire(request).body


# --------------------------------------------------------------------------------------------
# Requests
# --------------------------------------------------------------------------------------------


def test_request_basics_path_system_and_max_tokens() -> None:
    request = Request(model="gemini-2.5-flash", system="Be brief.", messages=(USER,), max_tokens=50)
    wire = adapter.request_to_wire(request)
    assert (wire.method, wire.path, wire.stream) == ("POST", "/v1beta/models/gemini-2.5-flash:generateContent", False)
    assert wire.body == {
        "contents": [{"role": "user", "parts": [{"text": "Weather in Paris?"}]}],
        "systemInstruction": {"parts": [{"text": "Be brief."}]},
        "generationConfig": {"maxOutputTokens": 50},
    }
    assert wire.headers == {}  # the key is a secret: never in a WireRequest
    streamed = adapter.request_to_wire(Request(model="gemini-2.5-flash", messages=(USER,), stream=True))
    assert streamed.path == "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse" and streamed.stream


@pytest.mark.parametrize(
    ("path", "model", "stream"),
    [
        ("/v1beta/models/gemini-2.0-flash:generateContent", "gemini-2.0-flash", False),
        ("https://generativelanguage.googleapis.com/v1beta/models/g:streamGenerateContent?alt=sse", "g", True),
        ("https://generativelanguage.googleapis.com/v1beta/models/g:streamGenerateContent", "g", True),
        (
            "https://us-central1-aiplatform.googleapis.com/v1/projects/p/locations/l/publishers/google/models/"
            "gemini-2.5-pro:generateContent?%24alt=json%3Benum-encoding%3Dint",
            "gemini-2.5-pro",
            False,
        ),
    ],
)
def test_model_and_stream_come_from_the_path_and_the_path_survives(path: str, model: str, stream: bool) -> None:
    request = adapter.request_from_wire({"contents": []}, path=path)
    assert (request.model, request.stream) == (model, stream)
    assert adapter.request_to_wire(request).path == path.split(".com", 1)[-1]


def test_a_path_that_is_not_generate_content_is_a_wire_format_error() -> None:
    with pytest.raises(WireFormatError):
        adapter.request_from_wire({"contents": []}, path="/v1beta/models/m:countTokens")


@pytest.mark.parametrize("body", [[], "x", {"contents": "x"}, {"systemInstruction": "x"}, {"contents": ["x"]}])
def test_bodies_that_are_not_the_wire_format_raise(body: Any) -> None:
    with pytest.raises(WireFormatError):
        adapter.request_from_wire(body)


def test_user_images_go_as_inline_data_or_file_data() -> None:
    message = Message(
        role="user",
        parts=(Image(media_type="image/png", data="iVBO"), Image(media_type="image/jpeg", url="gs://b/o.jpg")),
    )
    parts = _body(Request(messages=(message,)))["contents"][0]["parts"]
    assert parts == [
        {"inlineData": {"mimeType": "image/png", "data": "iVBO"}},
        {"fileData": {"mimeType": "image/jpeg", "fileUri": "gs://b/o.jpg"}},
    ]
    assert adapter.request_from_wire(_body(Request(messages=(message,)))).messages == (message,)


def test_results_go_in_one_user_content_with_object_responses() -> None:
    # §4b, E16, E18: one user content holds every functionResponse of the turn; response is an object
    calls = (
        ToolCall(id="a", name="get_weather", arguments={"city": "Paris"}),
        ToolCall(id="b", name="get_time", arguments={}),
    )
    results = (
        ToolResult(call_id="a", name="get_weather", content=(Text(text="18C"),)),
        ToolResult(call_id="b", name="get_time", content=(Text(text="no zone"),), is_error=True),
    )
    request = Request(
        messages=(USER, Message(role="assistant", parts=calls), Message(role="tool", parts=results)),
        tools=(WEATHER, TIME),
    )
    contents = _body(request)["contents"]
    assert contents[1] == {
        "role": "model",
        "parts": [
            {"functionCall": {"name": "get_weather", "args": {"city": "Paris"}, "id": "a"}},
            {"functionCall": {"name": "get_time", "id": "b"}},
        ],
    }
    assert contents[2] == {
        "role": "user",
        "parts": [
            {"functionResponse": {"name": "get_weather", "id": "a", "response": {"result": "18C"}}},
            {"functionResponse": {"name": "get_time", "id": "b", "response": {"error": "no zone"}}},
        ],
    }


def test_results_carry_images_in_function_response_parts() -> None:
    # GG-SDK FunctionResponsePart{inlineData{mimeType, data}}
    result = ToolResult(
        call_id="a", name="shot", content=(Text(text="see image"), Image(media_type="image/png", data="iVBO"))
    )
    (part,) = _body(Request(messages=(Message(role="tool", parts=(result,)),)))["contents"][0]["parts"]
    assert part == {
        "functionResponse": {
            "name": "shot",
            "id": "a",
            "response": {"result": "see image"},
            "parts": [{"inlineData": {"mimeType": "image/png", "data": "iVBO"}}],
        }
    }
    assert adapter.request_from_wire(_body(Request(messages=(Message(role="tool", parts=(result,)),)))).messages[
        0
    ].parts == (result,)


def test_a_result_without_a_name_takes_the_name_of_its_call() -> None:
    request = Request(
        messages=(
            Message(role="assistant", parts=(ToolCall(id="a", name="get_time", arguments={}),)),
            Message(role="tool", parts=(ToolResult(call_id="a", content=(Text(text="noon"),)),)),
        )
    )
    assert _body(request)["contents"][1]["parts"][0]["functionResponse"]["name"] == "get_time"
    with pytest.raises(UnsupportedContentError):
        _body(Request(messages=(Message(role="tool", parts=(ToolResult(call_id="zz"),)),)))


def test_an_mcp_text_resource_goes_as_text() -> None:
    result = ToolResult(call_id="a", name="t", content=(Resource(uri="file:///a", text="body"),))
    (part,) = _body(Request(messages=(Message(role="tool", parts=(result,)),)))["contents"][0]["parts"]
    assert part["functionResponse"]["response"] == {"result": "body"}


def test_an_image_by_url_in_a_function_response_raises() -> None:
    item = Image(media_type="image/png", url="https://x/y.png")  # fileData is Vertex-only (§4b)
    result = ToolResult(call_id="a", name="t", content=(item,))
    with pytest.raises(UnsupportedContentError):
        adapter.request_to_wire(Request(messages=(Message(role="tool", parts=(result,)),)))


@pytest.mark.parametrize(
    "item", [Audio(media_type="audio/wav", data="UklG"), Resource(uri="file:///b", blob="AAAA")], ids=["audio", "blob"]
)
def test_content_a_function_response_cannot_carry_is_a_placeholder_with_a_note(item: Any) -> None:
    # images only are documented in functionResponse.parts (§4b): docs/mcp.md
    result = ToolResult(call_id="a", name="t", content=(item,))
    wire = adapter.request_to_wire(Request(messages=(Message(role="tool", parts=(result,)),)))
    assert wire.body["contents"][0]["parts"][0]["functionResponse"]["response"] == {"result": placeholder_text(item)}
    assert wire.notes == (left_out_note(result, 0, item, "gemini"),)


@pytest.mark.parametrize(
    "message",
    [
        Message(role="user", parts=(ToolCall(id="a", name="t", arguments={}),)),
        Message(role="user", parts=(ToolResult(call_id="a", name="t"),)),
        Message(role="assistant", parts=(ToolResult(call_id="a", name="t"),)),  # E18
        Message(role="tool", parts=(Text(text="x"),)),
        Message(role="assistant", parts=(Reasoning(redacted="opaque"),)),
    ],
)
def test_parts_a_message_cannot_carry_raise(message: Message) -> None:
    with pytest.raises(UnsupportedContentError):
        adapter.request_to_wire(Request(messages=(message,)))


def test_a_call_with_unusable_arguments_cannot_be_replayed() -> None:
    call = ToolCall(id="a", name="t", arguments=None, arguments_raw="{bad", arguments_error="invalid JSON")
    with pytest.raises(UnsupportedContentError):
        adapter.request_to_wire(Request(messages=(Message(role="assistant", parts=(call,)),)))


def test_signatures_are_replayed_byte_for_byte() -> None:
    # E10: Gemini 3 rejects a replayed functionCall that lost its thoughtSignature
    signature = "EpwICpkIAXLI2nxlU6gs+/=="
    call = ToolCall(
        id="a", name="t", arguments={"k": 1}, arguments_raw='{"k":1}', provider_details={"thoughtSignature": signature}
    )
    reasoning = Reasoning(text="Let me check.", signature="R1", source="gemini")
    request = Request(messages=(USER, Message(role="assistant", parts=(reasoning, call))))
    parts = _body(request)["contents"][1]["parts"]
    assert parts == [
        {"text": "Let me check.", "thought": True, "thoughtSignature": "R1"},
        {"functionCall": {"name": "t", "args": {"k": 1}, "id": "a"}, "thoughtSignature": signature},
    ]
    assert adapter.request_from_wire(_body(request)).messages[1].parts == (reasoning, call)


def test_a_signed_empty_text_part_is_replayed_as_one() -> None:
    # E10: the trailing empty text part, sometimes signed, must not become a thought or disappear
    body = {"contents": [{"role": "model", "parts": [{"text": "Hi."}, {"text": "", "thoughtSignature": "S"}]}]}
    request = adapter.request_from_wire(body)
    assert request.messages[0].parts == (
        Text(text="Hi."),
        Reasoning(text="", signature="S", source="gemini", provider_details={"thought": False}),
    )
    assert _body(request) == body


def test_ids_synthesized_for_history_calls_are_stable_and_not_sent() -> None:
    body = {
        "contents": [
            {"role": "model", "parts": [{"functionCall": {"name": "t", "args": {}}}]},
            {"role": "user", "parts": [{"functionResponse": {"name": "t", "response": {"result": "ok"}}}]},
        ]
    }
    first = adapter.request_from_wire(body)
    (call,) = first.messages[0].parts
    (result,) = first.messages[1].parts
    assert isinstance(call, ToolCall) and isinstance(result, ToolResult)
    assert call.provider_details == {"synthetic_id": True} and result.call_id == call.id
    assert adapter.request_from_wire(body) == first  # same history, same ids
    assert _body(first) == body  # §4b: omit id on the wire unless the provider sent one


def test_id_less_results_are_matched_by_order_and_name() -> None:
    body = {
        "contents": [
            {
                "role": "model",
                "parts": [
                    {"functionCall": {"name": "w", "args": {"city": "A"}}},
                    {"functionCall": {"name": "t", "args": {}}},
                    {"functionCall": {"name": "w", "args": {"city": "B"}}},
                ],
            },
            {
                "role": "user",
                "parts": [
                    {"functionResponse": {"name": "t", "response": {"result": "noon"}}},
                    {"functionResponse": {"name": "w", "response": {"result": "sunny"}}},
                    {"functionResponse": {"name": "w", "response": {"result": "rain"}}},
                ],
            },
        ]
    }
    request = adapter.request_from_wire(body)
    calls = {c.arguments.get("city", c.name): c.id for c in request.messages[0].parts}  # type: ignore[union-attr]
    assert [r.call_id for r in request.messages[1].parts] == [calls["t"], calls["A"], calls["B"]]  # type: ignore[union-attr]
    assert len(set(calls.values())) == 3
    assert _body(request) == body


def test_client_ids_are_sent_and_answered() -> None:
    # E13/E31: a client-made or foreign id travels as functionCall.id / functionResponse.id
    request = Request(
        messages=(
            Message(role="assistant", parts=(ToolCall(id="functions.Bash:0", name="t", arguments={}),)),
            Message(role="tool", parts=(ToolResult(call_id="functions.Bash:0", name="t"),)),
        )
    )
    contents = _body(request)["contents"]
    assert contents[0]["parts"][0]["functionCall"]["id"] == "functions.Bash:0"
    assert contents[1]["parts"][0]["functionResponse"]["id"] == "functions.Bash:0"


def test_a_call_without_args_is_replayed_without_args() -> None:
    # §4c: a no-argument call may omit args; it comes back as {} and goes out the way it came
    body = {"contents": [{"role": "model", "parts": [{"functionCall": {"name": "read_theme", "id": "x1"}}]}]}
    request = adapter.request_from_wire(body)
    (call,) = request.messages[0].parts
    assert isinstance(call, ToolCall) and (call.arguments, call.arguments_raw) == ({}, "")
    assert _body(request) == body


@pytest.mark.parametrize(
    ("response", "text", "is_error"),
    [
        ({"result": "18C"}, "18C", False),
        ({"result": {"t": 18, "unit": "C"}}, '{"t":18,"unit":"C"}', False),  # E16: structured values wrapped
        ({"result": [1, 2]}, "[1,2]", False),
        ({"output": "Charles"}, "Charles", False),  # GG-SDK FunctionResponse.response: "output" key
        ({"error": "boom"}, "boom", True),  # ... and "error" for errors
        ({"return_value": "30°C"}, '{"return_value":"30°C"}', False),  # otherwise the whole object is the output
        ({}, "{}", False),
    ],
)
def test_response_shapes_round_trip(response: dict[str, Any], text: str, is_error: bool) -> None:
    body = {
        "contents": [{"role": "user", "parts": [{"functionResponse": {"name": "t", "id": "i", "response": response}}]}]
    }
    request = adapter.request_from_wire(body)
    (result,) = request.messages[0].parts
    assert isinstance(result, ToolResult) and result.is_error is is_error
    assert result.content == (Text(text=text),)
    assert _body(request) == body


def test_a_user_content_mixing_text_and_results_splits_and_merges_back() -> None:
    body = {
        "contents": [
            {
                "role": "user",
                "parts": [
                    {"functionResponse": {"name": "t", "id": "i", "response": {"result": "ok"}}},
                    {"text": "and now?"},
                ],
            }
        ]
    }
    request = adapter.request_from_wire(body)
    assert [m.role for m in request.messages] == ["tool", "user"]
    assert _body(request) == body


def test_snake_case_fields_are_read_and_written_back_as_spelled() -> None:
    # E32: the API accepts function_call / function_response / parameters_json_schema ...
    body = {
        "contents": [
            {"role": "user", "parts": [{"text": "hi"}]},
            {
                "role": "model",
                "parts": [{"function_call": {"name": "t", "args": {"a": 1}, "id": "c"}, "thought_signature": "S"}],
            },
            {"role": "user", "parts": [{"function_response": {"name": "t", "id": "c", "response": {"output": "x"}}}]},
        ],
        "system_instruction": {"parts": [{"text": "sys"}]},
        "tools": [{"function_declarations": [{"name": "t", "parameters_json_schema": {"type": "object"}}]}],
        "tool_config": {"function_calling_config": {"mode": "ANY", "allowed_function_names": ["t"]}},
        "generation_config": {"max_output_tokens": 10, "temperature": 0},
    }
    request = adapter.request_from_wire(body)
    assert (request.system, request.tool_choice, request.max_tokens) == ("sys", "t", 10)
    call = request.messages[1].parts[0]
    assert isinstance(call, ToolCall) and call.arguments == {"a": 1}
    assert call.provider_details["thoughtSignature"] == "S"
    assert DeepDiff(body, _body(request)) == {}


def test_wire_fields_the_model_does_not_cover_round_trip() -> None:
    body = {
        "contents": [
            {
                "role": "user",
                "parts": [
                    {"text": "look", "videoMetadata": {"fps": 1}},
                    {"inlineData": {"mimeType": "video/mp4", "data": "AAAA"}},
                ],
            },
            {"parts": [{"text": "no role"}]},
            {"role": "invalid_role", "parts": [{"text": "Say this is a test"}]},  # the recorded Vertex 400 body
            {"role": "model", "parts": [{"executableCode": {"language": "PYTHON", "code": "1"}}, {"text": "ok"}]},
        ],
        "systemInstruction": {"role": "user", "parts": [{"text": "a"}, {"text": "b"}]},
        "safetySettings": [{"category": "HARM_CATEGORY_HARASSMENT", "threshold": "BLOCK_NONE"}],
        "generationConfig": {"thinkingConfig": {"includeThoughts": True}},
        "cachedContent": "cachedContents/x",
        "tools": [],
    }
    request = adapter.request_from_wire(body)
    assert request.system == "ab"
    assert request.messages[0].parts[0] == Text(
        text="look", provider_details={"part_extra": {"videoMetadata": {"fps": 1}}}
    )
    assert DeepDiff(body, _body(request)) == {}


def test_unified_wire_unified_is_identity_for_tools_calls_ids_arguments_results_and_is_error() -> None:
    calls = (
        ToolCall(
            id="c1",
            name="get_weather",
            arguments={"city": "Zürich"},
            arguments_raw='{"city":"Zürich"}',
            provider_details={"thoughtSignature": "sig=="},
        ),
        ToolCall(id="c2", name="get_time", arguments={"zone": "UTC"}, arguments_raw='{"zone":"UTC"}'),
    )
    results = (
        ToolResult(call_id="c1", name="get_weather", content=(Text(text="18C"),)),
        ToolResult(call_id="c2", name="get_time", content=(Text(text="no clock"),), is_error=True),
    )
    request = Request(
        model="gemini-2.5-flash",
        system="Be brief.",
        messages=(USER, Message(role="assistant", parts=calls), Message(role="tool", parts=results)),
        tools=(WEATHER, TIME),
        tool_choice="auto",
        stream=True,
        max_tokens=256,
    )
    wire = adapter.request_to_wire(request)
    assert adapter.request_from_wire(wire.body, path=wire.path, tools=request.tools) == request


def test_synthetic_ids_are_not_carried_by_the_wire_the_one_identity_gap() -> None:
    # a call whose id we made up goes out without one (§4b); reading the body back makes a new stable id,
    # and its result follows it (order and name)
    call = ToolCall(id="mine", name="t", arguments={}, provider_details={"synthetic_id": True})
    request = Request(
        messages=(
            Message(role="assistant", parts=(call,)),
            Message(role="tool", parts=(ToolResult(call_id="mine", name="t"),)),
        )
    )
    back = adapter.request_from_wire(_body(request))
    (new_call,) = back.messages[0].parts
    (new_result,) = back.messages[1].parts
    assert isinstance(new_call, ToolCall) and isinstance(new_result, ToolResult)
    assert new_call.id != "mine" and new_result.call_id == new_call.id
    assert new_call.provider_details == {"synthetic_id": True}


# Bodies built from the documented request shapes (§4a, §4b, E32): every one round-trips exactly,
# except several functionDeclarations entries, the one documented normalisation (tested above).
_TEXT = st.text(max_size=3)
_ANY = st.recursive(
    st.none() | st.booleans() | st.integers(-2, 3) | _TEXT,
    lambda c: st.lists(c, max_size=2) | st.dictionaries(_TEXT, c, max_size=2),
    max_leaves=5,
)
_CALL = st.fixed_dictionaries(
    {"name": st.sampled_from(["a", "b"])},
    optional={"args": st.dictionaries(_TEXT, _ANY, max_size=2), "id": st.sampled_from(["i1", "i2", ""])},
)
_BLOB = st.fixed_dictionaries({"mimeType": st.sampled_from(["image/png", "application/pdf"]), "data": _TEXT})
_RESPONSE = st.fixed_dictionaries(
    {"name": st.sampled_from(["a", "b"])},
    optional={
        "response": st.dictionaries(st.sampled_from(["result", "output", "error", "x"]), _ANY, max_size=2),
        "id": st.sampled_from(["i1", "i2", ""]),
        "parts": st.lists(st.fixed_dictionaries({"inlineData": _BLOB}), max_size=2),
    },
)
_PART = st.one_of(
    st.fixed_dictionaries(
        {"text": _TEXT}, optional={"thought": st.booleans(), "thoughtSignature": st.sampled_from(["S1", "S2"])}
    ),
    st.fixed_dictionaries({"functionCall": _CALL}, optional={"thoughtSignature": st.just("S")}),
    st.fixed_dictionaries({"function_call": _CALL}, optional={"thought_signature": st.just("S")}),
    st.fixed_dictionaries({"functionResponse": _RESPONSE}),
    st.fixed_dictionaries({"function_response": _RESPONSE}),
    st.fixed_dictionaries({"inlineData": _BLOB}),
    st.fixed_dictionaries({"fileData": st.fixed_dictionaries({"mimeType": st.just("image/png"), "fileUri": _TEXT})}),
    st.fixed_dictionaries({"executableCode": st.fixed_dictionaries({"code": _TEXT})}),
)
_DECLARATION = st.fixed_dictionaries(
    {"name": st.sampled_from(["a", "b", "c.d"])},
    optional={
        "description": st.none() | _TEXT,
        "parameters": st.just({"type": "OBJECT", "properties": {"q": {"type": "STRING"}}}),
        "parametersJsonSchema": st.just({"type": "object", "additionalProperties": False}),
    },
)
_BODY = st.fixed_dictionaries(
    {},
    optional={
        "contents": st.lists(
            st.fixed_dictionaries(
                {},
                optional={
                    "role": st.sampled_from(["user", "model", "function"]),
                    "parts": st.lists(_PART, max_size=4),
                },
            ),
            max_size=4,
        ),
        "tools": st.lists(
            st.fixed_dictionaries({"functionDeclarations": st.lists(_DECLARATION, min_size=1, max_size=3)})
            | st.just({"googleSearch": {}}),
            max_size=2,
        ).filter(lambda tools: sum("functionDeclarations" in t for t in tools) <= 1),
        "toolConfig": st.fixed_dictionaries(
            {},
            optional={
                "functionCallingConfig": st.fixed_dictionaries(
                    {},
                    optional={
                        "mode": st.sampled_from(["AUTO", "ANY", "NONE", "VALIDATED"]),
                        "allowedFunctionNames": st.lists(st.sampled_from(["a", "b"]), max_size=2),
                    },
                )
            },
        ),
        "systemInstruction": st.fixed_dictionaries(
            {"parts": st.lists(st.fixed_dictionaries({"text": _TEXT}), max_size=2)}, optional={"role": st.just("user")}
        ),
        "generationConfig": st.fixed_dictionaries(
            {}, optional={"maxOutputTokens": st.integers(1, 9), "temperature": st.just(0)}
        ),
    },
)


@settings(max_examples=150, deadline=None)
@given(_BODY)
def test_any_body_of_the_documented_shapes_round_trips(body: dict[str, Any]) -> None:
    assert DeepDiff(body, _body(adapter.request_from_wire(body))) == {}


def test_a_response_repeating_the_function_name_beside_one_key_reads_as_that_key() -> None:
    """The AI SDK writes ``response: {name: <tool>, content: <text>}``, and ``{name, error}`` for a
    failed tool (@ai-sdk/google dist/index.js:658-666, 920-931). ai.google.dev/api/caching#FunctionResponse:
    "Use 'output' key to specify function output and 'error' key to specify error details (if any)";
    the ``name`` only repeats ``functionResponse.name``."""

    def read(response: dict[str, Any], name: str = "get_time") -> ToolResult:
        body = {
            "contents": [
                {"role": "user", "parts": [{"text": "time?"}]},
                {"role": "model", "parts": [{"functionCall": {"name": "get_time", "args": {}}}]},
                {"role": "user", "parts": [{"functionResponse": {"name": name, "response": response}}]},
            ]
        }
        request = adapter.request_from_wire(body, path="/v1beta/models/gemini-2.5-flash:generateContent")
        assert adapter.request_to_wire(request).body == body  # written back as it came
        [result] = request.messages[-1].parts
        assert isinstance(result, ToolResult)
        return result

    failed = read({"name": "get_time", "error": "unknown zone"})
    assert failed.is_error and failed.content == (Text(text="unknown zone"),)
    done = read({"name": "get_time", "content": "12:00"})
    assert not done.is_error and done.content == (Text(text='{"content":"12:00"}'),)  # one key: its text
    # another name, or more keys, is an object of its own: the whole response is the output
    other = read({"name": "get_date", "error": "x"})
    assert not other.is_error and "response_name" not in other.provider_details
    more = read({"name": "get_time", "content": "12:00", "zone": "UTC"})
    assert not more.is_error and "response_name" not in more.provider_details
