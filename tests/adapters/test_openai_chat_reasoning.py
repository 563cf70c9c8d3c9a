"""``openai_chat`` reasoning, reasoning settings and cache usage (issue 28), on hand-made wire data.

Wire facts (issue28-wire-facts.md "Headline" and §4): reasoning on ``message``/``delta`` as
``reasoning_content`` (DeepSeek, llama.cpp), ``reasoning`` (vLLM >= 0.11, OpenRouter), both at once
(mlx-vlm, vLLM's compatibility layer: Blaizzy/mlx-vlm#1411, vllm-project/vllm#34030) and OpenRouter's
``reasoning_details``: streamed as fragments of one block sharing ``type`` and ``index``, the
signature in a final text-less fragment (agno-agi/agno#8794), summaries in many ``index: 0``
fragments, encrypted entries whole (OpenRouterTeam/ai-sdk-provider#519/#520). DeepSeek V4: a
tool-calling assistant message's ``reasoning_content`` goes back in all later requests
(https://api-docs.deepseek.com/zh-cn/guides/thinking_mode/). Settings: openai-python
``completion_create_params.py`` ``reasoning_effort`` (``none`` ... ``max``), no budget field. Usage:
openai-python ``completion_usage.py`` (``cached_tokens``, ``cache_write_tokens``,
``reasoning_tokens``), DeepSeek ``prompt_cache_hit_tokens``.
"""

from __future__ import annotations

import itertools
import json
import time
from typing import Any

import pytest

from conformance.adapters import get_adapter
from conformance.adapters import openai_chat as adapter
from conformance.assembly import fold, lifecycle_problems
from conformance.checks.translation import request_schema
from conformance.errors import UnsupportedContentError, WireFormatError
from conformance.model import (
    ErrorEvent,
    Message,
    Reasoning,
    ReasoningSettings,
    Request,
    Response,
    Text,
    ToolCall,
    ToolResult,
)

WIRE = "openai_chat"
CALL = {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": '{"city":"Paris"}'}}
THINK = "The user wants the weather in Paris; I should call get_weather."
SIGNATURE = "Et8BCmUIDxgCKkD0"
DETAILS_FORMAT = "anthropic-claude-v1"


def body(message: dict[str, Any], finish: str = "tool_calls", usage: dict[str, Any] | None = None) -> dict[str, Any]:
    """A ``chat.completion`` (openai-python ``chat_completion.py``)."""
    out: dict[str, Any] = {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1,
        "model": "m",
        "choices": [{"index": 0, "message": {"role": "assistant", **message}, "finish_reason": finish}],
    }
    if usage is not None:
        out["usage"] = usage
    return out


def sse(*deltas: dict[str, Any], finish: str = "tool_calls") -> bytes:
    """A ``chat.completion.chunk`` stream of ``deltas``, a finish chunk and ``[DONE]``."""
    chunks = [{"id": "c", "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": d}]} for d in deltas]
    chunks.append(
        {"id": "c", "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]}
    )
    return b"".join(b"data: " + json.dumps(c).encode() + b"\n\n" for c in chunks) + b"data: [DONE]\n\n"


def streamed(data: bytes) -> Response:
    events = list(adapter.stream_from_wire([data]))
    assert lifecycle_problems(events) == []
    return fold(events)


def reasoning_parts(response: Response) -> list[Reasoning]:
    return [p for p in response.parts if isinstance(p, Reasoning)]


def pieces(text: str, size: int = 7) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]


# --------------------------------------------------------------------------------------------
# Decoding, whole and streamed
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("field", ["reasoning_content", "reasoning"])
def test_a_reasoning_field_is_one_part_before_the_calls_in_both_modes(field: str) -> None:
    whole = adapter.response_from_wire(body({"content": None, field: THINK, "tool_calls": [CALL]}))
    delta_call = {"tool_calls": [{"index": 0, **CALL}]}
    stream = streamed(sse({"role": "assistant"}, *({field: p} for p in pieces(THINK)), delta_call))
    for response in (whole, stream):
        assert [p.kind for p in response.parts] == ["reasoning", "tool_call"]
        (part,) = reasoning_parts(response)
        assert (part.text, part.source, part.signature, part.redacted) == (THINK, WIRE, None, None)
        assert part.provider_details == {"field": field}


