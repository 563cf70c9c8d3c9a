"""Driver for the official ``anthropic`` Python SDK (2.14), async client (``AsyncAnthropic``).

``complete`` is a coroutine: ``await client.messages.create(...)``. Not streaming, the ``Message``'s
content blocks become the parts (``tool_use.input`` is already an object). Streaming
(``stream=True``), it returns an async iterator of events built from the SDK's raw stream events:
``content_block_start`` opens a text, thinking or ``tool_use`` block, ``content_block_delta`` carries
``text_delta`` / ``thinking_delta`` / ``signature_delta`` / ``input_json_delta``,
``content_block_stop`` closes a call, ``message_delta`` holds the stop reason and ``message_stop``
ends the message (no ``message_stop``, no finish: the SDK ends the iteration without a word).

The SDK raises ``APIStatusError`` subclasses by status (``OverloadedError`` 529,
``ServiceUnavailableError`` 503, ``RateLimitError`` ...); an ``error`` event inside a 200 stream
is raised as an ``APIStatusError`` whose status is the stream's 200 and whose body is the event.
Run: ``conformance certify --client examples/clients/anthropic_driver.py:CLIENT``.
"""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anthropic

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _convert import (
    StreamCalls,
    connection_error,
    dumps,
    finish_reason,
    kind_for_class,
    kind_for_code,
    kind_for_status,
    retry_after,
)

from conformance.clients.contract import Call, Completion, SimpleClient
from conformance.model import (
    ErrorInfo,
    ErrorKind,
    Finish,
    FinishReason,
    Image,
    Part,
    Reasoning,
    ReasoningDelta,
    Resource,
    Response,
    StreamEvent,
    Text,
    TextDelta,
    ToolCall,
    ToolResult,
)

_STOP: dict[str, FinishReason] = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "tool_use": "tool_calls",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "refusal": "content_filter",
}
DEFAULT_MAX_TOKENS = 4096
"""The Messages API requires ``max_tokens``: what the driver sends when the call leaves it open."""


def _blocks(call: Call) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for message in call.messages:
        content: list[dict[str, Any]] = []
        for part in message.parts:
            if isinstance(part, Text):
                content.append({"type": "text", "text": part.text})
            elif isinstance(part, Reasoning):
                if part.redacted is not None:
                    content.append({"type": "redacted_thinking", "data": part.redacted})
                else:
                    content.append({"type": "thinking", "thinking": part.text, "signature": part.signature or ""})
            elif isinstance(part, ToolCall):
                content.append({"type": "tool_use", "id": part.id, "name": part.name, "input": part.arguments or {}})
            elif isinstance(part, ToolResult):
                content.append(_tool_result(part))
        role = "assistant" if message.role == "assistant" else "user"
        if out and out[-1]["role"] == role:  # tool results then user text: one user turn, results first
            out[-1]["content"].extend(content)
        else:
            out.append({"role": role, "content": content})
    return out


def _tool_result(result: ToolResult) -> dict[str, Any]:
    content: list[dict[str, Any]] = []
    for item in result.content:
        if isinstance(item, Text):
            content.append({"type": "text", "text": item.text})
        elif isinstance(item, Image) and item.data:
            source = {"type": "base64", "media_type": item.media_type, "data": item.data}
            content.append({"type": "image", "source": source})
        elif isinstance(item, Resource) and item.text is not None:
            content.append({"type": "text", "text": item.text})
    block: dict[str, Any] = {"type": "tool_result", "tool_use_id": result.call_id}
    if len(content) == 1 and content[0]["type"] == "text":
        block["content"] = content[0]["text"]
    elif content:
        block["content"] = content
    if result.is_error:
        block["is_error"] = True
    return block


def _kwargs(call: Call) -> dict[str, Any]:
    kwargs: dict[str, Any] = {
        "model": call.model,
        "max_tokens": call.max_tokens or DEFAULT_MAX_TOKENS,
        "messages": _blocks(call),
    }
    if call.system:
        kwargs["system"] = call.system
    if call.tools:
        kwargs["tools"] = [
            {
                "name": t.name,
                **({"description": t.description} if t.description else {}),
                "input_schema": dict(t.input_schema),
            }
            for t in call.tools
        ]
    choice: dict[str, Any] | None = None
    if call.tool_choice == "required":
        choice = {"type": "any"}
    elif call.tool_choice in ("auto", "none"):
        choice = {"type": call.tool_choice}
    elif call.tool_choice is not None:
        choice = {"type": "tool", "name": call.tool_choice}
    if call.parallel_tool_calls is False:
        choice = (choice or {"type": "auto"}) | {"disable_parallel_tool_use": True}
    if choice is not None:
        kwargs["tool_choice"] = choice
    return kwargs


def _response(message: Any) -> Response:
    parts: list[Part] = []
    for block in message.content:
        if block.type == "text":
            parts.append(Text(text=block.text))
        elif block.type == "tool_use":
            args = block.input if isinstance(block.input, dict) else None
            parts.append(
                ToolCall(
                    id=block.id,
                    name=block.name,
                    arguments=args,
                    arguments_raw=dumps(block.input),
                    arguments_error=None if args is not None else "input is not an object",
                )
            )
        elif block.type == "thinking":
            parts.append(Reasoning(text=block.thinking, signature=block.signature))
        elif block.type == "redacted_thinking":
            parts.append(Reasoning(redacted=block.data))
    has_calls = any(isinstance(p, ToolCall) for p in parts)
    return Response(
        parts=tuple(parts),
        finish_reason=finish_reason(_STOP, message.stop_reason, has_calls=has_calls),
        provider_details={"finish_reason": message.stop_reason},
    )


