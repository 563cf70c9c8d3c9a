"""OpenAI Chat Completions wire format (``POST /v1/chat/completions``) and compatible servers.

Sources: wire-formats.md §1 (openai-python ``types/chat``, ``_streaming.py``,
``lib/streaming/_deltas.py``; openai-openapi), §9 rule 2 and edge cases E3-E8, E24, E25, E27, E35;
the real recordings in ``shared/realworld`` (OpenAI, Azure, Mistral, Gemini's OpenAI endpoint).

Quirks handled here:
- arguments are a JSON *string*; fragments are keyed by ``tool_calls[].index`` (position when a
  server omits it, E25 Mistral); ``id``/``name`` are set once, later repeats, ``""`` or ``null``
  are ignored, never concatenated (E4);
- a forced tool choice ends with ``stop`` while calls are present (E7) -> ``tool_calls``;
- ``choices: []`` chunks carry usage (``include_usage``) or Azure filter results (E24);
- an empty call ``id`` (E27) or none at all (legacy ``function_call``, E35) gets a synthetic id;
- tool results have no error flag: ``is_error`` travels as an ``Error: `` prefix on the text
  (and is read back from it); images cannot travel in tool results (UnsupportedContentError).

Reasoning parts in the history are not sent: Chat has no field to replay them.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

import orjson

from conformance.adapters.base import (
    Adapter,
    CallTracker,
    NameMap,
    SchemaChange,
    WireRequest,
    WireTools,
    dumps_compact,
    error_kind_from_status,
    load_json_body,
    name_map,
    object_schema,
    parse_arguments,
    retry_after_from_headers,
    stream_broken,
    synthetic_call_id,
)
from conformance.assembly import fold
from conformance.errors import ProviderError, UnsupportedContentError, WireFormatError
from conformance.framing import SSEDecoder
from conformance.model import (
    ContentItem,
    ErrorEvent,
    ErrorInfo,
    ErrorKind,
    Finish,
    FinishReason,
    Image,
    JSONObject,
    Message,
    Part,
    ReasoningDelta,
    Request,
    Resource,
    Response,
    StreamEvent,
    Text,
    TextDelta,
    Tool,
    ToolCall,
    ToolResult,
    Usage,
    UsageEvent,
)

__all__ = [
    "ADAPTER",
    "capabilities",
    "error_from_wire",
    "request_from_wire",
    "request_to_wire",
    "response_from_wire",
    "stream_from_wire",
    "tools_to_wire",
]

# --------------------------------------------------------------------------------------------
# Tables
# --------------------------------------------------------------------------------------------

_FINISH_REASONS: dict[str, FinishReason] = {
    "stop": "stop",
    "tool_calls": "tool_calls",
    "function_call": "tool_calls",  # legacy functions API (E35)
    "length": "length",
    "content_filter": "content_filter",
}

_ERROR_KINDS: dict[str, ErrorKind] = {
    # error.code first, then error.type (OAI-SPEC Error; recorded 401/404 bodies)
    "rate_limit_exceeded": "rate_limit",
    "insufficient_quota": "rate_limit",
    "invalid_api_key": "auth",
    "authentication_error": "auth",
    "permission_denied": "permission",
    "model_not_found": "not_found",
    "not_found_error": "not_found",
    "context_length_exceeded": "context_length",
    "server_error": "server",
    "overloaded": "overloaded",
    "invalid_request_error": "invalid_request",
}

_ERROR_PREFIX = "Error: "
"""Chat has no is_error flag (§1b); a failed tool's text carries this prefix on the wire."""

_NAME_RULE = {"allowed": "a-zA-Z0-9_-", "max_len": 64}  # §1a, E14

_HANDLED_KEYS = frozenset(
    "model messages tools tool_choice parallel_tool_calls stream max_tokens"
    " max_completion_tokens functions function_call".split()
)