def test_a_server_sending_both_fields_gets_both_back() -> None:
    message = {"content": "Hi", "reasoning_content": THINK, "reasoning": THINK}
    whole = adapter.response_from_wire(body(message, "stop"))
    stream = streamed(sse(*({"reasoning_content": p, "reasoning": p} for p in pieces(THINK)), {"content": "Hi"}))
    for response in (whole, stream):
        (part,) = reasoning_parts(response)
        assert part.text == THINK
        assert part.provider_details == {"field": "reasoning_content", "also": {"reasoning": THINK}}
        replayed = _replayed(response)
        assert (replayed["reasoning_content"], replayed["reasoning"]) == (THINK, THINK)


def test_empty_and_null_markers_on_content_chunks_are_no_reasoning() -> None:
    data = sse({"content": "Hi", "reasoning": "", "reasoning_content": None, "reasoning_details": []}, finish="stop")
    assert reasoning_parts(streamed(data)) == []
    assert reasoning_parts(adapter.response_from_wire(body({"content": "Hi", "reasoning": None}, "stop"))) == []


def test_an_empty_reasoning_content_in_a_whole_body_goes_back_as_it_came() -> None:
    # implementers report DeepSeek wants "reasoning_content": "" back on a tool-call message
    # (vercel/ai#13203, UNVERIFIED officially): a string field is kept, even empty
    response = adapter.response_from_wire(body({"content": None, "reasoning_content": "", "tool_calls": [CALL]}))
    (part,) = reasoning_parts(response)
    assert part.text == "" and _replayed(response)["reasoning_content"] == ""


def test_openrouter_reasoning_details_are_kept_verbatim_in_a_whole_body() -> None:
    details = [
        {"type": "reasoning.text", "text": THINK, "signature": SIGNATURE, "format": DETAILS_FORMAT, "index": 0},
        {"type": "reasoning.encrypted", "data": "c2lnbmVk", "format": "google-gemini-v1", "index": 1},
    ]
    message = {"content": None, "reasoning": THINK, "reasoning_details": details, "tool_calls": [CALL]}
    response = adapter.response_from_wire(body(message))
    (part,) = reasoning_parts(response)
    assert (part.text, part.signature, part.redacted) == (THINK, SIGNATURE, None)
    assert part.provider_details == {"field": "reasoning", "reasoning_details": details}
    assert _replayed(response)["reasoning_details"] == details


def test_streamed_detail_fragments_merge_into_the_block_openrouter_sent() -> None:
    # agno-agi/agno#8794: text in pieces, the signature in a final text-less fragment, same type and index
    head = {"type": "reasoning.text", "format": DETAILS_FORMAT, "index": 0}
    deltas = [{"reasoning": p, "reasoning_details": [{**head, "text": p}]} for p in pieces(THINK)]
    deltas.append({"reasoning_details": [{**head, "signature": SIGNATURE}]})
    response = streamed(sse(*deltas, {"tool_calls": [{"index": 0, **CALL}]}))
    (part,) = reasoning_parts(response)
    merged = {"type": "reasoning.text", "format": DETAILS_FORMAT, "index": 0, "text": THINK, "signature": SIGNATURE}
    assert part.provider_details == {"field": "reasoning", "reasoning_details": [merged]}
    assert (part.text, part.signature) == (THINK, SIGNATURE)
    whole = adapter.response_from_wire(
        body({"content": None, "reasoning": THINK, "reasoning_details": [merged], "tool_calls": [CALL]})
    )
    assert reasoning_parts(whole) == [part]  # streamed and not decode alike


