"""Driver for the official ``anthropic`` Python SDK (2.14), async client (``AsyncAnthropic``), two ways.

Not streaming, both send ``await client.messages.create(...)`` (the README's way) and the ``Message``'s
content blocks become the parts (``tool_use.input`` is already an object). Streaming, the SDK documents
two ways (``helpers.md``, "Streaming Responses"), so the driver exports two clients:

- ``CLIENT``: the streaming helper, ``async with client.messages.stream(...) as stream`` and its events,
  as ``helpers.md`` and Anthropic's streaming docs show it: ``text``, ``thinking`` and ``signature``
  events, ``input_json`` deltas of the tool block that ``content_block_start`` opened,
  ``content_block_stop`` with the block the helper accumulated (a ``tool_use`` block's ``input`` is the
  helper's own parse of the streamed JSON) and ``message_stop`` with the accumulated message (its
  ``stop_reason`` is the finish). No ``message_stop``, no finish.
- ``CLIENT_RAW``: "alternatively, ``client.messages.create(..., stream=True)``": the raw events
  (``content_block_start``/``_delta``/``_stop``, ``message_delta`` with the stop reason,
  ``message_stop``), the argument text joined and parsed as a user of the raw events parses it.

The SDK raises ``APIStatusError`` subclasses by status (``OverloadedError`` 529,
``ServiceUnavailableError`` 503, ``RateLimitError`` ...); an ``error`` event inside a 200 stream
is raised as the base ``APIStatusError`` (status 200, ``type`` from the event). ``error_info`` maps
them by class. Run: ``conformance certify --client examples/clients/anthropic_driver.py:CLIENT``
(or ``:CLIENT_RAW``).
"""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anthropic

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _convert import (
    ANTHROPIC_FINISH,
    StreamCalls,
    dumps,
    finish_reason,
    kind_for_class,
    kind_for_code,
    retry_after,
)

from conformance.clients.contract import Call, Completion, SimpleClient
from conformance.model import (
    ErrorInfo,
    ErrorKind,
    Finish,
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
        finish_reason=finish_reason(ANTHROPIC_FINISH, message.stop_reason, has_calls=has_calls),
        provider_details={"finish_reason": message.stop_reason},
    )


async def _helper_events(manager: Any) -> AsyncIterator[StreamEvent]:
    """The events of ``client.messages.stream(...)``, read as helpers.md shows them."""
    calls = StreamCalls()
    block = -1  # the block the deltas belong to: the API streams one content block at a time
    async with manager as stream:
        async for event in stream:
            if event.type == "content_block_start":
                block = event.index
                start = event.content_block
                if start.type == "tool_use":
                    for e in calls.start(block, start.id, start.name):
                        yield e
                elif start.type == "redacted_thinking":
                    yield ReasoningDelta(redacted=start.data)
                elif start.type == "text" and start.text:
                    yield TextDelta(start.text)
            elif event.type == "text":
                yield TextDelta(event.text)
            elif event.type == "thinking":
                yield ReasoningDelta(text=event.thinking)
            elif event.type == "signature":
                yield ReasoningDelta(signature=event.signature)
            elif event.type == "input_json":
                for e in calls.chunk(block, event.partial_json):
                    yield e
            elif event.type == "content_block_stop" and event.content_block.type == "tool_use":
                # the block the helper accumulated: its ``input`` (the helper's parse of the streamed text)
                # is what a user of the helper calls the tool with
                for e in calls.end_parsed(event.index, event.content_block.input):
                    yield e
            elif event.type == "message_stop":
                reason = event.message.stop_reason
                has_calls = any(b.type == "tool_use" for b in event.message.content)
                yield Finish(finish_reason(ANTHROPIC_FINISH, reason, has_calls=has_calls), reason)


async def _raw_events(stream: Any) -> AsyncIterator[StreamEvent]:
    """The raw events of ``client.messages.create(..., stream=True)``."""
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
                yield Finish(finish_reason(ANTHROPIC_FINISH, stop_reason, has_calls=calls.any), stop_reason)


async def _closing(client: anthropic.AsyncAnthropic, events: AsyncIterator[StreamEvent]) -> AsyncIterator[StreamEvent]:
    """The events, then the client closed (its pooled sockets with it)."""
    try:
        async for event in events:
            yield event
    finally:
        await client.close()


def _client(call: Call) -> anthropic.AsyncAnthropic:
    # max_retries=0: the suite counts requests per turn; a hidden retry is a finding and would
    # take the next turn's recorded answer.
    return anthropic.AsyncAnthropic(api_key=call.api_key, base_url=call.base_url, max_retries=0, timeout=call.timeout)


async def complete(call: Call) -> Completion:
    """Streams with the SDK's helper, ``client.messages.stream(...)``."""
    client = _client(call)
    if call.stream:  # the helper sends its request when its context is entered, inside the events
        return _closing(client, _helper_events(client.messages.stream(**_kwargs(call))))
    return await _whole(client, call)


async def complete_raw(call: Call) -> Completion:
    """Streams with the raw events, ``client.messages.create(..., stream=True)``."""
    client = _client(call)
    if not call.stream:
        return await _whole(client, call)
    try:
        stream = await client.messages.create(**_kwargs(call), stream=True)
    except BaseException:
        await client.close()
        raise
    return _closing(client, _raw_events(stream))


async def _whole(client: anthropic.AsyncAnthropic, call: Call) -> Response:
    try:
        return _response(await client.messages.create(**_kwargs(call)))
    finally:
        await client.close()


# The SDK's exception classes, most specific first: the kind is what the class means (one class per
# status, _error_classes.py make_status_error; ``APIConnectionError`` for a connection that failed or
# broke off). No status, body or cause is read to change it.
_CLASSES: tuple[tuple[type[anthropic.AnthropicError], ErrorKind], ...] = (
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
    (anthropic.APITimeoutError, "unknown"),
    (anthropic.APIConnectionError, "stream_incomplete"),
    (anthropic.APIResponseValidationError, "malformed_response"),
)


def error_info(exc: BaseException) -> ErrorInfo | None:
    if isinstance(exc, anthropic.APIStatusError):
        # The base class itself (an ``error`` event inside the 200 stream, a status without a class): the
        # category its documented ``type`` field names ("The broad category of the error", _exceptions.py).
        kind = kind_for_class(exc, _CLASSES) or kind_for_code(exc.type) or "unknown"
        return ErrorInfo(
            kind=kind,
            message=exc.message,
            status=exc.status_code,
            retry_after=retry_after(exc.response.headers),
            code=exc.type,
        )
    kind = kind_for_class(exc, _CLASSES)
    if kind is None:
        return None
    status = exc.status_code if isinstance(exc, anthropic.APIResponseValidationError) else None
    return ErrorInfo(kind=kind, message=str(exc), status=status)


_CAPABILITIES = frozenset(
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
# An SDK transports: it sends the caller's tool names and input schemas as given (nothing in the SDK maps
# them to what the API accepts), so those duties are left to its caller.
_DUTIES = frozenset({"transport"})

CLIENT = SimpleClient(
    name=f"anthropic-python {anthropic.__version__} (async, messages.stream)",
    wires={"anthropic": _CAPABILITIES},
    complete=complete,
    error_info=error_info,
    duties=_DUTIES,
)
CLIENT_RAW = SimpleClient(
    name=f"anthropic-python {anthropic.__version__} (async, create stream=True)",
    wires={"anthropic": _CAPABILITIES},
    complete=complete_raw,
    error_info=error_info,
    duties=_DUTIES,
)

__all__ = ["CLIENT", "CLIENT_RAW"]
