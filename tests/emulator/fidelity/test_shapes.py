"""Shapes and kinds of hand-made bodies, written from the facts in ../shared/docs/wire-formats.md."""

from __future__ import annotations

import json

import pytest

from conformance.emulator.fidelity.shapes import (
    NOT_JSON,
    OPAQUE,
    glob_match,
    json_type,
    parent_path,
    split_path,
    stream_kinds,
    walk,
)


def test_json_types_keep_booleans_integers_and_numbers_apart() -> None:
    assert [json_type(v) for v in (None, True, 0, 0.5, "", [], {})] == [
        "null",
        "boolean",
        "integer",
        "number",
        "string",
        "array",
        "object",
    ]


def test_an_openai_chat_tool_call_response_walks_to_typed_paths() -> None:
    # wire-formats §1c: choices[].message.tool_calls[] = {id, type:"function", function:{name, arguments:<string>}}
    body = {
        "id": "chatcmpl-1",
        "choices": [
            {
                "index": 0,
                "message": {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {"id": "call_1", "type": "function", "function": {"name": "f", "arguments": '{"a":1}'}}
                    ],
                },
                "finish_reason": "tool_calls",
            }
        ],
        "usage": {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5},
    }
    shape = walk(body)
    assert ("$.choices[].message.content", "null") in shape
    assert ("$.choices[].message.tool_calls[type=function].function.arguments", "string") in shape
    assert ("$.choices[].message.tool_calls[type=function].id", "string") in shape
    assert ("$.choices[].index", "integer") in shape
    assert ("$.usage", "object") in shape
    assert ("$", "object") in shape
    assert not any("[0]" in path for path, _ in shape)