async def _events(stream: Any) -> AsyncIterator[StreamEvent]:
    calls = StreamCalls()
    stop_reason: str | None = None
    async with stream:
        async for event in stream:
            if event.type == "content_block_start":
                block = event.content_block
                if block.type == "tool_use":
                    for e in calls.start(event.index, block.id, block.name):
                        yield e
                elif block.type == "redacted_thinking":
                    yield ReasoningDelta(redacted=block.data)
                elif block.type == "text" and block.text:
                    yield TextDelta(block.text)
            elif event.type == "content_block_delta":
                delta = event.delta
                if delta.type == "text_delta":
                    yield TextDelta(delta.text)
                elif delta.type == "input_json_delta":
                    for e in calls.chunk(event.index, delta.partial_json):
                        yield e
                elif delta.type == "thinking_delta":
                    yield ReasoningDelta(text=delta.thinking)
                elif delta.type == "signature_delta":
                    yield ReasoningDelta(signature=delta.signature)
            elif event.type == "content_block_stop":
                for e in calls.end(event.index):
                    yield e
            elif event.type == "message_delta":
                stop_reason = event.delta.stop_reason or stop_reason
            elif event.type == "message_stop":
                yield Finish(finish_reason(_STOP, stop_reason, has_calls=calls.any), stop_reason)


async def _closing(client: anthropic.AsyncAnthropic, events: AsyncIterator[StreamEvent]) -> AsyncIterator[StreamEvent]:
    """The events, then the client closed (its pooled sockets with it)."""
    try:
        async for event in events:
            yield event
    finally:
        await client.close()


async def complete(call: Call) -> Completion:
    # max_retries=0: the suite counts requests per turn; a hidden retry is a finding and would
    # take the next turn's recorded answer.
    client = anthropic.AsyncAnthropic(api_key=call.api_key, base_url=call.base_url, max_retries=0, timeout=call.timeout)
    try:
        if call.stream:
            return _closing(client, _events(await client.messages.create(**_kwargs(call), stream=True)))
        response = _response(await client.messages.create(**_kwargs(call)))
    except BaseException:
        await client.close()
        raise
    await client.close()
    return response


_CLASSES: tuple[tuple[type[anthropic.APIStatusError], ErrorKind], ...] = (
    (anthropic.OverloadedError, "overloaded"),
    (anthropic.ServiceUnavailableError, "overloaded"),
    (anthropic.RateLimitError, "rate_limit"),
    (anthropic.ContentTooLargeError, "context_length"),
    (anthropic.AuthenticationError, "auth"),
    (anthropic.PermissionDeniedError, "permission"),
    (anthropic.NotFoundError, "not_found"),
    (anthropic.BadRequestError, "invalid_request"),
    (anthropic.UnprocessableEntityError, "invalid_request"),
    (anthropic.InternalServerError, "server"),
)


def error_info(exc: BaseException) -> ErrorInfo | None:
    if isinstance(exc, anthropic.APIStatusError):
        body = exc.body if isinstance(exc.body, dict) else {}
        error = body.get("error") if isinstance(body.get("error"), dict) else {}
        code = error.get("type") if isinstance(error, dict) else None
        message = str(error.get("message") or exc.message) if isinstance(error, dict) else exc.message
        if exc.status_code < 400:  # an error event inside the 200 stream: its type says the kind
            return ErrorInfo(kind=kind_for_code(code) or "unknown", message=message, code=code)
        kind = kind_for_class(exc, _CLASSES) or kind_for_status(exc.status_code)
        return ErrorInfo(
            kind=kind,
            message=message,
            status=exc.status_code,
            retry_after=retry_after(exc.response.headers),
            code=code,
        )
    if isinstance(exc, anthropic.APITimeoutError):
        return ErrorInfo(kind="unknown", message=f"timeout: {exc.message}")
    if isinstance(exc, anthropic.APIConnectionError):
        # also raised when a stream's body breaks off after the 200 headers
        return connection_error(exc.message, exc.__cause__)
    if isinstance(exc, anthropic.APIResponseValidationError):
        return ErrorInfo(kind="malformed_response", message=exc.message, status=exc.status_code)
    return None


CLIENT = SimpleClient(
    name=f"anthropic-python {anthropic.__version__} (async)",
    wires={
        "anthropic": frozenset(
            {
                "streaming",
                "parallel_tool_calls",
                "disable_parallel_tool_calls",
                "tool_choice_auto",
                "tool_choice_none",
                "tool_choice_required",
                "tool_choice_named",
                "images_in_tool_results",
                "is_error_in_tool_results",
                "reasoning_replay",
                "system_prompt",
                "call_ids",
            }
        )
    },
    complete=complete,
    error_info=error_info,
)

__all__ = ["CLIENT"]
