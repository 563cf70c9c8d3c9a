"""``conformance.adapters.anthropic``: tools, requests, non-streamed responses and errors.

Expected values come from the documented wire shapes: wire-formats.md §3 and §8 (anthropic-sdk-python
``types/tool_param.py``, ``tool_result_block_param.py``, ``thinking_block_param.py``,
``url_image_source_param.py``, ``tool_choice_*_param.py``, ``stop_reason.py``,
``raw_message_delta_event.py``; the API errors page), never from the adapter's own output.
Streams are in ``test_anthropic_stream.py``, real traffic in ``test_anthropic_realworld.py``.

Edge cases of wire-formats.md §10 covered in this file:
- E3  ``input: {}`` for a no-argument tool -> ``{}``: test_tool_use_blocks_become_calls
- E10 thinking / redacted_thinking replayed verbatim before tool_use: test_reasoning_is_replayed_*,
      test_thinking_blocks_become_reasoning_parts
- E13 foreign call ids rewritten identically in tool_use.id and tool_result.tool_use_id:
      test_foreign_ids_*
- E14 MCP names with ``.``, ``/``, > 64 chars: test_mcp_names_*
- E17 results first, all results of a turn in one user message: test_tool_results_*,
      test_text_before_tool_results_is_the_one_documented_normalisation
- E22 stop reasons outside the SDK's literal: test_stop_reason_table
(E1, E2, E3 streamed, E5, E8, E9, E19, E23: test_anthropic_stream.py.)
"""

from __future__ import annotations

import hashlib
import re
from typing import Any

import pytest
from deepdiff import DeepDiff
from hypothesis import given, settings
from hypothesis import strategies as st

from conformance.adapters import anthropic as adapter
from conformance.adapters import get_adapter
from conformance.adapters._tool_output import left_out_note, placeholder_text
from conformance.adapters.base import CAPABILITIES
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

NAME_RE = re.compile(r"^[a-zA-Z0-9_-]{1,128}$")  # §3a; the API's 400: home-assistant/core#147760, claude-code#96152
ID_RE = re.compile(r"^[a-zA-Z0-9_-]+$")  # §3b, E13
SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
WEATHER = Tool(name="get_weather", description="Weather of a city", input_schema=SCHEMA)
TIME = Tool(name="get_time", description="Time in a zone", input_schema={"type": "object", "properties": {}})


def _body(request: Request) -> dict[str, Any]:
    return adapter.request_to_wire(request).body


def _user(text: str) -> Message:
    return Message(role="user", parts=(Text(text=text),))


# --------------------------------------------------------------------------------------------
# Adapter value
# --------------------------------------------------------------------------------------------


def test_the_registry_serves_this_module_and_capabilities_are_declared() -> None:
    assert get_adapter("anthropic") is adapter.ADAPTER
    assert adapter.ADAPTER.wire_format == "anthropic"
    assert adapter.capabilities <= CAPABILITIES
    # §8: everything the Messages API carries natively
    assert adapter.capabilities == CAPABILITIES


# --------------------------------------------------------------------------------------------
# Tools
# --------------------------------------------------------------------------------------------


def test_tools_go_out_as_name_description_input_schema() -> None:
    wire = adapter.tools_to_wire([WEATHER])
    assert wire.tools == [{"name": "get_weather", "description": "Weather of a city", "input_schema": SCHEMA}]
    assert wire.changes == ()


def test_a_non_object_schema_becomes_an_object_schema_and_the_change_is_reported() -> None:
    # ToolParam.input_schema.type is Literal["object"] (§3a)
    wire = adapter.tools_to_wire([Tool(name="t", input_schema={"type": "string"})])
    assert wire.tools[0]["input_schema"] == {"type": "object", "properties": {}}
    assert [c.tool for c in wire.changes] == ["t"]


def test_mcp_names_go_out_valid_and_come_back_via_tools() -> None:
    tools = [Tool(name="admin.tools.list"), Tool(name="files/read"), Tool(name="x" * 80)]
    wire = adapter.tools_to_wire(tools)
    wire_names = [t["name"] for t in wire.tools]
    assert all(NAME_RE.fullmatch(n) for n in wire_names), wire_names
    assert len(set(wire_names)) == 3
    body = {
        "content": [{"type": "tool_use", "id": f"toolu_{i}", "name": n, "input": {}} for i, n in enumerate(wire_names)],
        "stop_reason": "tool_use",
    }
    calls = adapter.response_from_wire(body, tools=tools).tool_calls
    assert [c.name for c in calls] == ["admin.tools.list", "files/read", "x" * 80]
    assert [c.name for c in adapter.response_from_wire(body).tool_calls] == wire_names  # no tools: wire names


