from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import replace
from typing import Any

from conformance.adapters import get_adapter
from conformance.adapters.base import WireRequest
from conformance.checks.mutation import CHECK, first_change, snapshot, watched
from conformance.model import Message, Request, Response, StreamEvent, Text, Tool

TOOL = Tool(
    name="get_weather",
    input_schema={"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
)
REQUEST = Request(model="m", messages=(Message(role="user", parts=(Text(text="hi"),)),), tools=(TOOL,))
BODY: dict[str, Any] = {
    "id": "chatcmpl-1",
    "object": "chat.completion",
    "choices": [{"index": 0, "message": {"role": "assistant", "content": "ok"}, "finish_reason": "stop"}],
}
STREAM = b'data: {"id":"c","choices":[{"index":0,"delta":{"content":"ok"},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n'


def test_the_reference_adapter_passes() -> None:
    adapter, watch = watched(get_adapter("openai_chat"))
    request = replace(REQUEST, tools=(replace(TOOL, input_schema=dict(TOOL.input_schema)),))
    adapter.request_to_wire(request)
    adapter.response_from_wire(BODY, tools=(TOOL,))
    list(adapter.stream_from_wire([STREAM], tools=(TOOL,)))
    adapter.error_from_wire(500, {"retry-after": "1"}, {"error": {"message": "x"}})
    assert watch.verdict().status == "pass"


def test_a_tool_schema_changed_by_request_to_wire_fails_with_its_path() -> None:
    base = get_adapter("openai_chat")

    def request_to_wire(request: Request) -> WireRequest:
        request.tools[0].input_schema["properties"].pop("city")  # type: ignore[attr-defined]
        return base.request_to_wire(request)

    adapter, watch = watched(replace(base, request_to_wire=request_to_wire))
    schema = {"type": "object", "properties": {"city": {"type": "string"}}}
    adapter.request_to_wire(replace(REQUEST, tools=(replace(TOOL, input_schema=schema),)))
    verdict = watch.verdict()
    assert verdict.check == CHECK and verdict.status == "fail"
    (finding,) = verdict.findings
    assert finding.path == "request_to_wire(request).tools[0].input_schema.properties.city"
    assert finding.expected == {"type": "string"} and finding.actual == "(removed)"
    assert "request_to_wire" in finding.message


def test_a_cleared_chunk_list_fails_after_the_stream_ends() -> None:
    base = get_adapter("openai_chat")

    def stream_from_wire(chunks: Iterable[bytes], *, tools: Sequence[Tool] = ()) -> Iterator[StreamEvent]:
        yield from base.stream_from_wire(chunks, tools=tools)
        if isinstance(chunks, list):
            chunks.clear()

    adapter, watch = watched(replace(base, stream_from_wire=stream_from_wire))
    list(adapter.stream_from_wire(iter([STREAM])))  # a one-shot iterator cannot be watched
    assert watch.verdict().status == "pass"
    list(adapter.stream_from_wire([STREAM]))
    (finding,) = watch.verdict().findings
    assert finding.path == "stream_from_wire(chunks).length"
    assert (finding.expected, finding.actual) == (1, 0)


def test_an_edited_response_body_fails_once_per_function_and_argument() -> None:
    base = get_adapter("openai_chat")

    def response_from_wire(body: Mapping[str, Any], *, tools: Sequence[Tool] = ()) -> Response:
        assert isinstance(body, dict)
        body["choices"][0]["finish_reason"] = "length"
        return base.response_from_wire(body, tools=tools)

    adapter, watch = watched(replace(base, response_from_wire=response_from_wire))
    for _ in range(2):
        body = {**BODY, "choices": [dict(BODY["choices"][0])]}
        adapter.response_from_wire(body)
    (finding,) = watch.verdict().findings
    assert finding.path == "response_from_wire(body).choices[0].finish_reason"
    assert (finding.expected, finding.actual) == ("stop", "length")


def test_snapshot_is_independent_and_first_change_finds_the_path() -> None:
    value = {"a": [1, {"b": (2, 3)}], "t": TOOL}
    before = snapshot(value)
    value["a"][1]["b"] = (2, 4)  # type: ignore[index]
    assert before != snapshot(value)
    assert first_change(before, snapshot(value)) == ("$.a[1].b[1]", 3, 4)
    assert first_change(before, before) is None
    assert first_change({"x": 1}, {"x": 1, "y": 2}) == ("$.y", None, 2)