def _names(tools: Sequence[Tool]) -> NameMap:
    return name_map((t.name for t in tools), **_NAME_RULE)  # type: ignore[arg-type]


# --------------------------------------------------------------------------------------------
# Tools
# --------------------------------------------------------------------------------------------


def tools_to_wire(tools: Sequence[Tool]) -> WireTools:
    """MCP tools -> ``tools: [{"type": "function", "function": {...}}]``; ``inputSchema`` passes
    through as ``parameters`` (Chat takes JSON Schema)."""
    names = _names(tools)
    wire: list[JSONObject] = []
    changes: list[SchemaChange] = []
    for tool in tools:
        schema, changed = object_schema(tool)
        changes.extend(changed)
        function: JSONObject = {"name": names.wire(tool.name)}
        if tool.description is not None:
            function["description"] = tool.description
        function["parameters"] = schema
        function.update(tool.provider_details.get("function", {}))
        wire.append({"type": "function", "function": function, **tool.provider_details.get("tool", {})})
    return WireTools(tools=wire, changes=tuple(changes), names=names)


def _tool_from_wire(item: Mapping[str, Any], legacy: bool) -> Tool:
    function = item if legacy else item.get("function", {})
    extra_fn = {k: v for k, v in function.items() if k not in ("name", "description", "parameters")}
    extra_tool = {} if legacy else {k: v for k, v in item.items() if k not in ("type", "function")}
    details: JSONObject = {}
    if extra_fn:
        details["function"] = extra_fn
    if extra_tool:
        details["tool"] = extra_tool
    return Tool(
        name=str(function.get("name", "")),
        description=function.get("description"),
        input_schema=function.get("parameters") or {},
        provider_details=details,
    )


# --------------------------------------------------------------------------------------------
# Requests
# --------------------------------------------------------------------------------------------


def request_to_wire(request: Request) -> WireRequest:
    """Unified request -> Chat Completions body."""
    details = request.provider_details
    wire_tools = tools_to_wire(request.tools)
    names = wire_tools.names
    messages: list[JSONObject] = []
    if request.system is not None:
        messages.append({"role": details.get("system_role", "system"), "content": request.system})
    for message in request.messages:
        messages.extend(_message_to_wire(message, names))
    body: JSONObject = {"model": request.model, "messages": messages} if request.model else {"messages": messages}
    legacy = bool(details.get("legacy_functions"))
    if request.tools:
        if legacy:
            body["functions"] = [t["function"] for t in wire_tools.tools]
        else:
            body["tools"] = wire_tools.tools
    if request.tool_choice is not None:
        choice = request.tool_choice
        if legacy:
            body["function_call"] = choice if choice in ("auto", "none") else {"name": names.wire(choice)}
        elif choice in ("auto", "none", "required"):
            body["tool_choice"] = details.get("tool_choice_raw", choice)
        else:
            body["tool_choice"] = {"type": "function", "function": {"name": names.wire(choice)}}
    if request.parallel_tool_calls is not None:
        body["parallel_tool_calls"] = request.parallel_tool_calls
    if request.stream:
        body["stream"] = True
    if request.max_tokens is not None:
        body[details.get("max_tokens_key", "max_tokens")] = request.max_tokens
    body.update(details.get("extra", {}))
    return WireRequest(path="/v1/chat/completions", body=body, stream=request.stream, schema_changes=wire_tools.changes)