def test_mcp_names_are_mapped_in_history_and_named_tool_choice() -> None:
    tool = Tool(name="admin.tools.list")
    call = ToolCall(id="toolu_1", name="admin.tools.list", arguments={})
    request = Request(
        tools=(tool,), tool_choice="admin.tools.list", messages=(Message(role="assistant", parts=(call,)),)
    )
    body = _body(request)
    wire_name = body["tools"][0]["name"]
    assert NAME_RE.fullmatch(wire_name)
    assert body["tool_choice"] == {"type": "tool", "name": wire_name}
    assert body["messages"][0]["content"][0]["name"] == wire_name
    back = adapter.request_from_wire(body, tools=[tool])
    assert back.tool_choice == "admin.tools.list"
    assert back.tools[0].name == "admin.tools.list"
    (got,) = back.messages[0].parts
    assert isinstance(got, ToolCall)
    assert (got.id, got.name, got.arguments) == (call.id, call.name, call.arguments)


def test_extra_tool_fields_ride_in_provider_details_and_round_trip() -> None:
    # cache_control, strict and type are ToolParam fields the unified Tool does not model (§3a)
    wire_tool = {
        "name": "get_weather",
        "description": "d",
        "input_schema": SCHEMA,
        "cache_control": {"type": "ephemeral"},
        "strict": True,
        "type": "custom",
    }
    request = adapter.request_from_wire({"model": "m", "max_tokens": 5, "messages": [], "tools": [wire_tool]})
    assert request.tools[0].provider_details == {"tool": {"strict": True, "type": "custom"}}
    assert request.tools[0].cache_control == {"type": "ephemeral"}  # the unified field (issue 28)
    assert _body(request)["tools"] == [wire_tool]


def test_a_server_tool_without_input_schema_round_trips_without_one() -> None:
    server_tool = {"type": "web_search_20250305", "name": "web_search", "max_uses": 5}
    body = {"model": "m", "max_tokens": 5, "messages": [], "tools": [server_tool]}
    assert _body(adapter.request_from_wire(body))["tools"] == [server_tool]


# --------------------------------------------------------------------------------------------
# tool_choice (§8, §3a: disable_parallel_tool_use lives inside tool_choice)
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("choice", "parallel", "wire"),
    [
        ("auto", None, {"type": "auto"}),
        ("required", None, {"type": "any"}),
        ("none", None, {"type": "none"}),
        ("get_weather", None, {"type": "tool", "name": "get_weather"}),
        ("auto", False, {"type": "auto", "disable_parallel_tool_use": True}),
        ("required", False, {"type": "any", "disable_parallel_tool_use": True}),
        ("get_weather", False, {"type": "tool", "name": "get_weather", "disable_parallel_tool_use": True}),
        ("auto", True, {"type": "auto", "disable_parallel_tool_use": False}),
        (None, False, {"type": "auto", "disable_parallel_tool_use": True}),
    ],
)
def test_tool_choice_mapping(choice: str | None, parallel: bool | None, wire: dict[str, Any]) -> None:
    body = _body(Request(model="m", tools=(WEATHER,), tool_choice=choice, parallel_tool_calls=parallel))
    assert body["tool_choice"] == wire
    back = adapter.request_from_wire(body)
    assert back.tool_choice == (choice or "auto")  # documented: parallel alone comes back under "auto"
    assert back.parallel_tool_calls == parallel


def test_no_tool_choice_and_no_parallel_flag_send_no_tool_choice() -> None:
    assert "tool_choice" not in _body(Request(model="m", tools=(WEATHER,)))


def test_parallel_flag_is_not_sent_under_tool_choice_none() -> None:
    # ToolChoiceNoneParam has only ``type`` (documented normalisation)
    body = _body(Request(model="m", tools=(WEATHER,), tool_choice="none", parallel_tool_calls=False))
    assert body["tool_choice"] == {"type": "none"}


