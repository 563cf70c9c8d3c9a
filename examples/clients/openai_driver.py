"""Driver for the official ``openai`` Python SDK (3.57), sync client, on two wires.

- ``openai_chat``: ``client.chat.completions.create(...)``; a stream's events are built from the
  SDK's ``ChatCompletionChunk`` deltas (text, ``tool_calls[i]`` keyed by their ``index``,
  ``finish_reason``); a non-stream answer from ``ChatCompletion.choices[0].message``.
- ``openai_responses``: ``client.responses.create(...)``; a stream's events from the SDK's typed
  Responses events (``response.output_item.added`` opens a call, ``function_call_arguments.delta``
  / ``.done`` carry its arguments, ``response.completed`` / ``incomplete`` / ``failed`` end it).

Streams are read as the SDK's README shows them (``create(..., stream=True)`` and iterating it; the
``.stream()`` helpers of ``helpers.md`` are for parsing structured outputs). The SDK raises
``APIStatusError`` subclasses on an HTTP error, ``APIError`` (no status) on an error event inside a
stream and ``APIConnectionError`` when the body breaks off; ``error_info`` maps them by class.
Run: ``conformance certify --client examples/clients/openai_driver.py:CLIENT``.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import openai

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _convert import (
    CHAT_FINISH,
    StreamCalls,
    dumps,
    finish_call,
    finish_reason,
    kind_for_class,
    kind_for_code,
    own_reasoning,
    result_images,
    result_text,
    retry_after,
    tool_call,
)

from conformance.clients.contract import Call, Completion, SimpleClient
from conformance.model import (
    ErrorInfo,
    ErrorKind,
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
    ToolResult,
)


def _client(call: Call) -> openai.OpenAI:
    # max_retries=0: the suite counts requests per turn; a hidden retry is a finding and would
    # take the next turn's recorded answer.
    return openai.OpenAI(api_key=call.api_key, base_url=call.base_url + "/v1", max_retries=0, timeout=call.timeout)


# ---- openai_chat ----------------------------------------------------------------------------

REASONING_FIELDS = ("reasoning_content", "reasoning", "reasoning_details")
"""The reasoning fields OpenAI-compatible servers add to a Chat message: ``reasoning_content`` (DeepSeek
thinking mode, https://api-docs.deepseek.com/guides/thinking_mode; vLLM; llama.cpp), ``reasoning`` and
``reasoning_details`` (OpenRouter, https://openrouter.ai/docs/use-cases/reasoning-tokens; vLLM >= 0.11). The
SDK keeps fields it does not type in ``model_extra``, and a user who appends the message it got
(``message.model_dump(exclude_none=True)``, DeepSeek's own example appends ``response.choices[0].message``)
sends them back as they came: so does the driver, for this wire's reasoning."""


def _chat_reasoning(message: Any) -> Reasoning | None:
    """The reasoning fields of a Chat message, as the SDK kept them (``model_extra``), in one part."""
    fields = {k: v for k, v in (message.model_extra or {}).items() if k in REASONING_FIELDS and v}
    if not fields:
        return None
    text = next((fields[k] for k in ("reasoning_content", "reasoning") if isinstance(fields.get(k), str)), "")
    return Reasoning(text=text, source="openai_chat", provider_details={"fields": fields})


def _chat_reasoning_fields(message: Any, wire: str) -> dict[str, Any]:
    """The reasoning fields to send back on an assistant message: those the SDK gave, as they came."""
    out: dict[str, Any] = {}
    for part in message.parts:
        if not isinstance(part, Reasoning) or not own_reasoning(part, wire):
            continue  # another provider's reasoning: a Chat server cannot use it, a user leaves it out
        fields = part.provider_details.get("fields")
        if isinstance(fields, dict):
            out.update(fields)
            continue
        name = part.provider_details.get("field")
        key = name if isinstance(name, str) and name in REASONING_FIELDS else "reasoning_content"
        out[key] = out.get(key, "") + part.text
        if isinstance(part.provider_details.get("reasoning_details"), list):
            out["reasoning_details"] = part.provider_details["reasoning_details"]
    return out


def _chat_messages(call: Call) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    if call.system:
        out.append({"role": "system", "content": call.system})
    for message in call.messages:
        texts = "".join(p.text for p in message.parts if isinstance(p, Text))
        if message.role == "user":
            out.append({"role": "user", "content": texts})
        elif message.role == "assistant":
            calls = [p for p in message.parts if isinstance(p, ToolCall)]
            entry: dict[str, Any] = {"role": "assistant", "content": texts or None}
            entry |= _chat_reasoning_fields(message, call.wire)
            if calls:
                entry["tool_calls"] = [
                    {
                        "id": c.id,
                        "type": "function",
                        "function": {"name": c.name, "arguments": c.arguments_raw or dumps(c.arguments or {})},
                    }
                    for c in calls
                ]
            out.append(entry)
        else:
            for result in message.parts:
                if isinstance(result, ToolResult):
                    out.append({"role": "tool", "tool_call_id": result.call_id, "content": result_text(result)})
    return out


def _chat_kwargs(call: Call) -> dict[str, Any]:
    kwargs: dict[str, Any] = {"model": call.model, "messages": _chat_messages(call)}
    if call.tools:
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
    if call.tool_choice in ("auto", "none", "required"):
        kwargs["tool_choice"] = call.tool_choice
    elif call.tool_choice is not None:
        kwargs["tool_choice"] = {"type": "function", "function": {"name": call.tool_choice}}
    if call.parallel_tool_calls is not None:
        kwargs["parallel_tool_calls"] = call.parallel_tool_calls
    if call.max_tokens is not None:
        kwargs["max_tokens"] = call.max_tokens
    if call.reasoning is not None and (effort := _effort(call)) is not None:
        kwargs["reasoning_effort"] = effort
    return kwargs


def _effort(call: Call) -> str | None:
    """The caller's reasoning setting as the SDK's ``reasoning_effort`` (``ReasoningEffort``: none, minimal,
    low, medium, high, xhigh, max; types/shared/reasoning_effort.py): off is ``none``. The SDK has no token
    budget on either wire, so the driver declares no ``reasoning_budget``."""
    settings = call.reasoning
    if settings is None:
        return None
    return "none" if not settings.enabled else settings.effort


def _chat_response(completion: Any) -> Response:
    choice = completion.choices[0]
    message = choice.message
    parts: list[Part] = []
    if (reasoning := _chat_reasoning(message)) is not None:
        parts.append(reasoning)
    if message.content:
        parts.append(Text(text=message.content))
    for tc in message.tool_calls or ():
        parts.append(tool_call(tc.id, tc.function.name, tc.function.arguments or ""))
    has_calls = any(isinstance(p, ToolCall) for p in parts)
    return Response(
        parts=tuple(parts),
        finish_reason=finish_reason(CHAT_FINISH, choice.finish_reason, has_calls=has_calls),
        provider_details={"finish_reason": choice.finish_reason},
    )


def _merge_details(merged: list[Any], pieces: list[Any]) -> None:
    """Streamed ``reasoning_details`` pieces into whole entries: the pieces of one ``index`` are one entry,
    their ``text`` joined and their other fields (``signature`` on the last piece) kept, as OpenRouter's
    streaming docs describe them (https://openrouter.ai/docs/use-cases/reasoning-tokens, "reasoning_details
    ... streamed"); the SDK hands over the pieces only."""
    for piece in pieces:
        if not isinstance(piece, dict):
            continue
        entry = next((e for e in merged if e.get("index") == piece.get("index")), None)
        if entry is None:
            merged.append(dict(piece))
            continue
        for key, value in piece.items():
            if key == "text" and isinstance(value, str):
                entry["text"] = entry.get("text", "") + value
            elif value is not None:
                entry[key] = value


def _chat_events(stream: Any) -> Iterator[StreamEvent]:
    """The chunks' deltas as events. Reasoning text comes in ``delta.reasoning_content`` or
    ``delta.reasoning`` (kept in ``model_extra``); the block closes when the first text, call or finish
    arrives, naming the field it came in and the ``reasoning_details`` merged (``_merge_details``), so the
    next turn sends it back in that field."""
    calls = StreamCalls()
    field: str | None = None  # the field the open reasoning came in
    details: list[Any] = []
    with stream:
        for chunk in stream:
            for choice in chunk.choices[:1]:
                delta = choice.delta
                extra = delta.model_extra or {}
                for name in ("reasoning_content", "reasoning"):
                    if isinstance(extra.get(name), str) and extra[name]:
                        field = field or name
                        if name == field:
                            yield ReasoningDelta(text=extra[name], source="openai_chat")
                if isinstance(extra.get("reasoning_details"), list):
                    field = field or "reasoning"
                    _merge_details(details, extra["reasoning_details"])
                if field is not None and (delta.content or delta.tool_calls or choice.finish_reason is not None):
                    closing = {"field": field} | ({"reasoning_details": details} if details else {})
                    yield ReasoningDelta(provider_details=closing, source="openai_chat")
                    field, details = None, []
                if delta.content:
                    yield TextDelta(delta.content)
                for tc in delta.tool_calls or ():
                    fn = tc.function
                    name, arguments = (fn.name, fn.arguments) if fn else (None, None)
                    yield from calls.piece(tc.index, tc.id or "", name or "", arguments or "")
                if choice.finish_reason is not None:
                    yield from calls.end_all()
                    reason = finish_reason(CHAT_FINISH, choice.finish_reason, has_calls=calls.any)
                    yield Finish(reason, choice.finish_reason)


# ---- openai_responses -----------------------------------------------------------------------


def _responses_input(call: Call) -> list[dict[str, Any]]:
    """The history as ``input`` items, each message's parts in their order (a reasoning item goes back right
    before the item it preceded: "pass back the reasoning items", https://platform.openai.com/docs/guides/reasoning)."""
    out: list[dict[str, Any]] = []
    for message in call.messages:
        if message.role == "tool":
            out.extend(_function_output(r) for r in message.parts if isinstance(r, ToolResult))
            continue
        texts: list[str] = []
        for part in message.parts:
            if isinstance(part, Text):
                texts.append(part.text)
                continue
            if texts and isinstance(part, Reasoning | ToolCall):
                out.append({"role": message.role, "content": "".join(texts)})
                texts = []
            # the reasoning item as the SDK returned it (its id, summary and encrypted_content); reasoning
            # without its item (another wire's, a caller's own) has nothing to pass back
            if isinstance(part, Reasoning) and own_reasoning(part, call.wire):
                if isinstance(part.provider_details.get("item"), dict):
                    out.append(dict(part.provider_details["item"]))
            elif isinstance(part, ToolCall):
                item: dict[str, Any] = {
                    "type": "function_call",
                    "call_id": part.id,
                    "name": part.name,
                    "arguments": part.arguments_raw or dumps(part.arguments or {}),
                }
                if isinstance(part.provider_details.get("item_id"), str):
                    item["id"] = part.provider_details["item_id"]
                out.append(item)
        if texts and "".join(texts):
            out.append({"role": message.role, "content": "".join(texts)})
    return out


def _function_output(result: ToolResult) -> dict[str, Any]:
    images = result_images(result)
    output: Any = result_text(result)
    if images:
        output = ([{"type": "input_text", "text": output}] if output else []) + [
            {"type": "input_image", "image_url": f"data:{i.media_type};base64,{i.data}"} for i in images
        ]
    return {"type": "function_call_output", "call_id": result.call_id, "output": output}


def _responses_kwargs(call: Call) -> dict[str, Any]:
    kwargs: dict[str, Any] = {"model": call.model, "input": _responses_input(call)}
    if call.system:
        kwargs["instructions"] = call.system
    if call.tools:
        kwargs["tools"] = [
            {
                "type": "function",
                "name": t.name,
                **({"description": t.description} if t.description else {}),
                "parameters": dict(t.input_schema),
                "strict": False,
            }
            for t in call.tools
        ]
    if call.tool_choice in ("auto", "none", "required"):
        kwargs["tool_choice"] = call.tool_choice
    elif call.tool_choice is not None:
        kwargs["tool_choice"] = {"type": "function", "name": call.tool_choice}
    if call.parallel_tool_calls is not None:
        kwargs["parallel_tool_calls"] = call.parallel_tool_calls
    if call.max_tokens is not None:
        kwargs["max_output_tokens"] = call.max_tokens
    if call.reasoning is not None:
        kwargs["reasoning"] = {"effort": _effort(call)}
    if call.reasoning is not None and call.reasoning.enabled:
        # Stateless reasoning: "set store to false and add reasoning.encrypted_content to include", so the
        # items come back with their encrypted content and can be passed back in the next input
        # (https://platform.openai.com/docs/guides/reasoning, "Encrypted reasoning items";
        # types/responses/response_create_params.py: include, store).
        kwargs["store"] = False
        kwargs["include"] = ["reasoning.encrypted_content"]
    return kwargs


def _responses_finish(response: Any, has_calls: bool) -> tuple[FinishReason, str]:
    status = str(response.status or "")
    if status == "incomplete":
        why = str(getattr(response.incomplete_details, "reason", None) or "")
        return (
            "length" if why == "max_output_tokens" else "content_filter" if why == "content_filter" else "other"
        ), why
    if status == "failed":
        return "error", status
    return ("tool_calls" if has_calls else "stop"), status  # a forced call says completed too


def _responses_response(response: Any) -> Response:
    parts: list[Part] = []
    for item in response.output:
        if item.type == "reasoning":
            parts.append(_reasoning_part(item))
        elif item.type == "message":
            text = "".join(c.text for c in item.content if c.type == "output_text")
            if text:
                parts.append(Text(text=text))
        elif item.type == "function_call":
            parts.append(tool_call(item.call_id, item.name, item.arguments or "", details={"item_id": item.id}))
        elif _client_tool_search(item):
            details = {"item_id": item.id}
            parts.append(tool_call(item.call_id or "", "tool_search", dumps(item.arguments), details=details))
    reason, raw = _responses_finish(response, any(isinstance(p, ToolCall) for p in parts))
    error = None
    if response.error is not None:
        error = ErrorInfo(
            kind=kind_for_code(response.error.code) or "server",
            message=response.error.message,
            code=response.error.code,
        )
    return Response(parts=tuple(parts), finish_reason=reason, error=error, provider_details={"status": raw})


def _client_tool_search(item: Any) -> bool:
    """A ``tool_search_call`` the caller runs (``execution: "client"``): the SDK types it as
    ``ResponseToolSearchCall`` with its ``call_id`` and ``arguments`` (types/responses/response_tool_search_call.py)."""
    return bool(item.type == "tool_search_call" and item.execution == "client")


def _reasoning_part(item: Any) -> Reasoning:
    """A reasoning item: its summary as the text, its ``encrypted_content`` as the signature (or, with no
    readable text, as redacted reasoning: the payload alone, as docs/adapters.md "Reasoning" reads it), and the
    item whole (``model_dump(exclude_none=True)``) to pass back as it came."""
    text, details = _reasoning_text(item), {"item": item.model_dump(exclude_none=True)}
    if item.encrypted_content is not None and not text:
        return Reasoning(redacted=item.encrypted_content, source="openai_responses", provider_details=details)
    return Reasoning(text=text, signature=item.encrypted_content, source="openai_responses", provider_details=details)


def _reasoning_text(item: Any) -> str:
    return "".join(s.text for s in item.summary or ()) or "".join(c.text for c in item.content or ())


def _responses_events(stream: Any) -> Iterator[StreamEvent]:
    calls = StreamCalls()
    reasoning_streamed: set[str] = set()
    with stream:
        for event in stream:
            kind = event.type
            if kind == "response.output_item.added" and event.item.type == "function_call":
                yield from calls.start(event.item.id, event.item.call_id, event.item.name)
                yield from calls.chunk(event.item.id, event.item.arguments or "")  # a call sent whole
            elif kind == "response.function_call_arguments.delta":
                yield from calls.chunk(event.item_id, event.delta)
            elif kind == "response.function_call_arguments.done":
                yield from calls.end(event.item_id, event.arguments)
            elif kind == "response.output_text.delta":
                yield TextDelta(event.delta)
            elif kind in ("response.reasoning_summary_text.delta", "response.reasoning_text.delta"):
                reasoning_streamed.add(event.item_id)
                yield ReasoningDelta(text=event.delta, source="openai_responses")
            elif kind == "response.output_item.done" and _client_tool_search(event.item):
                yield from calls.start(event.item.id, event.item.call_id or "", "tool_search")  # sent whole
                yield from calls.end_parsed(event.item.id, event.item.arguments)
            elif kind == "response.output_item.done" and event.item.type == "reasoning":
                # The whole item closes the block (and carries it for replay); its summary is the text
                # when no delta streamed it.
                streamed = event.item.id in reasoning_streamed
                text = "" if streamed else _reasoning_text(event.item)
                item = event.item.model_dump(exclude_none=True)
                if event.item.encrypted_content is not None and not streamed and not text:
                    yield ReasoningDelta(
                        redacted=event.item.encrypted_content,
                        provider_details={"item": item},
                        source="openai_responses",
                    )
                    continue
                yield ReasoningDelta(
                    text=text,
                    signature=event.item.encrypted_content,
                    provider_details={"item": item},
                    source="openai_responses",
                )
            elif kind in ("response.completed", "response.incomplete", "response.failed"):
                yield from calls.end_all()
                reason, raw = _responses_finish(event.response, calls.any)
                yield Finish(reason, raw)


# ---- the client -----------------------------------------------------------------------------


def _send(client: openai.OpenAI, call: Call) -> Completion:
    if call.wire == "openai_responses":
        if call.stream:
            return _responses_events(client.responses.create(**_responses_kwargs(call), stream=True))
        return _responses_response(client.responses.create(**_responses_kwargs(call)))
    if call.stream:
        return _chat_events(client.chat.completions.create(**_chat_kwargs(call), stream=True))
    return _chat_response(client.chat.completions.create(**_chat_kwargs(call)))


def complete(call: Call) -> Completion:
    completion: Completion = finish_call(_client(call), lambda client: _send(client, call))
    return completion


# The SDK's exception classes, most specific first: the kind is what the class means (README "Handling
# errors": one class per 4xx status, `InternalServerError` for every status >= 500, `APIConnectionError`
# when the API cannot be reached and, "when consuming a Stream", when the body breaks off). No status or
# cause is read to change it: a 503 the SDK raises as `InternalServerError` is `server`.
_CLASSES: tuple[tuple[type[BaseException], ErrorKind], ...] = (
    (openai.RateLimitError, "rate_limit"),
    (openai.AuthenticationError, "auth"),
    (openai.PermissionDeniedError, "permission"),
    (openai.NotFoundError, "not_found"),
    (openai.BadRequestError, "invalid_request"),
    (openai.ConflictError, "invalid_request"),
    (openai.UnprocessableEntityError, "invalid_request"),
    (openai.InternalServerError, "server"),
    (openai.APITimeoutError, "unknown"),
    (openai.APIConnectionError, "stream_incomplete"),
    (openai.APIResponseValidationError, "malformed_response"),
)


def error_info(exc: BaseException) -> ErrorInfo | None:
    if not isinstance(exc, openai.APIError):
        return None
    # ``APIError`` itself (no subclass applies: an error event inside a 200 stream, a status without a class):
    # the error's own category, the ``code``/``type`` fields the class declares (_exceptions.py, APIError).
    kind = kind_for_class(exc, _CLASSES) or kind_for_code(exc.code, exc.type) or "unknown"
    headers = exc.response.headers if isinstance(exc, openai.APIStatusError) else None
    return ErrorInfo(
        kind=kind,
        message=exc.message,
        status=getattr(exc, "status_code", None),  # APIStatusError and APIResponseValidationError have one
        retry_after=retry_after(headers),
        code=exc.code or exc.type,
    )


_CHAT = frozenset(
    {
        "streaming",
        "parallel_tool_calls",
        "disable_parallel_tool_calls",
        "tool_choice_auto",
        "tool_choice_none",
        "tool_choice_required",
        "tool_choice_named",
        "system_prompt",
        "call_ids",
        # the reasoning the caller hands back (the Chat reasoning fields, the Responses items) goes out as the
        # SDK returned it, and the SDK's reasoning_effort / reasoning.effort carry an effort and "none"
        "reasoning_replay",
        "reasoning_effort",
        "reasoning_off",
    }
)

CLIENT = SimpleClient(
    name=f"openai-python {openai.__version__}",
    wires={"openai_chat": _CHAT, "openai_responses": _CHAT | {"images_in_tool_results"}},
    complete=complete,
    error_info=error_info,
    # An SDK transports: it sends the caller's tool names and schemas as given (the README promises no
    # mapping to what the API accepts), so those duties are left to its caller.
    duties=frozenset({"transport"}),
    request_differences={
        "$.messages[*].parts[*].is_error": (
            "the OpenAI wires have no error flag on a tool result: the driver sends the tool's text as"
            " it is (the recorded request marks it with an `Error: ` prefix, which reads back as the flag)"
        ),
    },
)

__all__ = ["CLIENT"]