def _message_to_wire(message: Message, names: NameMap) -> list[JSONObject]:
    extra = dict(message.provider_details.get("extra", {}))
    if message.role == "tool":
        out = []
        for part in message.parts:
            if not isinstance(part, ToolResult):
                raise UnsupportedContentError(f"a tool message holds only tool results, not {part.kind}")
            out.append(
                {
                    "role": "tool",
                    "tool_call_id": part.call_id,
                    "content": _result_content(part),
                    **part.provider_details.get("extra", {}),
                }
            )
        return out
    if message.role == "user":
        role = message.provider_details.get("role", "user")
        texts = [p for p in message.parts if isinstance(p, Text)]
        content: Any
        if len(texts) == len(message.parts) == 1 and not message.provider_details.get("content_list"):
            content = texts[0].text
        else:
            content = [_user_part(p) for p in message.parts]
        return [{"role": role, "content": content, **extra}]
    text = "".join(p.text for p in message.parts if isinstance(p, Text))
    calls = [p for p in message.parts if isinstance(p, ToolCall)]
    wire: JSONObject = {"role": "assistant", "content": text if text or not calls else None}
    if message.provider_details.get("no_content_key") and not text:
        del wire["content"]
    if calls:
        if message.provider_details.get("legacy_function_call"):
            call = calls[0]
            wire["function_call"] = {"name": names.wire(call.name), "arguments": _arguments_text(call)}
        else:
            wire["tool_calls"] = [
                {
                    "id": c.id,
                    "type": "function",
                    "function": {"name": names.wire(c.name), "arguments": _arguments_text(c)},
                }
                for c in calls
            ]
    wire.update(extra)
    return [wire]


def _arguments_text(call: ToolCall) -> str:
    # replay what the model sent, byte for byte, when we have it
    if call.arguments_raw:
        return call.arguments_raw
    return dumps_compact(call.arguments if call.arguments is not None else {})


def _user_part(part: Part) -> JSONObject:
    if isinstance(part, Text):
        return {"type": "text", "text": part.text}
    if isinstance(part, Image):
        url = part.url or f"data:{part.media_type};base64,{part.data}"
        return {"type": "image_url", "image_url": {"url": url}}
    raise UnsupportedContentError(f"OpenAI Chat user messages cannot carry {part.kind} parts")


def _result_content(result: ToolResult) -> str | list[JSONObject]:
    texts: list[str] = []
    for item in result.content:
        if isinstance(item, Text):
            texts.append(item.text)
        elif isinstance(item, Resource) and item.text is not None:  # MCP embedded text resource
            texts.append(item.text)
        else:
            # §1b: tool messages take text parts only
            raise UnsupportedContentError(f"OpenAI Chat tool results cannot carry {item.kind} content")
    if result.provider_details.get("content_list"):
        return [{"type": "text", "text": t} for t in texts]
    text = "".join(texts)
    if result.is_error and not text.startswith(_ERROR_PREFIX):
        text = _ERROR_PREFIX + text
    return text


def request_from_wire(body: Mapping[str, Any], *, path: str = "", tools: Sequence[Tool] = ()) -> Request:
    """Chat Completions body -> unified request (``tools`` maps wire names back)."""
    if not isinstance(body, Mapping):
        raise WireFormatError("a Chat Completions request body must be a JSON object")
    legacy = "functions" in body and "tools" not in body
    wire_tools = [_tool_from_wire(t, legacy) for t in body.get("functions" if legacy else "tools") or []]
    names = _names(tools) if tools else NameMap()
    details: JSONObject = {}
    extra = {k: v for k, v in body.items() if k not in _HANDLED_KEYS}
    if body.get("stream") is False:
        extra["stream"] = False
    if "tools" in body and not body["tools"]:
        extra["tools"] = body["tools"]
    if extra:
        details["extra"] = extra
    if legacy:
        details["legacy_functions"] = True
    if "max_completion_tokens" in body:
        details["max_tokens_key"] = "max_completion_tokens"
    system: str | None = None
    messages: list[Message] = []
    raw_messages = list(body.get("messages") or [])
    if (
        raw_messages
        and raw_messages[0].get("role") in ("system", "developer")
        and isinstance(raw_messages[0].get("content"), str)
    ):
        system = raw_messages[0]["content"]
        if raw_messages[0]["role"] == "developer":
            details["system_role"] = "developer"
        raw_messages = raw_messages[1:]
    for index, raw in enumerate(raw_messages):
        message = _message_from_wire(raw, index, names)
        if message.role == "tool" and messages and messages[-1].role == "tool":
            messages[-1] = Message(role="tool", parts=messages[-1].parts + message.parts)
        else:
            messages.append(message)
    raw_choice = body.get("function_call" if legacy else "tool_choice")
    if raw_choice == "any":  # E25: Mistral's spelling of "required"
        details["tool_choice_raw"], raw_choice = raw_choice, "required"
    tool_choice = _tool_choice_from_wire(raw_choice, names)
    return Request(
        model=str(body.get("model", "")),
        system=system,
        messages=tuple(messages),
        tools=tuple(Tool(**{**_tool_kwargs(t), "name": names.original(t.name)}) for t in wire_tools),
        tool_choice=tool_choice,
        parallel_tool_calls=body.get("parallel_tool_calls"),
        stream=bool(body.get("stream", False)),
        max_tokens=body.get("max_completion_tokens", body.get("max_tokens")),
        provider_details=details,
    )