def test_an_unknown_tool_choice_is_a_wire_format_error() -> None:
    with pytest.raises(WireFormatError):
        adapter.request_from_wire({"messages": [], "tool_choice": {"type": "sometimes"}})


# --------------------------------------------------------------------------------------------
# Requests
# --------------------------------------------------------------------------------------------


def test_request_basics_path_headers_system_and_max_tokens() -> None:
    wire = adapter.request_to_wire(
        Request(model="claude-x", system="Be brief.", messages=(_user("hi"),), max_tokens=77, stream=True)
    )
    assert wire.path == "/v1/messages"
    assert wire.headers == {"anthropic-version": "2023-06-01"}  # ANT-SDK _client.py default_headers
    assert wire.stream is True
    assert wire.body == {
        "model": "claude-x",
        "max_tokens": 77,
        "system": "Be brief.",  # top-level, there is no system role (§3b)
        "messages": [{"role": "user", "content": "hi"}],
        "stream": True,
    }


def test_max_tokens_is_required_on_the_wire_and_defaults_to_1024() -> None:
    assert _body(Request(model="m", messages=(_user("hi"),)))["max_tokens"] == 1024


def test_system_text_blocks_are_kept_while_their_text_is_unchanged() -> None:
    blocks = [{"type": "text", "text": "A"}, {"type": "text", "text": "B", "cache_control": {"type": "ephemeral"}}]
    request = adapter.request_from_wire({"model": "m", "max_tokens": 5, "system": blocks, "messages": []})
    assert request.system == "A\n\nB"
    assert _body(request)["system"] == blocks
    changed = Request(model="m", system="C", provider_details=request.provider_details)
    assert _body(changed)["system"] == "C"


def test_tool_results_go_in_a_user_message_results_first_then_the_users_text() -> None:
    # E17: one user message for all results of the turn, tool_result blocks first, text after them
    calls = (
        ToolCall(id="toolu_a", name="get_weather", arguments={"city": "Paris"}),
        ToolCall(id="toolu_b", name="get_time", arguments={}),
    )
    request = Request(
        model="m",
        tools=(WEATHER, TIME),
        messages=(
            _user("weather and time?"),
            Message(role="assistant", parts=(Text(text="Checking."), *calls)),
            Message(role="tool", parts=(ToolResult(call_id="toolu_a", content=(Text(text="18C"),)),)),
            Message(role="tool", parts=(ToolResult(call_id="toolu_b", content=(Text(text="noon"),)),)),
            _user("and tomorrow?"),
        ),
    )
    messages = _body(request)["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "user"]
    assert messages[1]["content"] == [
        {"type": "text", "text": "Checking."},
        {"type": "tool_use", "id": "toolu_a", "name": "get_weather", "input": {"city": "Paris"}},
        {"type": "tool_use", "id": "toolu_b", "name": "get_time", "input": {}},
    ]
    assert messages[2]["content"] == [
        {"type": "tool_result", "tool_use_id": "toolu_a", "content": "18C"},
        {"type": "tool_result", "tool_use_id": "toolu_b", "content": "noon"},
        {"type": "text", "text": "and tomorrow?"},
    ]
    back = adapter.request_from_wire(_body(request))
    assert [m.role for m in back.messages] == ["user", "assistant", "tool", "user"]
    assert back.messages[2].parts == (
        ToolResult(call_id="toolu_a", content=(Text(text="18C"),)),
        ToolResult(call_id="toolu_b", content=(Text(text="noon"),)),
    )
    assert back.messages[3].parts == (Text(text="and tomorrow?"),)
    assert _body(back) == _body(request)


def test_tool_results_carry_is_error_images_and_text_blocks() -> None:
    # ToolResultBlockParam: content str | [text | image]; is_error: bool (§3b)
    result = ToolResult(
        call_id="toolu_1",
        is_error=True,
        content=(
            Text(text="failed, see screenshot"),
            Image(media_type="image/png", data="iVBORw0KGgo="),
            Image(url="https://example.com/a.png"),
        ),
    )
    block = _body(Request(model="m", messages=(Message(role="tool", parts=(result,)),)))["messages"][0]["content"][0]
    assert block == {
        "type": "tool_result",
        "tool_use_id": "toolu_1",
        "content": [
            {"type": "text", "text": "failed, see screenshot"},
            {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}},
            {"type": "image", "source": {"type": "url", "url": "https://example.com/a.png"}},
        ],
        "is_error": True,
    }
    back = adapter.request_from_wire({"messages": [{"role": "user", "content": [block]}]})
    (part,) = back.messages[0].parts
    assert isinstance(part, ToolResult)
    assert (part.call_id, part.content, part.is_error) == (result.call_id, result.content, True)


