"""Driver for the official ``ollama`` Python SDK (0.6.3), sync client, on Ollama's ``/api/chat``.

``ollama.Client(host=call.base_url).chat(...)``: not streaming, the ``ChatResponse`` message's
``content``, ``thinking`` and ``tool_calls`` (arguments arrive as an object) become the parts;
streaming (``stream=True``, an iterator of ``ChatResponse`` chunks), each chunk's content and
thinking are deltas, each tool call (Ollama sends a call whole) a start, one chunk of its compact
JSON and an end, and the chunk with ``done: true`` the finish (``done_reason``). The SDK's
``Message.ToolCall`` has no id: calls get ``call_<n>`` (``synthetic_id``) and results go back by
``tool_name``. Ollama has no tool choice: ``none`` is sent as no tools, the others are not declared.
``max_tokens`` is ``options.num_predict``.

The SDK raises ``ollama.ResponseError`` (``error``, ``status_code``; -1 for an ``{"error": ...}``
line inside a 200 stream, and no response headers, so no ``retry-after``) and the builtin
``ConnectionError`` when it cannot connect. It has no retries of its own.
Run: ``conformance certify --client examples/clients/ollama_driver.py:CLIENT``.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import ollama

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _convert import dumps, finish_call, finish_reason, kind_for_status, own_reasoning, result_images, result_text

from conformance.clients.contract import Call, Completion, SimpleClient
from conformance.model import (
    ErrorInfo,
    Finish,
    FinishReason,
    Part,
    Reasoning,
    ReasoningDelta,
    Response,
    StreamEvent,
    Text,
    TextDelta,
    ToolCall,
    ToolCallChunk,
    ToolCallEnd,
    ToolCallStart,
    ToolResult,
)

_DONE: dict[str, FinishReason] = {"stop": "stop", "length": "length"}


def _messages(call: Call) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    if call.system:
        out.append({"role": "system", "content": call.system})
    for message in call.messages:
        text = "".join(p.text for p in message.parts if isinstance(p, Text))
        if message.role == "tool":
            for result in message.parts:
                if isinstance(result, ToolResult):
                    entry: dict[str, Any] = {"role": "tool", "content": result_text(result)}
                    if result.name:
                        entry["tool_name"] = result.name
                    if images := result_images(result):
                        entry["images"] = [i.data for i in images]
                    out.append(entry)
            continue
        entry = {"role": message.role, "content": text}
        # the thinking goes back on the assistant message, as the SDK's tool examples do
        # (examples/gpt-oss-tools-stream.py); another provider's reasoning is left out
        own = [p.text for p in message.parts if isinstance(p, Reasoning) and own_reasoning(p, call.wire)]
        if thinking := "".join(own):
            entry["thinking"] = thinking
        calls = [p for p in message.parts if isinstance(p, ToolCall)]
        if calls:
            entry["tool_calls"] = [{"function": {"name": c.name, "arguments": c.arguments or {}}} for c in calls]
        out.append(entry)
    return out


def _kwargs(call: Call) -> dict[str, Any]:
    kwargs: dict[str, Any] = {"model": call.model, "messages": _messages(call)}
    if call.tools and call.tool_choice != "none":
        kwargs["tools"] = [
            {
                "type": "function",
                "function": {
                    "name": t.name,
                    **({"description": t.description} if t.description else {}),
                    "parameters": dict(t.input_schema),
                },
            }
            for t in call.tools
        ]
    if call.max_tokens is not None:
        kwargs["options"] = {"num_predict": call.max_tokens}
    if call.reasoning is not None:
        # ``think: bool | "low" | "medium" | "high"`` (ollama/_types.py:403, _client.py chat): off is False, an
        # effort the level as given, on without one True; Ollama has no token budget
        effort = call.reasoning.effort
        kwargs["think"] = False if not call.reasoning.enabled else effort if effort is not None else True
    return kwargs


def _call(tc: Any, position: int) -> ToolCall:
    args = tc.function.arguments
    arguments = dict(args) if isinstance(args, dict) else None
    return ToolCall(
        id=f"call_{position}",
        name=tc.function.name,
        arguments=arguments,
        arguments_raw=dumps(args),
        arguments_error=None if arguments is not None else "arguments are not an object",
        provider_details={"synthetic_id": True},
    )


def _response(response: Any) -> Response:
    message = response.message
    parts: list[Part] = []
    if message.thinking:
        parts.append(Reasoning(text=message.thinking, source="ollama"))
    if message.content:
        parts.append(Text(text=message.content))
    for position, tc in enumerate(message.tool_calls or ()):
        parts.append(_call(tc, position))
    has_calls = any(isinstance(p, ToolCall) for p in parts)
    return Response(
        parts=tuple(parts),
        finish_reason=finish_reason(_DONE, response.done_reason, has_calls=has_calls),
        provider_details={"finish_reason": response.done_reason},
    )


def _events(chunks: Iterator[Any]) -> Iterator[StreamEvent]:
    position = 0
    for chunk in chunks:
        message = chunk.message
        if message.thinking:
            yield ReasoningDelta(text=message.thinking, source="ollama")
        if message.content:
            yield TextDelta(message.content)
        for tc in message.tool_calls or ():
            call = _call(tc, position)
            yield ToolCallStart(call.id, call.name, position, provider_details=call.provider_details)
            yield ToolCallChunk(call.id, call.arguments_raw)
            yield ToolCallEnd(call.id, call.arguments_raw, call.arguments, call.arguments_error)
            position += 1
        if chunk.done:
            yield Finish(finish_reason(_DONE, chunk.done_reason, has_calls=position > 0), chunk.done_reason)


def _send(client: ollama.Client, call: Call) -> Completion:
    if call.stream:
        return _events(client.chat(**_kwargs(call), stream=True))
    return _response(client.chat(**_kwargs(call), stream=False))


def complete(call: Call) -> Completion:
    # The ollama SDK has no retries of its own (one request per call), so nothing to turn off.
    completion: Completion = finish_call(
        ollama.Client(host=call.base_url, timeout=call.timeout), lambda client: _send(client, call)
    )
    return completion


def error_info(exc: BaseException) -> ErrorInfo | None:
    if isinstance(exc, ollama.ResponseError):
        # One class for every error: its documented ``status_code`` is how the README tells them apart
        # (``if e.status_code == 404``); -1 is the SDK's own mark of an ``{"error": ...}`` line inside the
        # 200 stream (_client.py:198 raises ``ResponseError(err)``, _types.py:707 defaults the status to -1).
        if exc.status_code == -1:
            return ErrorInfo(kind="server", message=str(exc.error))
        return ErrorInfo(kind=kind_for_status(exc.status_code), message=str(exc.error), status=exc.status_code)
    if isinstance(exc, ConnectionError):  # the SDK raises the builtin when it cannot connect (_client.py:149)
        return ErrorInfo(kind="unknown", message=str(exc))
    return None


CLIENT = SimpleClient(
    name=f"ollama-python {getattr(ollama, '__version__', '0.6.3')}",
    wires={
        "ollama": frozenset(
            {
                "streaming",
                "parallel_tool_calls",
                "tool_choice_auto",
                "tool_choice_none",
                "system_prompt",
                # ``Message.thinking`` goes back as given, and ``think`` turns it off or sets a level
                "reasoning_replay",
                "reasoning_effort",
                "reasoning_off",
            }
        )
    },
    complete=complete,
    error_info=error_info,
    # An SDK transports: the tools go out as the caller wrote them (the README promises no mapping), so
    # names and schemas are left to its caller.
    duties=frozenset({"transport"}),
    request_differences={
        "$.messages[*].parts[*].is_error": (
            "Ollama has no error flag on a tool result: the driver sends the tool's text as it is (the"
            " recorded request marks it with an `Error: ` prefix, which reads back as the flag)"
        ),
    },
)

__all__ = ["CLIENT"]