def _tool_kwargs(tool: Tool) -> dict[str, Any]:
    return {
        "description": tool.description,
        "input_schema": tool.input_schema,
        "provider_details": tool.provider_details,
    }


def _tool_choice_from_wire(choice: Any, names: NameMap) -> str | None:
    if choice is None or choice in ("auto", "none", "required"):
        return choice  # type: ignore[no-any-return]
    if isinstance(choice, Mapping):
        name = (choice.get("function") or {}).get("name") or choice.get("name")
        if name:
            return names.original(str(name))
    raise WireFormatError(f"unsupported tool_choice {choice!r}")


def _message_from_wire(raw: Mapping[str, Any], index: int, names: NameMap) -> Message:
    role = raw.get("role")
    content = raw.get("content")
    if role == "tool":
        extra = {k: v for k, v in raw.items() if k not in ("role", "tool_call_id", "content")}
        items: tuple[ContentItem, ...]
        is_error = False
        result_details: JSONObject = {"extra": extra} if extra else {}
        if isinstance(content, list):
            items = tuple(Text(text=str(p.get("text", ""))) for p in content)
            result_details["content_list"] = True
        else:
            text = "" if content is None else str(content)
            if text.startswith(_ERROR_PREFIX):
                is_error, text = True, text[len(_ERROR_PREFIX) :]
            items = (Text(text=text),)
        result = ToolResult(
            call_id=str(raw.get("tool_call_id", "")), content=items, is_error=is_error, provider_details=result_details
        )
        return Message(role="tool", parts=(result,))
    if role == "assistant":
        return _assistant_from_wire(raw, index, names)
    if role not in ("user", "system", "developer"):
        raise WireFormatError(f"messages[{index}]: unknown role {role!r}")
    details: JSONObject = {}
    extra = {k: v for k, v in raw.items() if k not in ("role", "content")}
    if extra:
        details["extra"] = extra
    if role != "user":
        details["role"] = role
    if isinstance(content, str):
        return Message(role="user", parts=(Text(text=content),), provider_details=details)
    parts: list[Part] = []
    for p in content or []:
        if p.get("type") == "text":
            parts.append(Text(text=str(p.get("text", ""))))
        elif p.get("type") == "image_url":
            parts.append(_image_from_url(str((p.get("image_url") or {}).get("url", ""))))
        else:
            raise UnsupportedContentError(f"messages[{index}]: unsupported content part {p.get('type')!r}")
    details["content_list"] = True
    return Message(role="user", parts=tuple(parts), provider_details=details)


def _image_from_url(url: str) -> Image:
    if url.startswith("data:") and ";base64," in url:
        head, data = url[5:].split(";base64,", 1)
        return Image(media_type=head, data=data)
    return Image(url=url)