def test_an_explicit_is_error_false_and_a_missing_content_round_trip() -> None:
    blocks = [
        {"type": "tool_result", "tool_use_id": "toolu_1", "content": "ok", "is_error": False},
        {"type": "tool_result", "tool_use_id": "toolu_2"},
        {"type": "tool_result", "tool_use_id": "toolu_3", "content": []},
    ]
    body = {"model": "m", "max_tokens": 5, "messages": [{"role": "user", "content": blocks}]}
    assert _body(adapter.request_from_wire(body)) == body


def test_an_mcp_text_resource_goes_as_a_text_block() -> None:
    result = ToolResult(call_id="toolu_1", content=(Resource(uri="file:///a.txt", text="contents"),))
    block = _body(Request(messages=(Message(role="tool", parts=(result,)),)))["messages"][0]["content"][0]
    assert block["content"] == [{"type": "text", "text": "contents"}]


@pytest.mark.parametrize(
    "item",
    [Audio(media_type="audio/wav", data="AAAA"), Resource(uri="file:///a.bin", blob="AAAA")],
    ids=["audio", "blob"],
)
def test_content_a_tool_result_cannot_carry_is_a_placeholder_with_a_note(item: Any) -> None:
    # ToolResultBlockParam content: text, image, document ... (no audio, no arbitrary blob): docs/mcp.md
    result = ToolResult(call_id="toolu_1", content=(item,))
    wire = adapter.request_to_wire(Request(messages=(Message(role="tool", parts=(result,)),)))
    assert wire.body["messages"][0]["content"][0]["content"] == placeholder_text(item)
    assert wire.notes == (left_out_note(result, 0, item, "anthropic"),)


@pytest.mark.parametrize(
    "message",
    [
        Message(role="user", parts=(ToolCall(id="x", name="t", arguments={}),)),
        Message(role="user", parts=(Reasoning(text="t", signature="s"),)),
        Message(role="assistant", parts=(ToolResult(call_id="x"),)),
        Message(role="tool", parts=(Text(text="stray"),)),
    ],
    ids=["call-in-user", "reasoning-in-user", "result-in-assistant", "text-in-tool"],
)
def test_parts_a_message_cannot_carry_raise(message: Message) -> None:
    with pytest.raises(UnsupportedContentError):
        adapter.request_to_wire(Request(messages=(message,)))


def test_a_call_with_unusable_arguments_cannot_be_replayed() -> None:
    call = ToolCall(id="toolu_1", name="t", arguments=None, arguments_raw='{"a":', arguments_error="invalid JSON")
    with pytest.raises(UnsupportedContentError, match="input object"):
        adapter.request_to_wire(Request(messages=(Message(role="assistant", parts=(call,)),)))


def test_user_images_go_as_image_blocks() -> None:
    message = Message(role="user", parts=(Text(text="what is this?"), Image(media_type="image/jpeg", data="/9j/")))
    assert _body(Request(messages=(message,)))["messages"][0]["content"] == [
        {"type": "text", "text": "what is this?"},
        {"type": "image", "source": {"type": "base64", "media_type": "image/jpeg", "data": "/9j/"}},
    ]