def test_summary_fragments_merge_and_encrypted_entries_stay_whole() -> None:
    # OpenRouterTeam/ai-sdk-provider#519: every streamed fragment says index 0; a summary comes in
    # many pieces (one entry once merged), an encrypted entry arrives whole after it
    summary = [
        {"type": "reasoning.summary", "summary": p, "format": "openai-responses-v1", "index": 0} for p in pieces(THINK)
    ]
    encrypted = {"type": "reasoning.encrypted", "data": "gAAAAB", "format": "openai-responses-v1", "index": 0}
    response = streamed(
        sse(
            *({"reasoning_details": [s]} for s in summary),
            {"reasoning_details": [encrypted]},
            {"content": "Hi"},
            finish="stop",
        )
    )
    (part,) = reasoning_parts(response)
    merged = {"type": "reasoning.summary", "summary": THINK, "format": "openai-responses-v1", "index": 0}
    assert part.provider_details == {"reasoning_details": [merged, encrypted]}
    assert part.text == THINK  # no text field: the summary is the text
    assert "reasoning" not in _replayed(response) and "reasoning_content" not in _replayed(response)


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "stream"])
def test_encrypted_details_alone_are_redacted_reasoning(stream: bool) -> None:
    encrypted = {"type": "reasoning.encrypted", "data": "RW5jcnlwdGVk", "format": DETAILS_FORMAT, "index": 0}
    message = {"content": "Hi", "reasoning": None, "reasoning_details": [encrypted]}
    if stream:
        response = streamed(sse({"reasoning_details": [encrypted]}, {"content": "Hi"}, finish="stop"))
    else:
        response = adapter.response_from_wire(body(message, "stop"))
    (part,) = reasoning_parts(response)
    assert (part.text, part.redacted, part.source) == ("", "RW5jcnlwdGVk", WIRE)
    assert _replayed(response)["reasoning_details"] == [encrypted]


def test_reasoning_alone_until_the_stream_ends_keeps_its_fields() -> None:
    for finish in ("stop", "length"):
        (part,) = reasoning_parts(streamed(sse({"reasoning_content": "hm"}, finish=finish)))
        assert part.provider_details == {"field": "reasoning_content"}
    cut = b'data: {"choices":[{"index":0,"delta":{"reasoning_content":"hm"}}]}\n\n'  # no finish: E8
    response = fold(adapter.stream_from_wire([cut]))
    assert response.error is not None and response.error.kind == "stream_incomplete"
    assert reasoning_parts(response)[0].provider_details == {"field": "reasoning_content"}


# --------------------------------------------------------------------------------------------
# Bad input
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fields", "named"),
    [
        ({"reasoning_content": 5}, "reasoning_content is a JSON number"),
        ({"reasoning": {"text": "x"}}, "reasoning is a JSON object"),
        ({"reasoning_details": "x"}, "reasoning_details is a JSON string"),
        ({"reasoning_details": ["x"]}, "reasoning_details[0] is not an object"),
        ({"reasoning_details": [{"text": "x"}]}, "reasoning_details[0] is not an object with a string type"),
    ],
)
def test_a_field_of_the_wrong_type_is_a_malformed_response_naming_it(fields: dict[str, Any], named: str) -> None:
    whole = adapter.response_from_wire(body({"content": "Hi", **fields}, "stop"))
    events = list(adapter.stream_from_wire([sse(fields, {"content": "Hi"}, finish="stop")]))
    assert lifecycle_problems(events) == []
    stream_error = next(e.error for e in events if isinstance(e, ErrorEvent))
    for error, where in ((whole.error, "choices[0].message."), (stream_error, "choices[0].delta.")):
        assert error is not None and error.kind == "malformed_response"
        assert where + named in error.message, error.message
    with pytest.raises(WireFormatError, match=r"messages\[1\]\." + named.split(" ")[0].replace("[", r"\[")):
        adapter.request_from_wire(
            {
                "model": "m",
                "messages": [{"role": "user", "content": "q"}, {"role": "assistant", "content": "a", **fields}],
            }
        )