def _assistant_from_wire(raw: Mapping[str, Any], index: int, names: NameMap) -> Message:
    parts: list[Part] = []
    details: JSONObject = {}
    extra = {k: v for k, v in raw.items() if k not in ("role", "content", "tool_calls", "function_call")}
    content = raw.get("content")
    if isinstance(content, str) and content:
        parts.append(Text(text=content))
    elif content is not None and not isinstance(content, str):
        extra["content"] = content
    elif content == "" and raw.get("tool_calls"):
        extra["content"] = ""
    elif "content" not in raw:
        details["no_content_key"] = True
    for position, call in enumerate(raw.get("tool_calls") or []):
        function = call.get("function") or {}
        parts.append(
            _call(
                call.get("id") or synthetic_call_id("openai_chat", "history", index, position),
                names.original(str(function.get("name", ""))),
                function.get("arguments"),
            )
        )
    if raw.get("function_call"):
        function = raw["function_call"]
        details["legacy_function_call"] = True
        parts.append(
            _call(
                synthetic_call_id("openai_chat", "history", index, 0),
                names.original(str(function.get("name", ""))),
                function.get("arguments"),
            )
        )
    if extra:
        details["extra"] = extra
    return Message(role="assistant", parts=tuple(parts), provider_details=details)


def _call(call_id: str, name: str, arguments: Any) -> ToolCall:
    raw = arguments if isinstance(arguments, str) else dumps_compact(arguments) if arguments is not None else ""
    parsed, error = parse_arguments(raw)
    return ToolCall(id=call_id, name=name, arguments=parsed, arguments_raw=raw, arguments_error=error)


# --------------------------------------------------------------------------------------------
# Responses
# --------------------------------------------------------------------------------------------


def _usage(raw: Mapping[str, Any]) -> Usage:
    prompt_details = raw.get("prompt_tokens_details") or {}
    completion_details = raw.get("completion_tokens_details") or {}
    return Usage(
        input_tokens=raw.get("prompt_tokens"),
        output_tokens=raw.get("completion_tokens"),
        total_tokens=raw.get("total_tokens"),
        cache_read_tokens=prompt_details.get("cached_tokens"),
        reasoning_tokens=completion_details.get("reasoning_tokens"),
    )


def _finish(raw_reason: str, tracker: CallTracker, produced_calls: bool) -> list[StreamEvent]:
    """End open calls and say why the response ended (E7: calls + ``stop`` -> ``tool_calls``)."""
    reason = _FINISH_REASONS.get(raw_reason, "other")
    events: list[StreamEvent] = []
    if reason == "length":
        events.extend(tracker.end_all(error="the response was cut by the length limit"))
    else:
        events.extend(tracker.end_all())
        if produced_calls and reason == "stop":
            reason = "tool_calls"
    return [*events, Finish(reason, raw_reason)]


def _events_from_body(body: Mapping[str, Any], names: NameMap) -> Iterator[StreamEvent]:
    """A non-streamed ``chat.completion`` as the events its stream would give."""
    tracker = CallTracker(names)
    choices = body.get("choices") or []
    if not choices:
        raise WireFormatError("a chat.completion body without choices")
    choice = choices[0]
    message = choice.get("message") or {}
    for key in ("reasoning_content", "reasoning"):  # compatible servers (vLLM, DeepSeek)
        if isinstance(message.get(key), str) and message[key]:
            yield ReasoningDelta(message[key])
    if isinstance(message.get("content"), str) and message["content"]:
        yield TextDelta(message["content"])
    calls = list(message.get("tool_calls") or [])
    if message.get("function_call"):
        calls.append({"function": message["function_call"]})
    response_id = str(body.get("id", ""))
    for position, call in enumerate(calls):
        function = call.get("function") or {}
        call_id = call.get("id") or synthetic_call_id("openai_chat", response_id, position)
        yield tracker.start(position, call_id, str(function.get("name", "")))
        arguments = function.get("arguments")
        text = arguments if isinstance(arguments, str) else dumps_compact(arguments) if arguments is not None else ""
        if (chunk := tracker.chunk(position, text)) is not None:
            yield chunk
    if isinstance(body.get("usage"), Mapping):
        yield UsageEvent(_usage(body["usage"]))
    yield from _finish(str(choice.get("finish_reason") or "stop"), tracker, bool(calls))