def test_typed_array_elements_keep_their_fields_apart() -> None:
    # wire-formats §3c: Anthropic content blocks are {type:"text", text} and {type:"tool_use", id, name, input}
    body = {
        "content": [
            {"type": "text", "text": "Let me check."},
            {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Paris"}},
        ]
    }
    shape = walk(body, OPAQUE["anthropic"])
    assert ("$.content[type=text].text", "string") in shape
    assert ("$.content[type=tool_use].input", "object") in shape
    assert ("$.content[type=text].input", "object") not in shape
    # the call's arguments are user data: the keys inside ``input`` are not shape
    assert not any(path.startswith("$.content[type=tool_use].input.") for path, _ in shape)


def test_elements_without_a_string_type_are_plain_brackets() -> None:
    shape = walk({"a": [{"type": 3}, {"x": 1}, "s", {"type": "has space"}]})
    assert ("$.a[]", "object") in shape
    assert ("$.a[]", "string") in shape
    assert ("$.a[].type", "integer") in shape
    assert ("$.a[].type", "string") in shape  # a type value that is not a plain word is not a discriminator


def test_gemini_function_call_args_are_opaque_in_camel_and_snake_case() -> None:
    # wire-formats §4b/4c: functionCall{name, args:<object>}; clients may echo function_call (snake_case)
    body = {
        "contents": [
            {"role": "model", "parts": [{"functionCall": {"name": "f", "args": {"city": "Paris"}}}]},
            {"role": "user", "parts": [{"function_response": {"name": "f", "response": {"result": "18C"}}}]},
        ]
    }
    shape = walk(body, OPAQUE["gemini"])
    assert ("$.contents[].parts[].functionCall.args", "object") in shape
    assert ("$.contents[].parts[].function_response.response", "object") in shape
    assert not any(".args." in p or ".response." in p for p, _ in shape)


def test_odd_keys_are_quoted_and_paths_round_trip() -> None:
    shape = walk({"@type": 1, "a b": {"c.d": True}})
    paths = {p for p, _ in shape}
    assert "$.@type" in paths
    assert '$["a\\u0020b"]["c.d"]' in paths
    for path in paths:
        assert "$" + "".join(split_path(path)) == path


def test_parent_path_climbs_one_segment() -> None:
    assert parent_path("$.a[].b") == "$.a[]"
    assert parent_path("$.a[type=x]") == "$.a"
    assert parent_path("$.a") == "$"
    assert parent_path("$") is None
    with pytest.raises(ValueError, match="not a path segment"):
        split_path("$..a")


def test_glob_is_literal_but_for_the_star() -> None:
    assert glob_match("$.choices[*].logprobs*", "$.choices[].logprobs.content[]")
    assert glob_match("stream_event:*", "stream_event:ping")
    assert not glob_match("$.a[]", "$.ab")
    assert glob_match("$.a.b", "$.a.b")
    assert not glob_match("$.a?b", "$.aXb")


# --------------------------------------------------------------------------------------------
# Streams
# --------------------------------------------------------------------------------------------


def _kinds(adapter: str, body: bytes) -> list[str]:
    return [kind for kind, _ in stream_kinds(adapter, body)]


def test_openai_chat_chunks_and_the_done_terminator() -> None:
    # wire-formats §1d: data: {chat.completion.chunk} ... data: [DONE]
    chunk = {"object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {"content": "hi"}}]}
    body = f"data: {json.dumps(chunk)}\n\ndata: {json.dumps(chunk)}\n\ndata: [DONE]\n\n".encode()
    pairs = list(stream_kinds("openai_chat", body))
    assert [k for k, _ in pairs] == ["stream_event:chat.completion.chunk"] * 2 + ["stream_event:[DONE]"]
    assert pairs[-1][1] is NOT_JSON


def test_a_mid_stream_openai_error_payload_is_its_own_kind() -> None:
    # wire-formats §1d: any data payload with a truthy ``error`` key
    body = b'data: {"error": {"message": "boom", "type": "server_error"}}\n\n'
    assert _kinds("openai_chat", body) == ["stream_event:error"]


def test_anthropic_events_by_name_with_the_block_type() -> None:
    # wire-formats §3d and MANIFEST: event:+data: pairs, padded JSON, ``{"type": "ping"}``
    body = (
        b'event: message_start\ndata: {"type":"message_start","message":{"id":"msg_1"}}\n\n'
        b'event: content_block_start\ndata: {"type":"content_block_start","index":0,'
        b'"content_block":{"type":"tool_use","id":"toolu_1","name":"f","input":{}}  }\n\n'
        b'event: ping\ndata: {"type": "ping"}\n\n'
        b'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,'
        b'"delta":{"type":"input_json_delta","partial_json":"{\\"a\\""}}\n\n'
        b'event: content_block_stop\ndata: {"type":"content_block_stop","index":0}\n\n'
        b'event: message_stop\ndata: {"type":"message_stop"}\n\n'
    )
    assert _kinds("anthropic", body) == [
        "stream_event:message_start",
        "stream_event:content_block_start/tool_use",
        "stream_event:ping",
        "stream_event:content_block_delta/input_json_delta",
        "stream_event:content_block_stop",
        "stream_event:message_stop",
    ]


def test_responses_events_name_the_output_item_type() -> None:
    # wire-formats §2d: response.output_item.added (function_call), arguments deltas, response.completed
    body = (
        b'event: response.output_item.added\ndata: {"type":"response.output_item.added",'
        b'"item":{"type":"function_call","name":"f","arguments":""}}\n\n'
        b"event: response.function_call_arguments.delta\n"
        b'data: {"type":"response.function_call_arguments.delta","delta":"{}"}\n\n'
    )
    assert _kinds("openai_responses", body) == [
        "stream_event:response.output_item.added/function_call",
        "stream_event:response.function_call_arguments.delta",
    ]


def test_gemini_sse_chunks_are_named_by_what_they_hold() -> None:
    # wire-formats §4d: data: {...}\r\n\r\n, no [DONE]; calls arrive whole; a final chunk carries finishReason
    call = {"candidates": [{"content": {"role": "model", "parts": [{"functionCall": {"name": "f", "args": {}}}]}}]}
    final = {"candidates": [{"content": {"role": "model", "parts": [{"text": ""}]}, "finishReason": "STOP"}]}
    thought = {"candidates": [{"content": {"parts": [{"text": "hmm", "thought": True}]}}]}
    body = b"".join(f"data: {json.dumps(c)}\r\n\r\n".encode() for c in (thought, call, final))
    assert _kinds("gemini", body) == ["chunk:thought", "chunk:function_call", "chunk:text+final"]


def test_gemini_streamed_json_array_is_split_into_chunks() -> None:
    # MANIFEST: without alt=sse the body is one JSON array streamed as [{...}\r\n,\r\n{...}]
    a = {"candidates": [{"content": {"parts": [{"text": "a"}]}}]}
    b = {"candidates": [{"content": {"parts": [{"functionCall": {"name": "f"}}]}, "finishReason": "STOP"}]}
    body = f"[{json.dumps(a)}\r\n,\r\n{json.dumps(b)}]".encode()
    assert _kinds("gemini", body) == ["chunk:text", "chunk:function_call+final"]


def test_a_gemini_error_chunk_is_an_error_event() -> None:
    body = b'data: {"error": {"code": 500, "message": "x", "status": "INTERNAL"}}\r\n\r\n'
    assert _kinds("gemini", body) == ["stream_event:error"]


def test_ollama_ndjson_lines() -> None:
    # wire-formats §5d: content deltas, a line with whole tool_calls, a final done:true line
    lines = [
        {"model": "m", "message": {"role": "assistant", "content": "Hi"}, "done": False},
        {
            "model": "m",
            "message": {"role": "assistant", "content": "", "tool_calls": [{"function": {}}]},
            "done": False,
        },
        {"model": "m", "message": {"role": "assistant", "content": ""}, "done": True, "done_reason": "stop"},
        {"model": "m", "message": {"role": "assistant", "content": "", "thinking": "hmm"}, "done": False},
    ]
    body = b"".join(json.dumps(line).encode() + b"\n" for line in lines)
    assert _kinds("ollama", body) == ["chunk:text", "chunk:tool_calls", "chunk:final", "chunk:thinking"]


def test_event_data_that_is_not_json() -> None:
    body = b"event: content_block_delta\ndata: {not json\n\ndata: oops\n\n"
    pairs = list(stream_kinds("anthropic", body))
    assert pairs == [("stream_event:content_block_delta", NOT_JSON), ("stream_event:<not-json>", NOT_JSON)]
