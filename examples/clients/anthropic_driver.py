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
    own_reasoning,
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


def _marked(block: dict[str, Any], cache_control: Any) -> dict[str, Any]:
    """``block`` with the caller's prompt-cache breakpoint, where the caller set one (``cache_control`` on a
    tool, a system text block, a text or tool_result block: anthropic/types/cache_control_ephemeral_param.py;
    https://docs.anthropic.com/en/docs/build-with-claude/prompt-caching)."""
    return block | {"cache_control": dict(cache_control)} if cache_control else block


def _blocks(call: Call) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for message in call.messages:
        content: list[dict[str, Any]] = []
        for part in message.parts:
            if isinstance(part, Text):
                content.append(_marked({"type": "text", "text": part.text}, part.cache_control))
            elif isinstance(part, Reasoning):
                if not own_reasoning(part, call.wire):
                    continue  # another provider's reasoning: Anthropic cannot verify it, a user leaves it out
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
            content.append(_marked({"type": "text", "text": item.text}, item.cache_control))
        elif isinstance(item, Image) and item.data:
            source = {"type": "base64", "media_type": item.media_type, "data": item.data}
            content.append({"type": "image", "source": source})
        elif isinstance(item, Resource) and item.text is not None:
            content.append({"type": "text", "text": item.text})
    block: dict[str, Any] = {"type": "tool_result", "tool_use_id": result.call_id}
    if len(content) == 1 and content[0]["type"] == "text" and "cache_control" not in content[0]:
        block["content"] = content[0]["text"]
    elif content:
        block["content"] = content
    if result.is_error:
        block["is_error"] = True
    return _marked(block, result.cache_control)


def _thinking(call: Call) -> dict[str, Any]:
    """The caller's reasoning settings as the SDK's own parameters (``messages.create`` ``thinking`` and
    ``output_config``): off is ``{"type": "disabled"}`` (thinking_config_disabled_param.py), a budget
    ``{"type": "enabled", "budget_tokens": N}`` (thinking_config_enabled_param.py), an effort alone adaptive
    thinking ``{"type": "adaptive"}`` (thinking_config_adaptive_param.py) with ``output_config.effort``
    (output_config_param.py: low, medium, high, xhigh, max; passed as given): "use adaptive thinking with the
    effort parameter" (https://docs.anthropic.com/en/docs/build-with-claude/adaptive-thinking)."""
    settings = call.reasoning
    if settings is None:
        return {}
    if not settings.enabled:
        return {"thinking": {"type": "disabled"}}
    out: dict[str, Any] = {}
    if settings.budget_tokens is not None:
        out["thinking"] = {"type": "enabled", "budget_tokens": settings.budget_tokens}
    if settings.effort is not None:
        out.setdefault("thinking", {"type": "adaptive"})
        out["output_config"] = {"effort": settings.effort}
    return out


def _kwargs(call: Call) -> dict[str, Any]:
    kwargs: dict[str, Any] = {
        "model": call.model,
        "max_tokens": call.max_tokens or DEFAULT_MAX_TOKENS,
        "messages": _blocks(call),
        **_thinking(call),
    }
    if call.system and call.system_cache_control:
        kwargs["system"] = [_marked({"type": "text", "text": call.system}, call.system_cache_control)]
    elif call.system:
        kwargs["system"] = call.system
    if call.tools:
        kwargs["tools"] = [
            _marked(
                {
                    "name": t.name,
                    **({"description": t.description} if t.description else {}),
                    "input_schema": dict(t.input_schema),
                },
                t.cache_control,
            )
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


def _response(message: Any, wire: str) -> Response:
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
            parts.append(Reasoning(text=block.thinking, signature=block.signature, source=wire))
        elif block.type == "redacted_thinking":
            parts.append(Reasoning(redacted=block.data, source=wire))
    has_calls = any(isinstance(p, ToolCall) for p in parts)
    return Response(
        parts=tuple(parts),
        finish_reason=finish_reason(ANTHROPIC_FINISH, message.stop_reason, has_calls=has_calls),
        provider_details={"finish_reason": message.stop_reason},
    )


async def _helper_events(manager: Any, wire: str) -> AsyncIterator[StreamEvent]:
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
                    yield ReasoningDelta(redacted=start.data, source=wire)
                elif start.type == "text" and start.text:
                    yield TextDelta(start.text)
            elif event.type == "text":
                yield TextDelta(event.text)
            elif event.type == "thinking":
                yield ReasoningDelta(text=event.thinking, source=wire)
            elif event.type == "signature":
                yield ReasoningDelta(signature=event.signature, source=wire)
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


async def _raw_events(stream: Any, wire: str) -> AsyncIterator[StreamEvent]:
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
                    yield ReasoningDelta(redacted=block.data, source=wire)
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
                    yield ReasoningDelta(text=delta.thinking, source=wire)
                elif delta.type == "signature_delta":
                    yield ReasoningDelta(signature=delta.signature, source=wire)
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
        return _closing(client, _helper_events(client.messages.stream(**_kwargs(call)), call.wire))
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
    return _closing(client, _raw_events(stream, call.wire))


async def _whole(client: anthropic.AsyncAnthropic, call: Call) -> Response:
    try:
        return _response(await client.messages.create(**_kwargs(call)), call.wire)
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
        # the SDK's own parameters (_thinking above) and its cache_control on tools, system and content blocks
        "reasoning_effort",
        "reasoning_budget",
        "reasoning_off",
        "cache_control",
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