def response_from_wire(body: Mapping[str, Any], *, tools: Sequence[Tool] = ()) -> Response:
    """A ``chat.completion`` body -> unified response (the same fold streams use)."""
    details = {k: body[k] for k in ("id", "model") if k in body}
    return fold(_events_from_body(body, _names(tools)), provider_details=details)


# --------------------------------------------------------------------------------------------
# Streams
# --------------------------------------------------------------------------------------------


class _Stream:
    """State of one ``chat.completion.chunk`` stream (§1d, §9 rule 2)."""

    __slots__ = ("done", "finish_reason", "pending", "produced_calls", "response_id", "tracker")

    def __init__(self, names: NameMap) -> None:
        self.tracker = CallTracker(names)
        self.finish_reason: str | None = None
        self.produced_calls = False
        self.response_id = ""
        self.done = False
        # calls whose name has not arrived yet: key -> (id, buffered argument text)
        self.pending: dict[Any, tuple[str | None, list[str]]] = {}

    def feed(self, data: str) -> list[StreamEvent]:
        if data == "[DONE]":
            self.done = True
            return self.close()
        try:
            chunk = orjson.loads(data)
        except orjson.JSONDecodeError:
            self.done = True
            return stream_broken(self.tracker, "malformed_response", f"invalid JSON in a stream event: {data[:80]!r}")
        if not isinstance(chunk, dict):
            return []
        if chunk.get("error"):  # §1d: an error payload inside a 200 stream
            self.done = True
            info = _error_info(chunk["error"], None, {})
            return [
                *self.tracker.end_all(error=f"the stream failed: {info.message}"),
                ErrorEvent(info),
                Finish("error"),
            ]
        if not self.response_id and chunk.get("id"):
            self.response_id = str(chunk["id"])
        events: list[StreamEvent] = []
        choices = chunk.get("choices")
        if choices:
            choice = choices[0]
            delta = choice.get("delta")
            if delta:
                reasoning = delta.get("reasoning_content") or delta.get("reasoning")
                if reasoning and isinstance(reasoning, str):
                    events.append(ReasoningDelta(reasoning))
                content = delta.get("content")
                if content:
                    events.append(TextDelta(content))
                tool_calls = delta.get("tool_calls")
                if tool_calls:
                    for position, fragment in enumerate(tool_calls):
                        self._fragment(fragment, position, events)
                if delta.get("function_call"):
                    self._fragment({"index": 0, "function": delta["function_call"]}, 0, events)
            if choice.get("finish_reason"):
                self.finish_reason = str(choice["finish_reason"])
                self._flush_pending(events)
                finish = _finish(self.finish_reason, self.tracker, self.produced_calls)
                events.extend(finish[:-1])  # the Finish itself waits for usage and [DONE]
        usage = chunk.get("usage")
        if usage:
            events.append(UsageEvent(_usage(usage)))
        return events

    def _fragment(self, fragment: Mapping[str, Any], position: int, events: list[StreamEvent]) -> None:
        key = fragment.get("index", position)  # E25: no index -> position in the list
        function = fragment.get("function") or {}
        arguments = function.get("arguments")
        text = arguments if isinstance(arguments, str) else dumps_compact(arguments) if arguments is not None else ""
        tracker = self.tracker
        if tracker.is_open(key):
            if text and (chunk := tracker.chunk(key, text)) is not None:
                events.append(chunk)
            return  # E4: repeated id/name are ignored, never concatenated
        call_id = fragment.get("id") or None
        name = function.get("name") or None
        if key in self.pending:
            pending_id, buffered = self.pending[key]
            call_id = pending_id or call_id
            buffered.append(text)
            if name is None:
                self.pending[key] = (call_id, buffered)
                return
            del self.pending[key]
            text = "".join(buffered)
        elif name is None:  # the name comes in a later chunk: hold the call until it does
            self.pending[key] = (call_id, [text])
            return
        if call_id is None:
            call_id = synthetic_call_id("openai_chat", self.response_id, key)
        self.produced_calls = True
        events.append(tracker.start(key, call_id, name))
        if text and (chunk := tracker.chunk(key, text)) is not None:
            events.append(chunk)

    def _flush_pending(self, events: list[StreamEvent]) -> None:
        # calls that never got a name end as unusable calls named ""
        for key, (call_id, buffered) in list(self.pending.items()):
            del self.pending[key]
            events.append(
                self.tracker.start(key, call_id or synthetic_call_id("openai_chat", self.response_id, key), "")
            )
            if (chunk := self.tracker.chunk(key, "".join(buffered))) is not None:
                events.append(chunk)
            if (end := self.tracker.end(key, error="the call never received a tool name")) is not None:
                events.append(end)

    def close(self) -> list[StreamEvent]:
        """End of stream (``[DONE]`` or end of input)."""
        self.done = True
        if self.finish_reason is None:
            return stream_broken(self.tracker, "stream_incomplete", "the stream ended without a finish reason")
        return [_finish(self.finish_reason, self.tracker, self.produced_calls)[-1]]