def test_reasoning_is_replayed_verbatim_and_in_order_before_tool_use() -> None:
    # E10: thinking / redacted_thinking first, unmodified (ThinkingBlockParam: signature required)
    parts = (
        Reasoning(text="Let me think.", signature="EqQBCkYIBxgCKkD+sig==", source="anthropic"),
        Reasoning(redacted="EmwKAhgBEgy3va3pzix/LafPsn4a", source="anthropic"),
        ToolCall(id="toolu_1", name="get_weather", arguments={"city": "Paris"}),
    )
    body = _body(Request(tools=(WEATHER,), messages=(Message(role="assistant", parts=parts),)))
    assert body["messages"][0]["content"] == [
        {"type": "thinking", "thinking": "Let me think.", "signature": "EqQBCkYIBxgCKkD+sig=="},
        {"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix/LafPsn4a"},
        {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Paris"}},
    ]
    assert adapter.request_from_wire(body).messages[0].parts == (
        parts[0],
        parts[1],
        ToolCall(id="toolu_1", name="get_weather", arguments={"city": "Paris"}, arguments_raw='{"city":"Paris"}'),
    )


def test_reasoning_without_a_signature_is_not_sent() -> None:
    # another provider's reasoning: a thinking block needs Anthropic's signature (documented)
    parts = (Reasoning(text="chain of thought"), Text(text="Done."))
    body = _body(Request(messages=(Message(role="assistant", parts=parts),)))
    assert body["messages"][0]["content"] == [{"type": "text", "text": "Done."}]


def test_foreign_ids_are_rewritten_identically_in_tool_use_and_tool_result() -> None:
    # E13: ids like ``functions.Bash:0`` are rejected by the pattern ^[a-zA-Z0-9_-]+$
    foreign = "functions.Bash:0"
    call = ToolCall(id=foreign, name="Bash", arguments={"command": "ls"})
    request = Request(
        messages=(
            Message(role="assistant", parts=(call,)),
            Message(role="tool", parts=(ToolResult(call_id=foreign, content=(Text(text="a.txt"),)),)),
        )
    )
    messages = _body(request)["messages"]
    use_id = messages[0]["content"][0]["id"]
    assert ID_RE.fullmatch(use_id)
    assert messages[1]["content"][0]["tool_use_id"] == use_id
    # deterministic, documented form: invalid chars as "_" then "_" and 8 hex of the id's sha256
    assert use_id == "functions_Bash_0_" + hashlib.sha256(foreign.encode()).hexdigest()[:8]
    assert _body(request) == _body(request)


def test_foreign_ids_that_sanitize_alike_stay_distinct_and_valid_ids_are_unchanged() -> None:
    ids = ["call.1", "call:1", "call/1", "", "toolu_01AbC-x"]
    wire = []
    for call_id in ids:
        call = ToolCall(id=call_id, name="t", arguments={})
        wire.append(_body(Request(messages=(Message(role="assistant", parts=(call,)),)))["messages"][0]["content"][0])
    wire_ids = [b["id"] for b in wire]
    assert all(ID_RE.fullmatch(i) for i in wire_ids), wire_ids
    assert len(set(wire_ids)) == len(ids)
    assert wire_ids[-1] == "toolu_01AbC-x"


@settings(max_examples=50, deadline=None)
@given(st.lists(st.text(max_size=12), min_size=2, max_size=2, unique=True))
def test_any_two_ids_go_out_valid_distinct_and_stable(ids: list[str]) -> None:
    messages = tuple(Message(role="assistant", parts=(ToolCall(id=i, name="t", arguments={}),)) for i in ids)
    wire = [m["content"][0]["id"] for m in _body(Request(messages=messages))["messages"]]
    assert all(ID_RE.fullmatch(w) for w in wire), wire
    assert wire[0] != wire[1]
    assert wire == [m["content"][0]["id"] for m in _body(Request(messages=messages))["messages"]]
    assert [w for i, w in zip(ids, wire, strict=True) if ID_RE.fullmatch(i)] == [i for i in ids if ID_RE.fullmatch(i)]


def test_unified_wire_unified_is_identity_for_tools_calls_ids_arguments_results_and_is_error() -> None:
    request = Request(
        model="claude-x",
        system="sys",
        tools=(WEATHER, TIME),
        tool_choice="required",
        parallel_tool_calls=True,
        max_tokens=300,
        messages=(
            _user("go"),
            Message(
                role="assistant",
                parts=(
                    Reasoning(text="plan", signature="sig", source="anthropic"),
                    ToolCall(
                        id="toolu_1",
                        name="get_weather",
                        arguments={"city": "Zürich", "days": [1, 2], "opts": {"metric": True, "x": None}},
                    ),
                    ToolCall(id="toolu_2", name="get_time", arguments={}),
                ),
            ),
            Message(
                role="tool",
                parts=(
                    ToolResult(call_id="toolu_1", content=(Text(text="cold"),)),
                    ToolResult(call_id="toolu_2", content=(Text(text="no clock"),), is_error=True),
                ),
            ),
        ),
    )
    back = adapter.request_from_wire(_body(request))
    assert back.tools == request.tools
    assert (back.tool_choice, back.parallel_tool_calls, back.max_tokens) == ("required", True, 300)
    assert back.messages[0] == request.messages[0]
    sent_calls = [p for p in request.messages[1].parts if isinstance(p, ToolCall)]
    got_calls = [p for p in back.messages[1].parts if isinstance(p, ToolCall)]
    assert [(c.id, c.name, c.arguments) for c in got_calls] == [(c.id, c.name, c.arguments) for c in sent_calls]
    assert back.messages[1].parts[0] == request.messages[1].parts[0]
    assert back.messages[2] == request.messages[2]


def test_text_before_tool_results_is_the_one_documented_normalisation() -> None:
    # E17: the API rejects text before tool_result; the adapter moves the results first
    body = {
        "model": "m",
        "max_tokens": 5,
        "messages": [
            {
                "role": "user",
                "content": [{"type": "text", "text": "here:"}, {"type": "tool_result", "tool_use_id": "a"}],
            }
        ],
    }
    expected = {
        **body,
        "messages": [
            {"role": "user", "content": [body["messages"][0]["content"][1], body["messages"][0]["content"][0]]}
        ],
    }
    got = _body(adapter.request_from_wire(body))
    assert got == expected
    # the difference is exactly the documented one: the two blocks swap places
    assert set(DeepDiff(body, got).affected_paths) == {
        "root['messages'][0]['content'][0]['type']",
        "root['messages'][0]['content'][0]['text']",
        "root['messages'][0]['content'][0]['tool_use_id']",
        "root['messages'][0]['content'][1]['type']",
        "root['messages'][0]['content'][1]['text']",
        "root['messages'][0]['content'][1]['tool_use_id']",
    }


def test_wire_fields_the_model_does_not_cover_round_trip() -> None:
    body = {
        "model": "m",
        "max_tokens": 5,
        "temperature": 0.2,
        "stop_sequences": ["\nObservation:"],
        "metadata": {"user_id": "u"},
        "thinking": {"type": "enabled", "budget_tokens": 1024},
        "stream": False,
        "tools": [],
        "tool_choice": {"type": "auto", "disable_parallel_tool_use": True},
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "hi", "cache_control": {"type": "ephemeral"}}]},
            {"role": "assistant", "content": "Hello"},  # a string, e.g. a prefill
            {
                "role": "user",
                "content": [{"type": "image", "source": {"type": "url", "url": "u"}, "cache_control": {}}],
            },
            {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": "t", "citations": []},
                    {"type": "tool_use", "id": "toolu_1", "name": "t", "input": {"a": 1}, "caller": {"type": "direct"}},
                ],
            },
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": "toolu_1", "content": "r", "cache_control": {"type": "x"}}
                ],
            },
            {"role": "user", "content": "a separate message after the results"},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_2", "name": "t", "input": {}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_2", "content": "r2"}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_2", "content": "again"}]},
        ],
    }
    assert DeepDiff(body, adapter.request_to_wire(adapter.request_from_wire(body)).body) == {}


