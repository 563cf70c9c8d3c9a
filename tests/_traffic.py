"""Traffic shared by the recorder and replay tests: requests and provider bodies shaped as the
providers document them (wire-formats.md): OpenAI Chat ``chat.completion`` with ``tool_calls`` and
``chat.completion.chunk`` SSE ending in ``[DONE]``; Anthropic ``message`` with a ``tool_use``
block; Gemini ``functionCall`` parts, SSE events separated by ``\\r\\n\\r\\n`` (as in the
real-world cassettes). The getTime conversation is the seed's, word for word.
"""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

from _loopback import LoopbackServer, Reply

from conformance.adapters import get_adapter
from conformance.model import Message, Request, Text, Tool
from conformance.traffic.recorder import Provenance, RecordResult, record_cassette
from conformance.traffic.transport import Exchange, Transport

TESTS = Path(__file__).resolve().parent
JSON = [("content-type", "application/json")]
SSE = [("content-type", "text/event-stream")]
GET_TIME = Tool(
    name="getTime",
    input_schema={"type": "object", "properties": {"offset_ms": {"type": "number"}}, "required": ["offset_ms"]},
)
ASK = Request(
    model="gpt-4o",
    messages=(Message(role="user", parts=(Text(text="请告诉我昨天的日期是什么时候?"),)),),
    tools=(GET_TIME,),
)
CHAT_BODY = {
    "id": "chatcmpl-1",
    "object": "chat.completion",
    "created": 1700000000,
    "model": "gpt-4o",
    "choices": [
        {
            "index": 0,
            "message": {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "call_1",
                        "type": "function",
                        "function": {"name": "getTime", "arguments": '{"offset_ms": -86400000}'},
                    }
                ],
            },
            "finish_reason": "tool_calls",
        }
    ],
    "usage": {"prompt_tokens": 20, "completion_tokens": 9, "total_tokens": 29},
}


def chunk(delta: dict[str, object], finish: str | None = None) -> bytes:
    body = {"id": "chatcmpl-2", "object": "chat.completion.chunk", "created": 1700000000, "model": "gpt-4o"}
    body["choices"] = [{"index": 0, "delta": delta, "finish_reason": finish}]
    return b"data: " + json.dumps(body, ensure_ascii=False).encode() + b"\n\n"


CHAT_STREAM = [
    chunk(
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"index": 0, "id": "call_2", "type": "function", "function": {"name": "getTime", "arguments": ""}}
            ],
        }
    ),
    chunk({"tool_calls": [{"index": 0, "function": {"arguments": '{"offset_ms": '}}]}),
    chunk({"tool_calls": [{"index": 0, "function": {"arguments": "-86400000}"}}]}),
    chunk({}, "tool_calls"),
    b"data: [DONE]\n\n",
]


def chat_routes() -> dict[tuple[str, str], list[Reply]]:
    return {
        ("POST", "/v1/chat/completions"): [
            Reply(headers=JSON, body=json.dumps(CHAT_BODY).encode()),
            Reply(headers=SSE, pieces=CHAT_STREAM),
        ]
    }


def chat_run(transport: Transport) -> None:
    adapter = get_adapter("openai_chat")
    response = transport.send(adapter.request_to_wire(ASK))
    assert response.status == 200
    with transport.stream(adapter.request_to_wire(stream_of(ASK))) as streamed:
        streamed.read()


def record_chat(path: Path, *, now: datetime | None = None) -> RecordResult:
    with LoopbackServer(chat_routes()) as server:
        return record_cassette(
            path,
            chat_run,
            adapter="openai_chat",
            base_url=server.base_url,
            provenance=Provenance(mode="emulator", model="gpt-4o", scenario="basic/get_time"),
            api_key="sk-test-recorder-key-0001",
            now=(lambda: now) if now else None,
        )


def stream_of(request: Request) -> Request:
    from dataclasses import replace

    return replace(request, stream=True)


def big_exchange(marker: str) -> Exchange:
    body = b"".join(b'data: {"n": %d, "pad": "%s"}\n\n' % (n, b"x" * 200) for n in range(8000))
    return Exchange(
        method="POST",
        url="http://127.0.0.1:1/v1/chat/completions",
        request_headers=(("content-type", "application/json"),),
        request_body=json.dumps({"stream": True, "marker": marker}).encode(),
        stream=True,
        status=200,
        response_headers=tuple(SSE),
        response_body=body,
    )


ANTHROPIC_BODY = {
    "id": "msg_01",
    "type": "message",
    "role": "assistant",
    "model": "claude-sonnet-4-5",
    "content": [{"type": "tool_use", "id": "toolu_01", "name": "getTime", "input": {"offset_ms": -86400000}}],
    "stop_reason": "tool_use",
    "stop_sequence": None,
    "usage": {"input_tokens": 20, "output_tokens": 9},
}
GEMINI_CHUNK = {
    "candidates": [
        {
            "content": {
                "role": "model",
                "parts": [{"functionCall": {"name": "getTime", "args": {"offset_ms": -86400000}}}],
            },
            "finishReason": "STOP",
            "index": 0,
        }
    ],
    "usageMetadata": {"promptTokenCount": 20, "candidatesTokenCount": 9, "totalTokenCount": 29},
    "modelVersion": "gemini-2.5-flash",
}
