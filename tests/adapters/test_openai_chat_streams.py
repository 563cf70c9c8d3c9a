"""``openai_chat`` streams and response bodies, on small hand-made wire data.

Every stream is built from the documented chunk shape (wire-formats.md §1d; openai-python
``types/chat/chat_completion_chunk.py``: ``ChoiceDeltaToolCall{index, id?, type?, function?{name?,
arguments?}}``, ``finish_reason``, ``usage``) and SSE framing (``data: …\\n\\n`` … ``data: [DONE]``,
``_streaming.py``). Expected values follow the wire facts and §9 rule 2, not the adapter's output.

Edge cases (wire-formats.md §10) and the tests covering them:
- E1 UTF-8 split across chunks: ``test_utf8_split_anywhere_gives_the_same_events``;
- E2 arguments split mid-token / mid-escape: ``test_arguments_split_mid_escape_concatenate``;
- E3 empty or absent arguments: ``test_empty_or_absent_arguments_mean_no_arguments`` (+ body variant);
- E4 name/id repeated, ``""`` or null later: ``test_repeated_id_and_name_are_never_concatenated``,
  ``test_empty_and_null_name_on_later_chunks_are_ignored``,
  ``test_empty_or_null_ids_on_later_fragments_are_read_as_the_openai_sdk_reads_them``;
- E5 several JSON objects / duplicated chunks: ``test_several_json_objects_under_one_index``,
  ``test_duplicated_argument_chunk_is_an_arguments_error``;
- E6 id only in the first chunk / whole call in one chunk: ``test_arguments_in_the_first_chunk``,
  ``test_whole_call_in_one_chunk_without_index_or_type``;
- E7 forced choice ends with ``stop``: ``test_forced_choice_stop_with_calls_is_tool_calls`` (+ body);
- E8 no finish reason / cut by length: ``test_stream_ended_without_finish_reason``,
  ``test_done_without_any_finish_reason``, ``test_length_cut_mid_arguments``;
- E24 ``choices: []`` chunks: ``test_usage_chunk_and_azure_filter_chunk``;
- E25 Mistral whole call without ``index``/``type``: ``test_whole_call_in_one_chunk_without_index_or_type``;
- E27 ``id: ""``: ``test_empty_id_gets_a_deterministic_synthetic_id`` (+ body);
- E35 legacy ``function_call``: ``test_legacy_function_call_stream`` and ``test_legacy_function_call_body``.
Beyond §10: reused ``index`` with a new id (ollama/ollama#15457), one id under two indexes
(mudler/LocalAI#9722), name after the id, index not from
0, interleaved calls, mid-stream error payloads, malformed events, unknown finish reasons, ignored
fields (refusal, obfuscation, comments), incremental delivery.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from conformance.adapters import openai_chat as adapter
from conformance.adapters.base import synthetic_call_id
from conformance.assembly import fold, lifecycle_problems
from conformance.model import (
    ErrorEvent,
    Finish,
    ReasoningDelta,
    Response,
    StreamEvent,
    TextDelta,
    Tool,
    ToolCallChunk,
    ToolCallEnd,
    ToolCallStart,
    UsageEvent,
)

# --------------------------------------------------------------------------------------------
# Builders of wire data (shapes from chat_completion_chunk.py / chat_completion.py)
# --------------------------------------------------------------------------------------------


def chunk(delta: dict[str, Any] | None = None, finish: str | None = None, **top: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "gpt-4o-mini",
        "choices": [{"index": 0, "delta": delta or {}, "logprobs": None, "finish_reason": finish}],
    }
    body.update(top)
    return body


def frag(index: int | None = 0, id: str | None = None, name: str | None = None, args: str | None = None) -> dict:
    """One ``delta.tool_calls[]`` entry; ``None`` leaves a key out."""
    out: dict[str, Any] = {} if index is None else {"index": index}
    if id is not None:
        out.update(id=id, type="function")
    function = {k: v for k, v in (("name", name), ("arguments", args)) if v is not None}
    if function:
        out["function"] = function
    return out


def calls(*fragments: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    return chunk({"tool_calls": list(fragments)}, finish)


def sse(*payloads: dict[str, Any] | str, done: bool = True) -> bytes:
    lines = [p if isinstance(p, str) else json.dumps(p) for p in payloads] + (["[DONE]"] if done else [])
    return "".join(f"data: {line}\n\n" for line in lines).encode()


def run(body: bytes, *, tools: tuple[Tool, ...] = ()) -> list[StreamEvent]:
    events = list(adapter.stream_from_wire([body], tools=tools))
    assert list(adapter.stream_from_wire([body[i : i + 1] for i in range(len(body))], tools=tools)) == events
    return events


def folded(body: bytes) -> Response:
    events = run(body)
    assert lifecycle_problems(events) == [], events
    return fold(events)


ROLE = chunk({"role": "assistant", "content": None})
FINISH = chunk({}, "tool_calls")


# --------------------------------------------------------------------------------------------
# Fragments and accumulation (§1d, §9 rule 2)
# --------------------------------------------------------------------------------------------


def test_arguments_in_the_first_chunk() -> None:
    events = run(
        sse(ROLE, calls(frag(0, "call_A", "get_weather", '{"city":')), calls(frag(0, args='"Paris"}')), FINISH)
    )
    assert events == [
        ToolCallStart("call_A", "get_weather", 0),
        ToolCallChunk("call_A", '{"city":'),
        ToolCallChunk("call_A", '"Paris"}'),
        ToolCallEnd("call_A", '{"city":"Paris"}', {"city": "Paris"}),
        Finish("tool_calls", "tool_calls"),
    ]


def test_name_arrives_in_a_later_chunk_than_the_id() -> None:
    body = sse(
        calls(frag(0, "call_A", args='{"ci')),  # id first, no name yet
        calls(frag(0, name="get_weather", args='ty":')),
        calls(frag(0, args='"Oslo"}')),
        FINISH,
    )
    response = folded(body)
    (call,) = response.tool_calls
    assert (call.id, call.name, call.arguments_raw) == ("call_A", "get_weather", '{"city":"Oslo"}')
    assert call.arguments == {"city": "Oslo"}


def test_tool_call_index_not_starting_at_zero() -> None:
    body = sse(calls(frag(3, "call_A", "a", "{}")), calls(frag(7, "call_B", "b", '{"x":1}')), FINISH)
    events = run(body)
    starts = [e for e in events if isinstance(e, ToolCallStart)]
    assert [(s.tool_call_id, s.index) for s in starts] == [("call_A", 0), ("call_B", 1)]
    assert [c.arguments for c in folded(body).tool_calls] == [{}, {"x": 1}]


def test_interleaved_parallel_calls_accumulate_by_index() -> None:
    body = sse(
        calls(frag(0, "call_A", "get_weather", "")),
        calls(frag(1, "call_B", "get_time", "")),
        calls(frag(0, args='{"city":')),
        calls(frag(1, args='{"tz":')),
        calls(frag(1, args='"UTC"}')),
        calls(frag(0, args='"Rome"}')),
        FINISH,
    )
    response = folded(body)
    assert [(c.id, c.name, c.arguments) for c in response.tool_calls] == [
        ("call_A", "get_weather", {"city": "Rome"}),
        ("call_B", "get_time", {"tz": "UTC"}),
    ]
    assert response.finish_reason == "tool_calls"


def test_two_entries_for_one_index_in_one_chunk() -> None:
    # openai-python _deltas.py _normalize_indexed_list: "first tool_call chunk contains both the
    # id/name AND the start of arguments, both at index 0"
    body = sse(calls(frag(0, "call_A", "f", ""), frag(0, args='{"a":1}')), FINISH)
    (call,) = folded(body).tool_calls
    assert (call.id, call.arguments) == ("call_A", {"a": 1})


def test_repeated_id_and_name_are_never_concatenated() -> None:
    # E4: MiniMax/NIM repeat id and name in every chunk; openai-python would give read_fileread_file
    body = sse(
        calls(frag(0, "call_x", "read_file", '{"path":')),
        calls(frag(0, "call_x", "read_file", '"a.txt"}')),
        FINISH,
    )
    (call,) = folded(body).tool_calls
    assert (call.id, call.name, call.arguments) == ("call_x", "read_file", {"path": "a.txt"})


def test_empty_and_null_name_on_later_chunks_are_ignored() -> None:
    # E4: "name": "" (huggingface/tau#715) and "name": null (vLLM) on later chunks; "id": "" too
    later_empty = {"index": 0, "id": "", "function": {"name": "", "arguments": '{"q":'}}
    later_null = {"index": 0, "id": None, "function": {"name": None, "arguments": '"x"}'}}
    body = sse(calls(frag(0, "call_A", "search", "")), calls(later_empty), calls(later_null), FINISH)
    (call,) = folded(body).tool_calls
    assert (call.id, call.name, call.arguments) == ("call_A", "search", {"q": "x"})


@pytest.mark.parametrize(
    "later",
    [
        # Alibaba DashScope, vLLM (anomalyco/opencode#40969, InternLM/lmdeploy#3412): id "" and type, no name
        lambda piece: {"id": "", "type": "function", "index": 0, "function": {"arguments": piece}},
        # SGLang (sgl-project/sglang#35542): id and name serialized as null
        lambda piece: {"id": None, "index": 0, "type": "function", "function": {"name": None, "arguments": piece}},
    ],
    ids=["id_empty", "id_null"],
)
def test_empty_or_null_ids_on_later_fragments_are_read_as_the_openai_sdk_reads_them(later: Any) -> None:
    # E4: the SDK's stream accumulation (openai/lib/streaming/_deltas.py accumulate_delta) keeps the
    # first fragment's id and name: "" appends nothing and a null value leaves the accumulated one
    from openai.lib.streaming.chat import ChatCompletionStreamState
    from openai.types.chat import ChatCompletionChunk

    chunks = [
        calls(frag(0, "call_Q", "get_weather", "")),
        calls(later('{"city":')),
        calls(later('"Bergen"}')),
        FINISH,
    ]
    state = ChatCompletionStreamState()
    for payload in chunks:
        state.handle_chunk(ChatCompletionChunk.model_validate(payload))
    (sdk,) = state.get_final_completion().choices[0].message.tool_calls or []
    (call,) = folded(sse(*chunks)).tool_calls
    assert (call.id, call.name, call.arguments_raw) == (sdk.id, sdk.function.name, sdk.function.arguments)
    assert call.arguments == {"city": "Bergen"}


def test_reused_index_with_a_new_id_is_a_new_call() -> None:
    # ollama/ollama#15457: every parallel call streams with index 0 but its own id
    body = sse(
        calls(frag(0, "call_1", "file_write", '{"filePath":"hello.py"}')),
        calls(frag(0, "call_2", "file_write", '{"filePath":')),
        calls(frag(0, args='"world.py"}')),
        FINISH,
    )
    response = folded(body)
    assert [(c.id, c.arguments) for c in response.tool_calls] == [
        ("call_1", {"filePath": "hello.py"}),
        ("call_2", {"filePath": "world.py"}),
    ]


def test_an_open_call_id_under_another_index_continues_that_call() -> None:
    # mudler/LocalAI#9722: one call's entries arrive under several indexes, all with its id;
    # starting a second call with the same id would break the lifecycle (ids must be unique)
    body = sse(calls(frag(0, "call_L", "exec", '{"cmd":')), calls(frag(1, "call_L", args='"ls"}')), FINISH)
    (call,) = folded(body).tool_calls
    assert (call.id, call.name, call.arguments) == ("call_L", "exec", {"cmd": "ls"})


def test_empty_or_absent_arguments_mean_no_arguments() -> None:
    # E3: "" (strict no-arg tools, openai-python#3502), no arguments key at all, and "{}"
    body = sse(
        calls(frag(0, "call_A", "a", "")),
        calls(frag(1, "call_B", "b")),
        calls(frag(2, "call_C", "c", "{}")),
        FINISH,
    )
    response = folded(body)
    assert [(c.arguments, c.arguments_raw, c.arguments_error) for c in response.tool_calls] == [
        ({}, "", None),
        ({}, "", None),
        ({}, "{}", None),
    ]


def test_several_json_objects_under_one_index() -> None:
    # E5 (open-webui#22235): {…}{…} is not one valid call; the raw text is kept
    body = sse(calls(frag(0, "call_A", "f", '{"a":1}')), calls(frag(0, args='{"a":2}')), FINISH)
    (call,) = folded(body).tool_calls
    assert call.arguments is None
    assert call.arguments_raw == '{"a":1}{"a":2}'
    assert call.arguments_error is not None and "several JSON values" in call.arguments_error


def test_duplicated_argument_chunk_is_an_arguments_error() -> None:
    # E5 (lidge-jun/opencodex#361): a proxy sends one fragment twice
    body = sse(
        calls(frag(0, "call_A", "f", "")),
        calls(frag(0, args='{"city":')),
        calls(frag(0, args='{"city":')),
        calls(frag(0, args='"Rome"}')),
        FINISH,
    )
    (call,) = folded(body).tool_calls
    assert call.arguments is None and call.arguments_error
    assert call.arguments_raw == '{"city":{"city":"Rome"}'


def test_invalid_argument_json_never_crashes_nor_becomes_empty() -> None:
    body = sse(calls(frag(0, "call_A", "f", "{'city': 'Rome'}")), FINISH)
    (call,) = folded(body).tool_calls
    assert call.arguments is None and call.arguments_error and call.arguments_raw == "{'city': 'Rome'}"
    body = sse(calls(frag(0, "call_A", "f", "[1, 2]")), FINISH)
    (call,) = folded(body).tool_calls
    assert call.arguments is None and call.arguments_error and call.arguments_raw == "[1, 2]"


def test_whole_call_in_one_chunk_without_index_or_type() -> None:
    # E25: Mistral sends {id, function{name, arguments}} without index/type, with finish and usage
    whole = {"id": "EscTeQY62", "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'}}
    usage = {"prompt_tokens": 96, "total_tokens": 119, "completion_tokens": 23}
    body = sse(chunk({"role": "assistant", "content": ""}), chunk({"tool_calls": [whole]}, "tool_calls", usage=usage))
    response = folded(body)
    (call,) = response.tool_calls
    assert (call.id, call.name, call.arguments) == ("EscTeQY62", "get_weather", {"city": "Paris"})
    assert response.usage is not None and response.usage.total_tokens == 119


def test_whole_calls_without_index_in_separate_chunks_stay_separate() -> None:
    # E25 + ollama/ollama#7881 (index missing): each chunk's call is at position 0, but its id is new
    one = {"id": "a1", "function": {"name": "f", "arguments": '{"n":1}'}}
    two = {"id": "b2", "function": {"name": "f", "arguments": '{"n":2}'}}
    response = folded(sse(chunk({"tool_calls": [one]}), chunk({"tool_calls": [two]}), FINISH))
    assert [(c.id, c.arguments) for c in response.tool_calls] == [("a1", {"n": 1}), ("b2", {"n": 2})]


def test_arguments_split_mid_escape_concatenate() -> None:
    # E2: only the concatenation is JSON; \u00fc straddles two fragments
    body = sse(
        calls(frag(0, "call_A", "f", '{"c')),
        calls(frag(0, args='ity": "Z\\u00')),
        calls(frag(0, args='fcrich"}')),
        FINISH,
    )
    (call,) = folded(body).tool_calls
    assert call.arguments == {"city": "Zürich"}
    assert call.arguments_raw == '{"city": "Z\\u00fcrich"}'


def test_utf8_split_anywhere_gives_the_same_events() -> None:
    # E1: multi-byte code points in text and arguments, cut at every byte position
    body = sse(
        chunk({"role": "assistant", "content": "Zürich → 東京 🌍"}),
        calls(frag(0, "call_A", "route", '{"to": "東京 🌍"}')),
        FINISH,
    )
    whole = list(adapter.stream_from_wire([body]))
    for cut in range(1, len(body)):
        assert list(adapter.stream_from_wire([body[:cut], body[cut:]])) == whole
    response = fold(whole)
    assert response.text == "Zürich → 東京 🌍" and "\ufffd" not in response.text
    assert response.tool_calls[0].arguments == {"to": "東京 🌍"}


def test_wire_names_map_back_to_the_mcp_names() -> None:
    tools = (Tool(name="fs.read"), Tool(name="fs/write"))
    wire = adapter.tools_to_wire(tools)
    read, write = (wire.names.wire(t.name) for t in tools)
    body = sse(calls(frag(0, "call_A", read, "{}")), calls(frag(1, "call_B", write, "{}")), FINISH)
    events = run(body, tools=tools)
    assert [e.tool_call_name for e in events if isinstance(e, ToolCallStart)] == ["fs.read", "fs/write"]


# --------------------------------------------------------------------------------------------
# Ids (E27) and legacy function_call (E35)
# --------------------------------------------------------------------------------------------


def test_empty_id_gets_a_deterministic_synthetic_id() -> None:
    body = sse(
        calls({"index": 0, "id": "", "type": "function", "function": {"name": "f", "arguments": "{}"}}),
        calls({"index": 1, "id": "", "type": "function", "function": {"name": "g", "arguments": "{}"}}),
        FINISH,
    )
    first = folded(body).tool_calls
    assert all(c.id.startswith("call_") for c in first) and first[0].id != first[1].id
    assert [c.id for c in folded(body).tool_calls] == [c.id for c in first]  # same bytes, same ids
    other = body.replace(b'"chatcmpl-1"', b'"chatcmpl-2"')
    assert [c.id for c in folded(other).tool_calls] != [c.id for c in first]  # another response


def test_legacy_function_call_stream() -> None:
    # E35: delta.function_call {name, arguments} (ChoiceDeltaFunctionCall), finish "function_call"
    body = sse(
        chunk({"role": "assistant", "content": None, "function_call": {"name": "extract", "arguments": ""}}),
        chunk({"function_call": {"arguments": '{"name": "Da'}}),
        chunk({"function_call": {"arguments": 'vid"}'}}),
        chunk({}, "function_call"),
    )
    response = folded(body)
    (call,) = response.tool_calls
    assert (call.name, call.arguments) == ("extract", {"name": "David"})
    assert call.id == synthetic_call_id("openai_chat", "chatcmpl-1", 0)
    assert response.finish_reason == "tool_calls" and response.provider_details["finish_reason"] == "function_call"


# --------------------------------------------------------------------------------------------
# Finish reasons, usage, ends of stream
# --------------------------------------------------------------------------------------------


def test_forced_choice_stop_with_calls_is_tool_calls() -> None:
    # E7: a named tool_choice ends with "stop" while tool_calls are present (vllm#49496)
    body = sse(calls(frag(0, "call_A", "f", "{}")), chunk({}, "stop"))
    response = folded(body)
    assert response.finish_reason == "tool_calls"
    assert response.provider_details["finish_reason"] == "stop"


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        ("stop", "stop"),
        ("length", "length"),
        ("content_filter", "content_filter"),
        ("tool_calls", "tool_calls"),
        ("function_call", "tool_calls"),
        ("insufficient_system_resource", "other"),  # a compatible server's own reason
    ],
)
def test_finish_reasons(raw: str, reason: str) -> None:
    response = folded(sse(chunk({"content": "hi"}), chunk({}, raw)))
    assert (response.finish_reason, response.provider_details["finish_reason"]) == (reason, raw)


def test_usage_chunk_and_azure_filter_chunk() -> None:
    # E24: Azure's first chunk {"choices":[],"object":"","prompt_filter_results":[…]}, then the
    # include_usage chunk {"choices":[],"usage":{…}}; other chunks carry "usage": null
    azure = {"choices": [], "created": 0, "id": "", "model": "", "object": "", "prompt_filter_results": [{}]}
    usage = {
        "prompt_tokens": 80,
        "completion_tokens": 30,
        "total_tokens": 110,
        "prompt_tokens_details": {"cached_tokens": 64},
        "completion_tokens_details": {"reasoning_tokens": 12},
    }
    body = sse(
        azure,
        chunk({"content": "ok"}, usage=None),
        chunk({}, "stop", usage=None),
        chunk(usage=usage) | {"choices": []},
    )
    events = run(body)
    assert lifecycle_problems(events) == []
    assert [type(e) for e in events] == [TextDelta, UsageEvent, Finish]
    (usage_event,) = (e for e in events if isinstance(e, UsageEvent))
    got = usage_event.usage
    assert (got.input_tokens, got.output_tokens, got.total_tokens) == (80, 30, 110)
    assert (got.cache_read_tokens, got.reasoning_tokens) == (64, 12)


def test_stream_ended_without_finish_reason() -> None:
    # E8: open calls end with an arguments error, then error(stream_incomplete), then finish(error)
    events = run(sse(calls(frag(0, "call_A", "f", '{"a":')), calls(frag(0, args="1}")), done=False))
    assert lifecycle_problems(events) == []
    end, error, finish = events[-3:]
    assert isinstance(end, ToolCallEnd) and end.arguments is None and end.arguments_error
    assert end.tool_call_arguments_complete == '{"a":1}'  # kept, though it would parse
    assert isinstance(error, ErrorEvent) and error.error.kind == "stream_incomplete"
    assert finish == Finish("error")
    assert fold(events).tool_calls[0].arguments is None


def test_done_without_any_finish_reason_is_complete_with_calls() -> None:
    # OpenAI-compatible gateways end with [DONE] and never send a non-null finish_reason: the
    # stream is complete, its calls valid, the reason inferred and the provider's value kept None
    body = sse(calls(frag(0, "call_A", "f", '{"a":')), calls(frag(0, args="1}")), calls(frag(1, "call_B", "g", "{}")))
    events = run(body)
    assert lifecycle_problems(events) == []
    assert not any(isinstance(e, ErrorEvent) for e in events)
    assert events[-1] == Finish("tool_calls", None)
    response = fold(events)
    assert [(c.name, c.arguments, c.arguments_error) for c in response.tool_calls] == [
        ("f", {"a": 1}, None),
        ("g", {}, None),
    ]
    assert response.finish_reason == "tool_calls"


def test_done_without_any_finish_reason_and_no_calls_is_stop() -> None:
    events = run(sse(chunk({"content": "hi"})))
    assert not any(isinstance(e, ErrorEvent) for e in events)
    assert events[-1] == Finish("stop", None)
    assert fold(events).text == "hi"


def test_done_without_finish_reason_keeps_a_bad_call_invalid() -> None:
    # the inferred finish does not repair arguments that never completed
    events = run(sse(calls(frag(0, "call_A", "f", '{"a":'))))
    end = next(e for e in events if isinstance(e, ToolCallEnd))
    assert end.arguments is None and end.arguments_error
    assert events[-1] == Finish("tool_calls", None)


def test_a_truncated_last_event_is_incomplete() -> None:
    body = sse(calls(frag(0, "call_A", "f", "{}")), done=False) + b'data: {"id": "chatcmpl-1", "choi'
    events = run(body)
    assert lifecycle_problems(events) == []
    assert isinstance(events[-2], ErrorEvent) and events[-1] == Finish("error")


def test_finish_reason_without_done_still_finishes() -> None:
    # a finish_reason means the model is done; only the optional usage chunk may be missing
    events = run(sse(calls(frag(0, "call_A", "f", "{}")), FINISH, done=False))
    assert lifecycle_problems(events) == []
    assert events[-1] == Finish("tool_calls", "tool_calls")
    assert not any(isinstance(e, ErrorEvent) for e in events)


def test_length_cut_mid_arguments() -> None:
    # §1c/E8: "length" mid-call leaves truncated arguments that must never be executed
    events = run(sse(calls(frag(0, "call_A", "write", '{"text": "lorem ip')), chunk({}, "length")))
    assert lifecycle_problems(events) == []
    end = next(e for e in events if isinstance(e, ToolCallEnd))
    assert end.arguments is None and end.arguments_error and end.tool_call_arguments_complete == '{"text": "lorem ip'
    assert events[-1] == Finish("length", "length")
    # even when the truncated text happens to parse
    events = run(sse(calls(frag(0, "call_A", "f", "{}")), chunk({}, "length")))
    assert next(e for e in events if isinstance(e, ToolCallEnd)).arguments is None


def test_a_call_that_never_gets_a_name_ends_with_an_error() -> None:
    events = run(sse(calls(frag(0, "call_A", args='{"a":1}')), FINISH))
    end = next(e for e in events if isinstance(e, ToolCallEnd))
    assert end.arguments is None and end.arguments_error and end.tool_call_arguments_complete == '{"a":1}'
    assert events[-1].type == "finish"


def test_fragments_after_the_finish_reason_still_end() -> None:
    body = sse(chunk({"content": "x"}, "stop"), calls(frag(0, "call_A", "f", "{}")))
    events = run(body)
    assert lifecycle_problems(events) == []
    assert fold(events).tool_calls[0].arguments == {}


# --------------------------------------------------------------------------------------------
# Errors and malformed input inside a stream
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("error", "kind"),
    [
        ({"message": "The server had an error.", "type": "server_error", "param": None, "code": None}, "server"),
        ({"message": "Rate limit reached", "type": "requests", "code": "rate_limit_exceeded"}, "rate_limit"),
        ({"message": "too long", "type": "invalid_request_error", "code": "context_length_exceeded"}, "context_length"),
        ("upstream failed", "unknown"),
    ],
)
def test_mid_stream_error_payload(error: Any, kind: str) -> None:
    # §1d: any data payload with a truthy "error" key; openai-python raises APIError(body=error)
    body = sse(calls(frag(0, "call_A", "f", '{"a":')), {"error": error}, calls(frag(0, args="1}")), FINISH)
    events = run(body)
    assert lifecycle_problems(events) == []
    end, event, finish = events[-3:]
    assert isinstance(end, ToolCallEnd) and end.arguments_error and end.tool_call_arguments_complete == '{"a":'
    assert isinstance(event, ErrorEvent) and event.error.kind == kind and event.error.status is None
    assert event.error.message == (error["message"] if isinstance(error, dict) else error)
    assert finish == Finish("error")
    assert fold(events).error == event.error


def test_error_in_a_named_sse_event() -> None:
    # _streaming.py: `if sse.event == "error": _raise_streaming_error(data)`
    body = b'event: error\ndata: {"error": {"message": "boom", "type": "server_error"}}\n\n'
    events = run(body)
    assert [type(e) for e in events] == [ErrorEvent, Finish]
    assert isinstance(events[0], ErrorEvent) and events[0].error.kind == "server"


@pytest.mark.parametrize(
    "payload",
    [
        '{"choices": [{"index": 0, "delta": {"content": "hi"',  # cut JSON
        "not json at all",
        "[1, 2, 3]",  # JSON, but not a chunk object
        '{"choices": [{"index": 0, "delta": {"tool_calls": [null]}}]}',  # wrong field types
        '{"choices": "nope"}',
    ],
)
def test_malformed_event_is_a_malformed_response(payload: str) -> None:
    body = sse(calls(frag(0, "call_A", "f", '{"a":')), payload, FINISH)
    events = run(body)
    assert lifecycle_problems(events) == []
    assert isinstance(events[-3], ToolCallEnd) and events[-3].arguments_error
    assert isinstance(events[-2], ErrorEvent) and events[-2].error.kind == "malformed_response"
    assert events[-1] == Finish("error")


def test_ignored_fields_comments_and_unknown_chunks() -> None:
    # refusal/obfuscation/logprobs/service_tier are not content; SSE comments (": keep-alive")
    # and chunks with only unknown fields give no events; empty content gives no text delta
    body = b": keep-alive\n\n" + sse(
        chunk({"role": "assistant", "content": "", "refusal": None}, obfuscation="Xy12", service_tier="default"),
        chunk({"content": "Hi", "refusal": None}, obfuscation="ab"),
        {"object": "chat.completion.chunk", "choices": [], "moderation": None},
        {"id": "chatcmpl-1", "something_new": {"a": 1}},
        chunk({}, "stop"),
    )
    assert run(body) == [TextDelta("Hi"), Finish("stop", "stop")]


def test_reasoning_content_of_compatible_servers() -> None:
    # the run of reasoning ends where the answer starts: one delta names the field it came in
    body = sse(chunk({"reasoning_content": "think"}), chunk({"content": "answer"}), chunk({}, "stop"))
    assert run(body) == [
        ReasoningDelta("think", source="openai_chat"),
        ReasoningDelta("", provider_details={"field": "reasoning_content"}, source="openai_chat"),
        TextDelta("answer"),
        Finish("stop", "stop"),
    ]


def test_events_leave_as_soon_as_their_bytes_arrive() -> None:
    pieces = [
        sse(calls(frag(0, "call_A", "f", '{"a":')), done=False),
        sse(calls(frag(0, args="1}")), done=False),
        sse(FINISH),
    ]
    consumed: list[int] = []

    def feed() -> Iterator[bytes]:
        for n, piece in enumerate(pieces):
            consumed.append(n)
            yield piece

    stream = adapter.stream_from_wire(feed())
    assert next(stream) == ToolCallStart("call_A", "f", 0)
    assert next(stream) == ToolCallChunk("call_A", '{"a":')
    assert consumed == [0]
    assert next(stream) == ToolCallChunk("call_A", "1}")
    assert consumed == [0, 1]


# --------------------------------------------------------------------------------------------
# Non-streamed bodies (chat_completion.py) share the stream's rules
# --------------------------------------------------------------------------------------------


def body(message: dict[str, Any], finish: str | None = "tool_calls", **top: Any) -> dict[str, Any]:
    out = {
        "id": "chatcmpl-9",
        "object": "chat.completion",
        "created": 1,
        "model": "gpt-4o",
        "choices": [{"index": 0, "message": {"role": "assistant", **message}, "finish_reason": finish}],
    }
    out.update(top)
    return out


def call(id: str, name: str, arguments: str | None) -> dict[str, Any]:
    function = {"name": name} if arguments is None else {"name": name, "arguments": arguments}
    return {"id": id, "type": "function", "function": function}


def test_body_and_stream_of_the_same_turn_fold_alike() -> None:
    usage = {"prompt_tokens": 5, "completion_tokens": 7, "total_tokens": 12}
    one = body({"content": "Let me look.", "tool_calls": [call("call_A", "f", '{"a":1}')]}, usage=usage)
    stream = sse(
        chunk({"role": "assistant", "content": "Let me "}),
        chunk({"content": "look."}),
        calls(frag(0, "call_A", "f", '{"a":')),
        calls(frag(0, args="1}")),
        FINISH,
        chunk(usage=usage) | {"choices": []},
    )
    a, b = adapter.response_from_wire(one), folded(stream)
    assert (a.parts, a.finish_reason, a.usage) == (b.parts, b.finish_reason, b.usage)
    assert a.provider_details == {"id": "chatcmpl-9", "model": "gpt-4o", "finish_reason": "tool_calls"}


def test_forced_choice_stop_with_calls_is_tool_calls_in_a_body() -> None:
    response = adapter.response_from_wire(body({"content": None, "tool_calls": [call("c1", "f", "{}")]}, "stop"))
    assert response.finish_reason == "tool_calls" and response.provider_details["finish_reason"] == "stop"


def test_empty_or_absent_arguments_in_a_body() -> None:
    response = adapter.response_from_wire(body({"tool_calls": [call("c1", "f", ""), call("c2", "g", None)]}))
    assert [(c.arguments, c.arguments_error) for c in response.tool_calls] == [({}, None), ({}, None)]


def test_several_json_objects_in_a_body_are_an_arguments_error() -> None:
    (got,) = adapter.response_from_wire(body({"tool_calls": [call("c1", "f", '{"a":1}{"a":2}')]})).tool_calls
    assert got.arguments is None and got.arguments_error and got.arguments_raw == '{"a":1}{"a":2}'


def test_length_with_calls_in_a_body_is_never_a_valid_call() -> None:
    response = adapter.response_from_wire(body({"tool_calls": [call("c1", "f", '{"a": "tr')]}, "length"))
    (got,) = response.tool_calls
    assert got.arguments is None and got.arguments_error and response.finish_reason == "length"


def test_empty_id_in_a_body_is_deterministic() -> None:
    # E27 (Gemini's OpenAI endpoint)
    raw = body({"tool_calls": [call("", "f", "{}"), call("", "g", "{}")]})
    ids = [c.id for c in adapter.response_from_wire(raw).tool_calls]
    assert ids == [synthetic_call_id("openai_chat", "chatcmpl-9", 0), synthetic_call_id("openai_chat", "chatcmpl-9", 1)]
    assert ids == [c.id for c in adapter.response_from_wire(json.loads(json.dumps(raw))).tool_calls]


def test_legacy_function_call_body() -> None:
    raw = body({"content": None, "function_call": {"name": "extract", "arguments": '{"a": 1}'}}, "function_call")
    response = adapter.response_from_wire(raw)
    (got,) = response.tool_calls
    assert (got.name, got.arguments, got.id) == ("extract", {"a": 1}, synthetic_call_id("openai_chat", "chatcmpl-9", 0))
    assert response.finish_reason == "tool_calls"


def test_refusal_and_unknown_fields_in_a_body_are_not_content() -> None:
    raw = body({"content": "Hello", "refusal": None, "annotations": []}, "stop", service_tier="default")
    response = adapter.response_from_wire(raw)
    assert response.text == "Hello" and response.finish_reason == "stop" and response.tool_calls == ()


def test_a_body_without_choices_is_a_wire_format_error() -> None:
    from conformance.errors import WireFormatError

    with pytest.raises(WireFormatError):
        adapter.response_from_wire({"id": "x", "choices": []})