def test_the_beta_query_is_kept_in_the_path() -> None:
    request = adapter.request_from_wire({"messages": []}, path="https://api.anthropic.com/v1/messages?beta=true")
    assert adapter.request_to_wire(request).path == "/v1/messages?beta=true"


@pytest.mark.parametrize(
    "body",
    [
        {"messages": ["Invalid content"]},  # the API answers 400 (REC:dd-trace-py__anthropic_completion_error)
        {"messages": [{"role": "system", "content": "x"}]},
        {"messages": [{"role": "user", "content": 3}]},
        [],
    ],
)
def test_bodies_that_are_not_the_wire_format_raise(body: Any) -> None:
    with pytest.raises(WireFormatError):
        adapter.request_from_wire(body)


def test_an_unsupported_block_raises_instead_of_being_dropped() -> None:
    body = {"messages": [{"role": "user", "content": [{"type": "document", "source": {"type": "text"}}]}]}
    with pytest.raises(UnsupportedContentError):
        adapter.request_from_wire(body)


# --------------------------------------------------------------------------------------------
# Non-streamed responses
# --------------------------------------------------------------------------------------------


def _message(content: list[dict[str, Any]], stop_reason: str | None = "end_turn", **usage: int) -> dict[str, Any]:
    return {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-x",
        "content": content,
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": usage or {"input_tokens": 10, "output_tokens": 5},
    }