def test_a_megabyte_of_reasoning_decodes_whole_in_linear_time() -> None:
    text = "thinking " * (1 << 17)  # 1.1 MB
    head = {"type": "reasoning.text", "format": DETAILS_FORMAT, "index": 0}
    chunks = pieces(text, 64)  # 18,432 fragments
    data = sse(
        *({"reasoning": p, "reasoning_details": [{**head, "text": p}]} for p in chunks),
        {"content": "ok"},
        finish="stop",
    )
    start = time.process_time()
    whole = adapter.response_from_wire(body({"content": "ok", "reasoning_content": text}, "stop"))
    stream = streamed(data)
    spent = time.process_time() - start
    assert reasoning_parts(whole)[0].text == text
    (part,) = reasoning_parts(stream)
    assert part.text == text and part.provider_details["reasoning_details"] == [{**head, "text": text}]
    assert spent < 20, spent  # linear: about a second; joining the text per fragment would be quadratic


# --------------------------------------------------------------------------------------------
# Replay (DeepSeek V4 rule; OpenRouter details unmodified; nothing from another wire)
# --------------------------------------------------------------------------------------------


def _replayed(response: Response) -> dict[str, Any]:
    """The assistant message a later request sends for ``response``."""
    request = Request(
        model="m",
        messages=(Message(role="user", parts=(Text(text="q"),)), Message(role="assistant", parts=response.parts)),
    )
    return adapter.request_to_wire(request).body["messages"][1]


def _conversation() -> list[Request]:
    """Four requests of a DeepSeek thinking-mode exchange: a call with reasoning, its result, an
    answer with reasoning, a new user turn."""
    user = Message(role="user", parts=(Text(text="Weather in Paris?"),))
    answer_1 = adapter.response_from_wire(body({"content": None, "reasoning_content": THINK, "tool_calls": [CALL]}))
    result = Message(role="tool", parts=(ToolResult(call_id="call_1", content=(Text(text="18C"),)),))
    answer_2 = adapter.response_from_wire(body({"content": "18C.", "reasoning_content": "It is 18C."}, "stop"))
    again = Message(role="user", parts=(Text(text="And tomorrow?"),))
    history = [
        user,
        Message(role="assistant", parts=answer_1.parts),
        result,
        Message(role="assistant", parts=answer_2.parts),
        again,
    ]
    return [Request(model="m", messages=tuple(history[:n])) for n in (1, 3, 5)]


def test_reasoning_of_a_tool_call_goes_back_in_every_later_request_and_the_prefix_only_grows() -> None:
    bodies = [adapter.request_to_wire(r).body["messages"] for r in _conversation()]
    assert bodies[1][1] == {"role": "assistant", "content": None, "reasoning_content": THINK, "tool_calls": [CALL]}
    assert bodies[2][1] == bodies[1][1]  # after a new user turn too (V4: omitted -> 400)
    assert bodies[2][3] == {"role": "assistant", "content": "18C.", "reasoning_content": "It is 18C."}
    for earlier, later in itertools.pairwise(bodies):
        assert later[: len(earlier)] == earlier


def test_a_history_body_with_reasoning_round_trips() -> None:
    details = [{"type": "reasoning.text", "text": THINK, "signature": SIGNATURE, "format": DETAILS_FORMAT, "index": 0}]
    sent = {
        "model": "m",
        "messages": [
            {"role": "user", "content": "q"},
            {"role": "assistant", "content": None, "reasoning_content": THINK, "tool_calls": [CALL]},
            {"role": "tool", "tool_call_id": "call_1", "content": "18C"},
            {"role": "assistant", "content": "a", "reasoning": THINK, "reasoning_details": details},
            {"role": "assistant", "content": "b", "reasoning_content": None, "reasoning_details": []},
        ],
        "reasoning_effort": "xhigh",
    }
    request = adapter.request_from_wire(sent)
    first = request.messages[1].parts[0]
    assert isinstance(first, Reasoning) and (first.text, first.source) == (THINK, WIRE)
    assert adapter.request_to_wire(request).body == sent


def test_reasoning_another_wire_produced_is_left_out_and_said() -> None:
    call = ToolCall(id="call_1", name="get_weather", arguments={"city": "Paris"})
    parts = (
        Reasoning(text="Claude's thought", signature="EqQBCkYI", source="anthropic"),
        Reasoning(text="mine", source=None),
        Reasoning(text="chat, no field", source=WIRE),
        call,
    )
    wire = adapter.request_to_wire(Request(model="m", messages=(Message(role="assistant", parts=parts),)))
    (message,) = wire.body["messages"]
    assert set(message) == {"role", "content", "tool_calls"}
    assert "EqQBCkYI" not in json.dumps(wire.body) and "thought" not in json.dumps(wire.body)
    assert len(wire.notes) == 2
    assert wire.notes[0].startswith("reasoning produced by anthropic left out")
    assert "names no Chat reasoning field" in wire.notes[1]