def stream_from_wire(chunks: Iterable[bytes], *, tools: Sequence[Tool] = ()) -> Iterator[StreamEvent]:
    """SSE bytes of a ``stream: true`` request -> normalized events, as the bytes arrive."""
    decoder = SSEDecoder()
    state = _Stream(_names(tools))
    for chunk in chunks:
        for event in decoder.decode(chunk):
            yield from state.feed(event.data)
            if state.done:
                return
    for event in decoder.flush():
        yield from state.feed(event.data)
        if state.done:
            return
    yield from state.close()


# --------------------------------------------------------------------------------------------
# Errors
# --------------------------------------------------------------------------------------------


def _error_info(error: Any, status: int | None, headers: Mapping[str, str]) -> ErrorInfo:
    if isinstance(error, Mapping):
        code = error.get("code")
        etype = error.get("type")
        message = str(error.get("message") or "")
    else:
        code, etype, message = None, None, str(error)
    kind: ErrorKind | None = _ERROR_KINDS.get(str(code)) if code else None
    if kind is None and status is not None and status >= 400:
        kind = error_kind_from_status(status)
    if kind is None:
        kind = _ERROR_KINDS.get(str(etype), "unknown")
    return ErrorInfo(
        kind=kind,
        message=message,
        status=status,
        retry_after=retry_after_from_headers(headers),
        code=str(code or etype) if (code or etype) else None,
    )


def error_from_wire(
    status: int, headers: Mapping[str, str], body: bytes | str | Mapping[str, Any] | None
) -> ProviderError:
    """An HTTP error response -> typed provider error (§1e)."""
    parsed = load_json_body(body)
    error = parsed.get("error") if isinstance(parsed, Mapping) else None
    if error is None:
        text = body.decode("utf-8", "replace") if isinstance(body, bytes) else str(body or "")
        error = {"message": text.strip() or f"HTTP {status}"}
    return ProviderError(_error_info(error, status, headers))


# --------------------------------------------------------------------------------------------
# Adapter
# --------------------------------------------------------------------------------------------

capabilities = frozenset(
    "streaming parallel_tool_calls disable_parallel_tool_calls system_prompt call_ids"
    " tool_choice_auto tool_choice_none tool_choice_required tool_choice_named".split()
)

ADAPTER = Adapter(
    name="openai_chat",
    wire_format="openai_chat",
    capabilities=capabilities,
    tools_to_wire=tools_to_wire,
    request_to_wire=request_to_wire,
    request_from_wire=request_from_wire,
    response_from_wire=response_from_wire,
    stream_from_wire=stream_from_wire,
    error_from_wire=error_from_wire,
)