def test_tool_use_blocks_become_calls() -> None:
    body = _message(
        [
            {"type": "text", "text": "Checking."},
            {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Paris"}},
            {"type": "tool_use", "id": "toolu_2", "name": "get_time", "input": {}},  # E3: no arguments
        ],
        "tool_use",
    )
    response = adapter.response_from_wire(body)
    assert response.text == "Checking."
    assert [(c.id, c.name, c.arguments, c.arguments_error) for c in response.tool_calls] == [
        ("toolu_1", "get_weather", {"city": "Paris"}, None),
        ("toolu_2", "get_time", {}, None),
    ]
    assert response.finish_reason == "tool_calls"
    assert response.provider_details == {"id": "msg_1", "model": "claude-x", "finish_reason": "tool_use"}


@pytest.mark.parametrize(
    ("stop_reason", "reason"),
    [
        ("end_turn", "stop"),
        ("tool_use", "tool_calls"),
        ("max_tokens", "length"),
        ("stop_sequence", "stop"),
        ("refusal", "content_filter"),
        ("pause_turn", "other"),
        ("model_context_window_exceeded", "length"),
        ("terminated", "other"),  # E22: outside the SDK's StopReason literal
        (None, "other"),
    ],
)
def test_stop_reason_table(stop_reason: str | None, reason: str) -> None:
    response = adapter.response_from_wire(_message([{"type": "text", "text": "x"}], stop_reason))
    assert response.finish_reason == reason
    assert response.provider_details.get("finish_reason") == stop_reason


def test_complete_calls_under_end_turn_finish_as_tool_calls() -> None:
    body = _message([{"type": "tool_use", "id": "toolu_1", "name": "t", "input": {}}], "end_turn")
    assert adapter.response_from_wire(body).finish_reason == "tool_calls"


@pytest.mark.parametrize("stop_reason", ["max_tokens", "model_context_window_exceeded", "refusal", "terminated"])
def test_a_tool_use_last_block_at_a_cutting_stop_is_unusable(stop_reason: str) -> None:
    # §3c: max_tokens while a tool_use is written -> its input is incomplete; do not execute
    body = _message(
        [
            {"type": "tool_use", "id": "toolu_1", "name": "t", "input": {"a": 1}},
            {"type": "tool_use", "id": "toolu_2", "name": "t", "input": {"a": "partial"}},
        ],
        stop_reason,
    )
    first, last = adapter.response_from_wire(body).tool_calls
    assert (first.arguments, first.arguments_error) == ({"a": 1}, None)
    assert last.arguments is None
    assert last.arguments_error is not None and stop_reason in last.arguments_error
    assert last.arguments_raw == '{"a":"partial"}'  # the raw input is kept


def test_a_tool_use_input_that_is_not_an_object_is_an_arguments_error() -> None:
    body = _message([{"type": "tool_use", "id": "toolu_1", "name": "t", "input": "oops"}], "tool_use")
    (call,) = adapter.response_from_wire(body).tool_calls
    assert call.arguments is None and call.arguments_error and call.arguments_raw == '"oops"'


def test_thinking_blocks_become_reasoning_parts() -> None:
    body = _message(
        [
            {"type": "thinking", "thinking": "I should call.", "signature": "sig=="},
            {"type": "redacted_thinking", "data": "opaque"},
            {"type": "tool_use", "id": "toolu_1", "name": "t", "input": {}},
        ],
        "tool_use",
    )
    parts = adapter.response_from_wire(body).parts
    assert parts[0] == Reasoning(text="I should call.", signature="sig==", source="anthropic")
    assert parts[1] == Reasoning(redacted="opaque", source="anthropic")
    assert isinstance(parts[2], ToolCall)


def test_usage_total_input_includes_cache_reads_and_writes() -> None:
    # RawMessageDeltaEvent.usage: total input = input_tokens + cache_creation + cache_read
    body = _message(
        [{"type": "text", "text": "x"}],
        input_tokens=10,
        cache_creation_input_tokens=5,
        cache_read_input_tokens=20,
        output_tokens=7,
    )
    usage = adapter.response_from_wire(body).usage
    assert usage is not None
    assert (usage.input_tokens, usage.output_tokens, usage.total_tokens) == (35, 7, 42)
    assert (usage.cache_read_tokens, usage.cache_write_tokens) == (20, 5)


@pytest.mark.parametrize("odd", ["12", 1.5, True, None, [3]])
def test_a_usage_count_that_is_not_an_integer_is_no_count(odd: Any) -> None:
    # found by the fuzz tier: a string count raised TypeError (int + str) out of response_from_wire
    body = _message([{"type": "text", "text": "x"}], input_tokens=10, output_tokens=7)
    body["usage"]["cache_read_input_tokens"] = odd
    usage = adapter.response_from_wire(body).usage
    assert usage is not None
    assert (usage.input_tokens, usage.output_tokens, usage.total_tokens, usage.cache_read_tokens) == (10, 7, 17, None)
    body["usage"]["input_tokens"] = odd
    usage = adapter.response_from_wire(body).usage
    assert usage is not None
    assert (usage.input_tokens, usage.output_tokens, usage.total_tokens) == (None, 7, None)


def test_server_tool_blocks_are_not_client_calls() -> None:
    body = _message(
        [
            {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {"query": "q"}},
            {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1", "content": []},
            {"type": "text", "text": "Found it."},
        ]
    )
    response = adapter.response_from_wire(body)
    assert response.tool_calls == () and response.text == "Found it."


def test_a_body_without_content_is_a_wire_format_error() -> None:
    with pytest.raises(WireFormatError):
        adapter.response_from_wire({"type": "error", "error": {"type": "api_error", "message": "x"}})


# --------------------------------------------------------------------------------------------
# Errors (§3e; the API errors page)
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("status", "etype", "kind"),
    [
        (400, "invalid_request_error", "invalid_request"),
        (401, "authentication_error", "auth"),
        (402, "billing_error", "permission"),
        (403, "permission_error", "permission"),
        (404, "not_found_error", "not_found"),
        (413, "request_too_large", "invalid_request"),
        (429, "rate_limit_error", "rate_limit"),
        (500, "api_error", "server"),
        (504, "timeout_error", "server"),
        (529, "overloaded_error", "overloaded"),
    ],
)
def test_error_types_map_to_kinds(status: int, etype: str, kind: str) -> None:
    body = {"type": "error", "error": {"type": etype, "message": "m"}, "request_id": "req_011"}
    error = adapter.error_from_wire(status, {}, body)
    assert (error.kind, error.status, error.message, error.info.code) == (kind, status, "m", etype)
    assert error.info.provider_details == {"request_id": "req_011"}


def test_a_too_long_prompt_is_a_context_length_error() -> None:
    # anthropics/claude-code#59696: 400 invalid_request_error "prompt is too long: N tokens > M maximum"
    message = "prompt is too long: 203284 tokens > 200000 maximum"
    body = {"type": "error", "error": {"type": "invalid_request_error", "message": message}}
    assert adapter.error_from_wire(400, {}, body).kind == "context_length"


@pytest.mark.parametrize(
    ("headers", "seconds"),
    [
        ({"retry-after": "7"}, 7.0),
        ({"Retry-After-Ms": "1500"}, 1.5),
        ({"retry-after": "7", "retry-after-ms": "250"}, 0.25),  # the SDK prefers retry-after-ms
        ({}, None),
    ],
)
def test_retry_after_comes_from_the_headers(headers: dict[str, str], seconds: float | None) -> None:
    body = '{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}'
    assert adapter.error_from_wire(429, headers, body).retry_after == seconds


def test_a_body_that_is_not_the_envelope_falls_back_to_the_status() -> None:
    # 413 comes from Cloudflare before the API (errors page): not the JSON envelope
    error = adapter.error_from_wire(413, {"request-id": "req_9"}, b"<html>413 Request Entity Too Large</html>")
    assert error.kind == "invalid_request"
    assert "413" in error.message
    assert error.info.provider_details == {"request_id": "req_9"}
    assert adapter.error_from_wire(529, {}, None).kind == "overloaded"
    assert adapter.error_from_wire(503, {}, "").message == "HTTP 503"


def test_an_unknown_error_type_falls_back_to_the_status() -> None:
    body = {"type": "error", "error": {"type": "brand_new_error", "message": "?"}}
    assert adapter.error_from_wire(429, {}, body).kind == "rate_limit"