def test_replayed_reasoning_fits_the_request_schema() -> None:
    request = _conversation()[2]
    validator = request_schema(WIRE)
    assert validator is not None
    body_ = adapter.request_to_wire(request).body
    assert list(validator.iter_errors(body_)) == []
    body_["messages"][1]["reasoning_content"] = 5
    assert list(validator.iter_errors(body_)) != []


# --------------------------------------------------------------------------------------------
# Settings
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("settings", "wire"),
    [
        (ReasoningSettings(effort="minimal"), {"reasoning_effort": "minimal"}),
        (ReasoningSettings(effort="high"), {"reasoning_effort": "high"}),
        (ReasoningSettings(enabled=False), {"reasoning_effort": "none"}),
        (ReasoningSettings(), {}),
    ],
)
def test_settings_become_reasoning_effort_and_come_back(settings: ReasoningSettings, wire: dict[str, Any]) -> None:
    out = adapter.request_to_wire(Request(model="m", reasoning=settings)).body
    assert {k: v for k, v in out.items() if k.startswith("reasoning")} == wire
    assert adapter.request_from_wire({**out, "messages": []}).reasoning == (settings if wire else None)


@pytest.mark.parametrize(
    ("settings", "named"),
    [
        (ReasoningSettings(budget_tokens=2048), "budget_tokens"),
        (ReasoningSettings(effort="low", budget_tokens=2048), "budget_tokens"),
        (ReasoningSettings(enabled=False, effort="low"), "reasoning off"),
    ],
)
def test_a_setting_chat_cannot_carry_is_refused_not_dropped(settings: ReasoningSettings, named: str) -> None:
    with pytest.raises(UnsupportedContentError, match=named):
        adapter.request_to_wire(Request(model="m", reasoning=settings))


def test_the_adapter_declares_what_it_carries() -> None:
    assert {"reasoning_effort", "reasoning_off", "reasoning_replay"} <= adapter.capabilities
    assert "reasoning_budget" not in adapter.capabilities


# --------------------------------------------------------------------------------------------
# Usage
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("usage", "read", "write"),
    [
        ({"prompt_tokens_details": {"cached_tokens": 64, "cache_write_tokens": 32}}, 64, 32),  # OpenAI, OpenRouter
        ({"prompt_cache_hit_tokens": 48, "prompt_cache_miss_tokens": 16}, 48, None),  # DeepSeek
        ({"prompt_cache_hit_tokens": 48, "prompt_tokens_details": {"cached_tokens": 0}}, 0, None),
        ({}, None, None),
    ],
)
def test_cache_tokens_are_read_on_every_form(usage: dict[str, Any], read: int | None, write: int | None) -> None:
    raw = {"prompt_tokens": 80, "completion_tokens": 30, "total_tokens": 110, **usage}
    raw["completion_tokens_details"] = {"reasoning_tokens": 12}
    got = adapter.response_from_wire(body({"content": "hi"}, "stop", raw)).usage
    assert got is not None
    assert (got.cache_read_tokens, got.cache_write_tokens, got.reasoning_tokens) == (read, write, 12)


# --------------------------------------------------------------------------------------------
# The prompt adapters decode through this wire
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["qwen", "hermes", "function_call"])
def test_prompt_adapters_name_the_chat_wire_as_the_source(name: str) -> None:
    prompt = get_adapter(name)
    whole = prompt.response_from_wire(body({"content": "Hi", "reasoning_content": THINK}, "stop"))
    stream = fold(prompt.stream_from_wire([sse({"reasoning_content": THINK}, {"content": "Hi"}, finish="stop")]))
    for response in (whole, stream):
        (part,) = reasoning_parts(response)
        assert (part.text, part.source) == (THINK, WIRE)
