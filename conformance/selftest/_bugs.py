"""The bugs of the mutants (``_mutants``): each function is one real-world bug, as a rewrite for
the ``_wrap`` helpers (a wire body, SSE/NDJSON data, decoded events, a typed error) or as the patch
itself. Grouped by the wire whose reference adapter the bug is injected into."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import replace
from typing import Any

from conformance.adapters.base import Adapter, WireRequest, parse_arguments
from conformance.model import (
    Audio,
    ErrorEvent,
    ErrorInfo,
    Finish,
    FinishReason,
    JSONObject,
    Reasoning,
    Request,
    Response,
    StreamEvent,
    Text,
    TextDelta,
    Tool,
    ToolCallEnd,
    ToolCallStart,
    ToolResult,
    Usage,
    UsageEvent,
)
from conformance.selftest._wrap import (
    Patch,
    decoded_events,
    map_ndjson,
    map_sse_data,
    rename_calls,
    request_body,
    response_body,
    salvage_partial_json,
    stream_bytes,
    typed_error,
)

__all__ = [
    "args_in_first_chunk_dropped",
    "arguments_as_json_string",
    "audio_as_text_silently",
    "bad_json_to_empty",
    "blank_thinking_signature",
    "broken_stream_calls_valid",
    "chat_length_as_stop",
    "clears_chunk_list",
    "client_tool_search_dropped",
    "concat_repeated_names",
    "context_window_as_stop",
    "cumulative_args_as_deltas",
    "default_temperature_sent",
    "done_without_finish_incomplete",
    "drop_gemini_call_ids",
    "drop_input_schema",
    "drop_is_error",
    "drop_parallel_false",
    "drop_reasoning_items",
    "drop_required_tool_choice",
    "drop_structured_content",
    "drop_text_fallback",
    "drop_thought_signatures",
    "earlier_calls_reserialised",
    "edits_response_body",
    "empty_args_error",
    "finish_read_as",
    "foreign_reasoning_sent",
    "is_error_as_result",
    "item_id_as_call_id",
    "last_name_wins",
    "lose_second_call_id",
    "malformed_call_as_stop",
    "max_tokens_default_changed",
    "merge_parallel_by_index",
    "move_thought_signatures",
    "names_not_mapped_back",
    "no_retry_after",
    "ollama_length_as_stop",
    "ollama_stream_flag_dropped",
    "on_error",
    "on_events",
    "on_request",
    "on_unified_request",
    "other_as_stop",
    "overloaded_as_server",
    "pause_turn_as_stop",
    "pops_tool_schema_key",
    "present_id_opens_call",
    "recitation_as_stop",
    "refusal_as_stop",
    "results_after_text",
    "retry_after_ms_ignored",
    "retry_delay_body_ignored",
    "stop_sequence_as_other",
    "stop_with_calls_as_stop",
    "strict_false_dropped",
    "text_dropped_with_calls",
    "tool_turn_reasoning_dropped_at_user_turn",
    "tools_reordered_after_first_turn",
    "unavailable_as_server",
    "unflushed",
    "usage_cache_ignored",
    "usage_cache_write_ignored",
    "usage_dropped",
    "usage_first_only",
    "usage_summed",
    "utf8_per_chunk",
]

# --------------------------------------------------------------------------------------------
# Shared rewrites
# --------------------------------------------------------------------------------------------


def _chat_fragments(chunk: Any) -> list[dict[str, Any]]:
    """The ``tool_calls`` fragments of a ``chat.completion.chunk``."""
    if not isinstance(chunk, dict):
        return []
    fragments: list[dict[str, Any]] = []
    for choice in chunk.get("choices") or ():
        delta = choice.get("delta") if isinstance(choice, dict) else None
        if isinstance(delta, dict):
            fragments += [f for f in delta.get("tool_calls") or () if isinstance(f, dict)]
    return fragments


def _finish_reason(old: str, new: str) -> Callable[[Any], Any]:
    """A Chat body or chunk whose ``finish_reason`` ``old`` reads ``new``."""

    def rewrite(value: Any) -> Any:
        for choice in value.get("choices") or () if isinstance(value, dict) else ():
            if isinstance(choice, dict) and choice.get("finish_reason") == old:
                choice["finish_reason"] = new
        return value

    return rewrite


EventRewrite = Callable[[list[StreamEvent], Sequence[Tool]], list[StreamEvent]]
"""A decoding bug's rewrite of both decoders' events (``on_events``)."""


def on_events(rewrite: EventRewrite) -> Callable[[Adapter], Patch]:
    """A decoding bug: both decoders' events go through ``rewrite``."""
    return lambda adapter: decoded_events(adapter, rewrite)


def finish_read_as(provider_reason: str, reason: FinishReason) -> EventRewrite:
    """A finish-reason bug: the finish the wire spells ``provider_reason`` is read as ``reason`` (a
    spelling missing from the adapter's map falls through), every other event as it was."""

    def rewrite(events: list[StreamEvent], tools: Sequence[Tool]) -> list[StreamEvent]:
        return [
            Finish(reason, e.provider_reason) if isinstance(e, Finish) and e.provider_reason == provider_reason else e
            for e in events
        ]

    return rewrite


def on_error(rewrite: Callable[[ErrorInfo], ErrorInfo]) -> Callable[[Adapter], Patch]:
    """An error-typing bug: the typed error goes through ``rewrite``."""
    return lambda adapter: typed_error(adapter, rewrite)


def on_request(rewrite: Callable[[JSONObject], JSONObject]) -> Callable[[Adapter], Patch]:
    """A request bug: the wire body goes through ``rewrite``."""
    return lambda adapter: request_body(adapter, rewrite)


def names_not_mapped_back(adapter: Adapter) -> Patch:
    """Calls keep the wire name the adapter sent (``files_read`` for ``files.read``), not the MCP name."""

    def rewrite(events: list[StreamEvent], tools: Sequence[Tool]) -> list[StreamEvent]:
        names = adapter.tools_to_wire(tools).names
        return rename_calls(events, lambda start: (start.tool_call_id, names.wire(start.tool_call_name)))

    return decoded_events(adapter, rewrite)


# --------------------------------------------------------------------------------------------
# OpenAI Chat
# --------------------------------------------------------------------------------------------


def merge_parallel_by_index(adapter: Adapter) -> Patch:
    """Every fragment at index 0 (as Ollama's OpenAI endpoint sends them), read by an accumulator
    keyed by index alone: a later fragment's id and name are taken for repeats of the first call."""

    def rewrite(data: bytes) -> bytes:
        seen = False

        def chunk(value: Any) -> Any:
            nonlocal seen
            for fragment in _chat_fragments(value):
                fragment["index"] = 0
                if seen:
                    fragment.pop("id", None)
                    fragment.pop("type", None)
                    if isinstance(fragment.get("function"), dict):
                        fragment["function"].pop("name", None)
                seen = True
            return value

        return map_sse_data(data, chunk)

    return stream_bytes(adapter, rewrite)


def concat_repeated_names(adapter: Adapter) -> Patch:
    """``name += fragment.name`` per index: a name repeated on every fragment is concatenated."""

    def rewrite(data: bytes) -> bytes:
        joined: dict[Any, str] = {}

        def collect(value: Any) -> Any:
            for fragment in _chat_fragments(value):
                name = (fragment.get("function") or {}).get("name")
                if isinstance(name, str) and name:
                    key = fragment.get("index")
                    joined[key] = joined.get(key, "") + name
            return value

        map_sse_data(data, collect)
        named: set[Any] = set()

        def apply(value: Any) -> Any:
            for fragment in _chat_fragments(value):
                function = fragment.get("function")
                key = fragment.get("index")
                if isinstance(function, dict) and function.get("name") and key not in named:
                    function["name"] = joined[key]
                    named.add(key)
            return value

        return map_sse_data(data, apply)

    return stream_bytes(adapter, rewrite)


def last_name_wins(adapter: Adapter) -> Patch:
    """``name = fragment.name`` whenever a fragment has a string name: an empty name on a later
    fragment overwrites the real one (E4, huggingface/tau#715)."""

    def rewrite(data: bytes) -> bytes:
        last: dict[Any, str] = {}

        def collect(value: Any) -> Any:
            for fragment in _chat_fragments(value):
                name = (fragment.get("function") or {}).get("name")
                if isinstance(name, str):
                    last[fragment.get("index")] = name
            return value

        map_sse_data(data, collect)

        def apply(value: Any) -> Any:
            for fragment in _chat_fragments(value):
                function = fragment.get("function")
                if isinstance(function, dict) and isinstance(function.get("name"), str):
                    function["name"] = last[fragment.get("index")]
            return value

        return map_sse_data(data, apply)

    return stream_bytes(adapter, rewrite)


def present_id_opens_call(adapter: Adapter) -> Patch:
    """A fragment that carries the ``id`` key opens a new call even when the id is ``""`` or null (the
    check is "is the key set", not "is the id new"): each continuation of DashScope, vLLM or SGLang
    then starts a call of its own (E4, symfony/ai#2220). Modelled by giving those ids a fresh value."""

    def rewrite(data: bytes) -> bytes:
        count = 0

        def chunk(value: Any) -> Any:
            nonlocal count
            for fragment in _chat_fragments(value):
                if "id" in fragment and not fragment["id"]:
                    count += 1
                    fragment["id"] = f"call_continuation{count}"
            return value

        return map_sse_data(data, chunk)

    return stream_bytes(adapter, rewrite)


def args_in_first_chunk_dropped(adapter: Adapter) -> Patch:
    """The fragment that opens a call (id, name) is read for its header only: its arguments are lost."""

    def rewrite(data: bytes) -> bytes:
        opened: set[Any] = set()

        def chunk(value: Any) -> Any:
            for fragment in _chat_fragments(value):
                key = fragment.get("index")
                if key in opened:
                    continue
                opened.add(key)
                if isinstance(fragment.get("function"), dict) and "arguments" in fragment["function"]:
                    fragment["function"]["arguments"] = ""
            return value

        return map_sse_data(data, chunk)

    return stream_bytes(adapter, rewrite)


def bad_json_to_empty(events: list[StreamEvent], tools: Sequence[Tool]) -> list[StreamEvent]:
    """``try: json.loads(raw) except: {}``: unparseable arguments become a valid empty call."""
    out: list[StreamEvent] = []
    for event in events:
        if (
            isinstance(event, ToolCallEnd)
            and event.arguments_error is not None
            and parse_arguments(event.tool_call_arguments_complete)[0] is None
        ):
            event = ToolCallEnd(event.tool_call_id, event.tool_call_arguments_complete, {}, None)
        out.append(event)
    return out


def lose_second_call_id(events: list[StreamEvent], tools: Sequence[Tool]) -> list[StreamEvent]:
    """The second call of a reply comes out with an empty id."""
    return rename_calls(events, lambda s: ("" if s.index == 1 else s.tool_call_id, s.tool_call_name))


def utf8_per_chunk(chunk: bytes) -> bytes:
    """Each network chunk decoded on its own (``errors="replace"``), not with a stateful decoder."""
    return chunk.decode("utf-8", "replace").encode("utf-8")


def chat_length_as_stop(adapter: Adapter) -> Patch:
    rewrite = _finish_reason("length", "stop")
    return {
        **response_body(adapter, rewrite),
        **stream_bytes(adapter, lambda data: map_sse_data(data, rewrite)),
    }


def drop_required_tool_choice(body: JSONObject) -> JSONObject:
    if body.get("tool_choice") == "required":
        del body["tool_choice"]
    return body


# --------------------------------------------------------------------------------------------
# OpenAI Responses
# --------------------------------------------------------------------------------------------


def cumulative_args_as_deltas(adapter: Adapter) -> Patch:
    """The complete arguments of ``function_call_arguments.done`` (a snapshot) are appended to the
    buffer as one more delta, and the buffer is trusted over ``output_item.done``."""

    def chunk(value: Any) -> Any:
        if not isinstance(value, dict):
            return value
        if value.get("type") == "response.function_call_arguments.done":
            delta = {k: v for k, v in value.items() if k != "arguments"}
            delta["type"] = "response.function_call_arguments.delta"
            delta["delta"] = value.get("arguments", "")
            return delta
        item = value.get("item")
        if (
            value.get("type") == "response.output_item.done"
            and isinstance(item, dict)
            and item.get("type") == "function_call"
        ):
            item.pop("arguments", None)
        return value

    return stream_bytes(adapter, lambda data: map_sse_data(data, chunk))


def drop_parallel_false(body: JSONObject) -> JSONObject:
    if body.get("parallel_tool_calls") is False:
        del body["parallel_tool_calls"]
    return body


def text_dropped_with_calls(events: list[StreamEvent], tools: Sequence[Tool]) -> list[StreamEvent]:
    """A reply that holds calls keeps only the calls: its text is dropped."""
    if not any(isinstance(e, ToolCallStart) for e in events):
        return events
    return [e for e in events if not isinstance(e, TextDelta)]


def item_id_as_call_id(events: list[StreamEvent], tools: Sequence[Tool]) -> list[StreamEvent]:
    """The call's item id (``fc_…``) is taken for its ``call_id`` (E12)."""
    return rename_calls(events, lambda s: (str(s.provider_details.get("item_id") or s.tool_call_id), s.tool_call_name))


def no_retry_after(info: ErrorInfo) -> ErrorInfo:
    return replace(info, retry_after=None)


# --------------------------------------------------------------------------------------------
# Anthropic
# --------------------------------------------------------------------------------------------


def _blocks(body: JSONObject, role: str = "user") -> Iterable[list[Any]]:
    for message in body.get("messages") or ():
        if isinstance(message, dict) and message.get("role") == role and isinstance(message.get("content"), list):
            yield message["content"]


def drop_is_error(body: JSONObject) -> JSONObject:
    for content in _blocks(body):
        for block in content:
            if isinstance(block, dict) and block.get("type") == "tool_result":
                block.pop("is_error", None)
    return body


def results_after_text(body: JSONObject) -> JSONObject:
    for content in _blocks(body):
        results = [b for b in content if isinstance(b, dict) and b.get("type") == "tool_result"]
        others = [b for b in content if not (isinstance(b, dict) and b.get("type") == "tool_result")]
        content[:] = others + results
    return body


def overloaded_as_server(info: ErrorInfo) -> ErrorInfo:
    """Kinds from the HTTP status only, where 529 (Anthropic's overloaded) is just another 5xx."""
    return replace(info, kind="server") if info.status == 529 else info


def drop_input_schema(body: JSONObject) -> JSONObject:
    for tool in body.get("tools") or ():
        if isinstance(tool, dict):
            tool.pop("input_schema", None)
    return body


def empty_args_error(events: list[StreamEvent], tools: Sequence[Tool]) -> list[StreamEvent]:
    """``json.loads("")`` fails: a no-argument call whose argument text is empty is an error."""
    out: list[StreamEvent] = []
    for event in events:
        if (
            isinstance(event, ToolCallEnd)
            and event.arguments_error is None
            and not event.tool_call_arguments_complete.strip()
        ):
            why = "invalid JSON in arguments: Expecting value at position 0"
            event = ToolCallEnd(event.tool_call_id, event.tool_call_arguments_complete, None, why)
        out.append(event)
    return out


def broken_stream_calls_valid(events: list[StreamEvent], tools: Sequence[Tool]) -> list[StreamEvent]:
    """Calls cut off by a broken stream are finalized from their partial JSON (closed up) as valid."""
    if not any(isinstance(e, ErrorEvent) for e in events):
        return events
    out: list[StreamEvent] = []
    for event in events:
        if isinstance(event, ToolCallEnd) and event.arguments_error is not None:
            raw = event.tool_call_arguments_complete
            event = ToolCallEnd(event.tool_call_id, raw, salvage_partial_json(raw), None)
        out.append(event)
    return out


# --------------------------------------------------------------------------------------------
# Gemini
# --------------------------------------------------------------------------------------------


stop_with_calls_as_stop = finish_read_as("STOP", "stop")
"""``STOP`` maps to ``stop`` even when the reply holds calls (Gemini has no tool-call reason)."""


def is_error_as_result(body: JSONObject) -> JSONObject:
    """A failed tool result goes out as ``response.result``, like a successful one."""
    for content in body.get("contents") or ():
        for part in content.get("parts") or () if isinstance(content, dict) else ():
            response = (part.get("functionResponse") or {}).get("response") if isinstance(part, dict) else None
            if isinstance(response, dict) and "error" in response and "result" not in response:
                response["result"] = response.pop("error")
    return body


def drop_gemini_call_ids(body: JSONObject) -> JSONObject:
    """The history goes out without ``id`` on its ``functionCall`` and ``functionResponse`` parts,
    although the provider gave the calls ids."""
    for content in body.get("contents") or ():
        for part in content.get("parts") or () if isinstance(content, dict) else ():
            for key in ("functionCall", "functionResponse"):
                carrier = part.get(key) if isinstance(part, dict) else None
                if isinstance(carrier, dict):
                    carrier.pop("id", None)
    return body


_EVENT_END = re.compile(rb"\r\n\r\n|\n\n|\r\r")


def unflushed(data: bytes) -> bytes:
    """The decoder is never flushed at the end of the stream: a last event without its blank line
    is lost."""
    ends = list(_EVENT_END.finditer(data))
    return data[: ends[-1].end()] if ends else b""


# --------------------------------------------------------------------------------------------
# Ollama
# --------------------------------------------------------------------------------------------


def arguments_as_json_string(body: JSONObject) -> JSONObject:
    """A replayed call's ``arguments`` go out as JSON text, as on the OpenAI wire."""
    for message in body.get("messages") or ():
        for call in message.get("tool_calls") or () if isinstance(message, dict) else ():
            function = call.get("function") if isinstance(call, dict) else None
            if isinstance(function, dict) and isinstance(function.get("arguments"), dict):
                function["arguments"] = json.dumps(function["arguments"], ensure_ascii=False)
    return body


def ollama_length_as_stop(adapter: Adapter) -> Patch:
    def rewrite(value: Any) -> Any:
        if isinstance(value, dict) and value.get("done_reason") == "length":
            value["done_reason"] = "stop"
        return value

    return {
        **response_body(adapter, rewrite),
        **stream_bytes(adapter, lambda data: map_ndjson(data, rewrite)),
    }


def unavailable_as_server(info: ErrorInfo) -> ErrorInfo:
    """503 (Ollama's "server busy", queue full) taken for a plain server error."""
    return replace(info, kind="server") if info.status == 503 else info


def blank_thinking_signature(body: JSONObject) -> JSONObject:
    """Replayed thinking blocks go out with an empty ``signature`` (the key kept, its value lost, as
    a converter that rebuilds the block sends it; Anthropic answers 400)."""
    for message in body.get("messages") or ():
        for block in (message.get("content") if isinstance(message, dict) else None) or ():
            if isinstance(block, dict) and block.get("type") == "thinking":
                block["signature"] = ""
    return body


def drop_thought_signatures(body: JSONObject) -> JSONObject:
    """The history's parts go out without the ``thoughtSignature`` the provider put on them."""
    for content in body.get("contents") or ():
        for part in content.get("parts") or () if isinstance(content, dict) else ():
            if isinstance(part, dict):
                part.pop("thoughtSignature", None)
                part.pop("thought_signature", None)
    return body


def move_thought_signatures(body: JSONObject) -> JSONObject:
    """Each ``thoughtSignature`` of a replayed ``functionCall`` part moves to the next part of its
    turn (the previous one for the last part): the signature goes back, on the wrong part."""
    for content in body.get("contents") or ():
        parts = content.get("parts") if isinstance(content, dict) else None
        if not isinstance(parts, list) or len(parts) < 2:
            continue
        moves = [
            n
            for n, part in enumerate(parts)
            if isinstance(part, dict) and "functionCall" in part and "thoughtSignature" in part
        ]
        for n in moves:
            target = parts[n + 1] if n + 1 < len(parts) else parts[n - 1]
            if isinstance(target, dict):
                target["thoughtSignature"] = parts[n].pop("thoughtSignature")
    return body


def foreign_reasoning_sent(adapter: Adapter) -> Patch:
    """Reasoning another wire produced is sent as if this wire had produced it (the ``source`` is not
    looked at), so this provider is asked to verify a signature it never made."""
    real = adapter.request_to_wire

    def request_to_wire(request: Request) -> WireRequest:
        def part(p: Any) -> Any:
            return replace(p, source=adapter.wire_format) if isinstance(p, Reasoning) else p

        messages = tuple(replace(m, parts=tuple(part(p) for p in m.parts)) for m in request.messages)
        return real(replace(request, messages=messages))

    return {"request_to_wire": request_to_wire}


def tool_turn_reasoning_dropped_at_user_turn(body: JSONObject) -> JSONObject:
    """At a new user turn, the ``reasoning_content`` of every earlier assistant message is cleared,
    tool turns included (the V3.2-era ``clear_reasoning_content()``; DeepSeek V4 answers 400)."""
    messages = body.get("messages")
    if not isinstance(messages, list):
        return body
    last_user = max((n for n, m in enumerate(messages) if isinstance(m, dict) and m.get("role") == "user"), default=-1)
    for m in messages[:last_user]:
        if isinstance(m, dict) and m.get("role") == "assistant":
            m.pop("reasoning_content", None)
    return body


def tools_reordered_after_first_turn(body: JSONObject) -> JSONObject:
    """Once the conversation holds an assistant turn, the tools go out in reverse order (a library
    that rebuilds its tool list from a dict or set each turn): the cacheable prefix moves."""
    messages = body.get("messages", body.get("contents", body.get("input")))
    later = isinstance(messages, list) and any(
        isinstance(m, dict) and m.get("role") in ("assistant", "model") for m in messages
    )
    if later and isinstance(body.get("tools"), list):
        body["tools"] = list(reversed(body["tools"]))
    return body


def earlier_calls_reserialised(body: JSONObject) -> JSONObject:
    """The arguments of every assistant turn before the last one go out re-serialised (``json.dumps``
    with its default ``", "`` and ``": "`` separators) instead of as the provider sent them, while the
    newest turn is sent as received: each request rewrites what the previous one sent."""
    messages = body.get("messages")
    if not isinstance(messages, list):
        return body
    turns = [m for m in messages if isinstance(m, dict) and m.get("role") == "assistant" and m.get("tool_calls")]
    for m in turns[:-1]:
        for call in m["tool_calls"]:
            function = call.get("function") if isinstance(call, dict) else None
            if isinstance(function, dict) and isinstance(function.get("arguments"), str):
                try:
                    function["arguments"] = json.dumps(json.loads(function["arguments"]))
                except ValueError:
                    continue
    return body


def drop_reasoning_items(body: JSONObject) -> JSONObject:
    """The Responses input goes out without the reasoning items of earlier turns."""
    items = body.get("input")
    if isinstance(items, list):
        body["input"] = [item for item in items if not (isinstance(item, dict) and item.get("type") == "reasoning")]
    return body


def retry_after_ms_ignored(adapter: Adapter) -> Patch:
    """Only ``retry-after`` (whole seconds) is read: the exact ``retry-after-ms`` is ignored."""
    real = adapter.error_from_wire

    def error_from_wire(status: int, headers: Any, body: Any) -> Any:
        kept = {name: value for name, value in dict(headers).items() if name.lower() != "retry-after-ms"}
        return real(status, kept, body)

    return {"error_from_wire": error_from_wire}


def retry_delay_body_ignored(adapter: Adapter) -> Patch:
    """Only the ``retry-after`` header is read: a delay given only as ``RetryInfo.retryDelay`` in the
    error body is lost."""
    real = adapter.error_from_wire

    def strip(value: Any) -> Any:
        if isinstance(value, list):
            return [strip(item) for item in value]
        error = value.get("error") if isinstance(value, dict) else None
        if isinstance(error, dict) and isinstance(error.get("details"), list):
            error["details"] = [d for d in error["details"] if not (isinstance(d, dict) and "retryDelay" in d)]
        return value

    def error_from_wire(status: int, headers: Any, body: Any) -> Any:
        try:
            parsed = json.loads(body) if isinstance(body, (bytes, str)) else json.loads(json.dumps(body))
        except ValueError:
            return real(status, headers, body)
        return real(status, headers, json.dumps(strip(parsed)).encode())

    return {"error_from_wire": error_from_wire}


# --------------------------------------------------------------------------------------------
# Mutating the caller's inputs (translation.no_mutation)
# --------------------------------------------------------------------------------------------


def pops_tool_schema_key(adapter: Adapter) -> Patch:
    """``request_to_wire`` sends the right body, then pops ``required`` from the caller's first
    tool schema (an in-place "strict mode" clean-up on the caller's dict)."""
    real = adapter.request_to_wire

    def request_to_wire(request: Request) -> WireRequest:
        wire = real(request)
        for tool in request.tools:
            schema = tool.input_schema
            if isinstance(schema, dict) and "required" in schema:
                schema.pop("required")
                break
        return wire

    return {"request_to_wire": request_to_wire}


def clears_chunk_list(adapter: Adapter) -> Patch:
    """``stream_from_wire`` empties the caller's list of chunks once it has read them (a buffer
    reused as the input)."""
    real = adapter.stream_from_wire

    def stream_from_wire(chunks: Iterable[bytes], *, tools: Sequence[Tool] = ()) -> Iterator[StreamEvent]:
        yield from real(chunks, tools=tools)
        if isinstance(chunks, list):
            chunks.clear()

    return {"stream_from_wire": stream_from_wire}


def edits_response_body(adapter: Adapter) -> Patch:
    """``response_from_wire`` decodes correctly, then pops the caller's body ``usage`` (or, without
    one, adds a key): the body the caller keeps for its logs has changed."""
    real = adapter.response_from_wire

    def response_from_wire(body: Mapping[str, Any], *, tools: Sequence[Tool] = ()) -> Response:
        response = real(body, tools=tools)
        missing = isinstance(body, dict) and body.pop("usage", None) is None
        if missing and isinstance(body, dict) and body.pop("usageMetadata", None) is None:
            body["_decoded"] = True
        return response

    return {"response_from_wire": response_from_wire}


def done_without_finish_incomplete(data: bytes) -> bytes:
    """The stream with its ``data: [DONE]`` cut when no chunk sent a non-null ``finish_reason``:
    the reader takes such a stream for one cut short (the rule before issue 15 part 5)."""
    if re.search(rb'"finish_reason":\s*"', data):
        return data
    return re.sub(rb"data: ?\[DONE\][^\n]*\n*", b"", data)


def client_tool_search_dropped(events: list[StreamEvent], tools: Sequence[Tool]) -> list[StreamEvent]:
    """The calls of Responses ``tool_search_call`` items the client must run are dropped with the
    server-run items (their start, chunks and end)."""
    dropped = {e.tool_call_id for e in events if isinstance(e, ToolCallStart) and e.tool_call_name == "tool_search"}
    return [e for e in events if getattr(e, "tool_call_id", None) not in dropped]


# ---- requests that change where no ``wire:`` expectation looks (translation.recorded_request) ----------


def default_temperature_sent(body: JSONObject) -> JSONObject:
    """A sampling default (``temperature: 1``) sent on every request though the caller set none."""
    body["temperature"] = 1
    return body


def max_tokens_default_changed(body: JSONObject) -> JSONObject:
    """The default ``max_tokens`` (required on Anthropic) changed from the recorded 1024 to 4096."""
    if body.get("max_tokens") == 1024:
        body["max_tokens"] = 4096
    return body


def ollama_stream_flag_dropped(body: JSONObject) -> JSONObject:
    """``stream: false`` left out of a non-streamed request (Ollama streams by default, §5d) while the
    replayed answer stays whole."""
    if body.get("stream") is False:
        del body["stream"]
    return body


def strict_false_dropped(body: JSONObject) -> JSONObject:
    """``strict: false`` left off each Responses function tool: the API then defaults to strict mode
    (platform.openai.com/docs/api-reference/responses/create, ``tools[].strict``)."""
    for tool in body.get("tools") or []:
        if isinstance(tool, dict) and tool.get("strict") is False:
            del tool["strict"]
    return body


def usage_dropped(events: list[StreamEvent], tools: Sequence[Tool]) -> list[StreamEvent]:
    """Usage is never decoded."""
    return [e for e in events if not isinstance(e, UsageEvent)]


def usage_first_only(events: list[StreamEvent], tools: Sequence[Tool]) -> list[StreamEvent]:
    """Only the first usage report is kept (Anthropic: message_start's, not the cumulative message_delta)."""
    first = next((e for e in events if isinstance(e, UsageEvent)), None)
    return [e for e in events if not isinstance(e, UsageEvent) or e is first]


def usage_summed(events: list[StreamEvent], tools: Sequence[Tool]) -> list[StreamEvent]:
    """Cumulative usage reports are added up instead of the last one replacing the others."""
    out: list[StreamEvent] = []
    total: Usage | None = None
    for e in events:
        if isinstance(e, UsageEvent):
            total = e.usage if total is None else _added(total, e.usage)
            e = UsageEvent(total)
        out.append(e)
    return out


def _added(a: Usage, b: Usage) -> Usage:
    def plus(x: int | None, y: int | None) -> int | None:
        return None if x is None and y is None else (x or 0) + (y or 0)

    return Usage(
        input_tokens=plus(a.input_tokens, b.input_tokens),
        output_tokens=plus(a.output_tokens, b.output_tokens),
        total_tokens=plus(a.total_tokens, b.total_tokens),
        cache_read_tokens=plus(a.cache_read_tokens, b.cache_read_tokens),
        cache_write_tokens=plus(a.cache_write_tokens, b.cache_write_tokens),
        reasoning_tokens=plus(a.reasoning_tokens, b.reasoning_tokens),
    )


def usage_cache_ignored(events: list[StreamEvent], tools: Sequence[Tool]) -> list[StreamEvent]:
    """Cache read/write token counts are not decoded."""
    return [
        UsageEvent(replace(e.usage, cache_read_tokens=None, cache_write_tokens=None))
        if isinstance(e, UsageEvent)
        else e
        for e in events
    ]


def usage_cache_write_ignored(events: list[StreamEvent], tools: Sequence[Tool]) -> list[StreamEvent]:
    """The cache-write token count is not decoded (an adapter written before the field existed)."""
    return [UsageEvent(replace(e.usage, cache_write_tokens=None)) if isinstance(e, UsageEvent) else e for e in events]


refusal_as_stop = finish_read_as("refusal", "stop")
"""Anthropic's ``refusal`` stop reason is missing from the map and falls through to ``stop``: a
reply the safety filter stopped looks like a normal answer (BerriAI/litellm#23899)."""


malformed_call_as_stop = finish_read_as("MALFORMED_FUNCTION_CALL", "stop")
"""Gemini's ``MALFORMED_FUNCTION_CALL`` falls through to ``stop``: a turn whose call never arrived
looks like an ordinary empty answer (NousResearch/hermes-agent#83886)."""


context_window_as_stop = finish_read_as("model_context_window_exceeded", "stop")
"""Anthropic's ``model_context_window_exceeded`` is missing from the map and falls through to
``stop``: a reply the context window cut looks complete (mozilla-ai/any-llm#1306)."""


recitation_as_stop = finish_read_as("RECITATION", "stop")
"""Gemini's ``RECITATION`` is missing from the map and falls through to ``stop``: a reply the
recitation check stopped looks like a complete empty answer (BaseIntelligence/bounty-challenge#19761)."""


stop_sequence_as_other = finish_read_as("stop_sequence", "other")
"""Anthropic's ``stop_sequence`` is missing from the map and falls through to ``other``: a reply
that ended at the caller's stop sequence looks like an unknown stop (microsoft/semantic-kernel#14382)."""


other_as_stop = finish_read_as("OTHER", "stop")
"""Gemini's ``OTHER`` is read as ``stop``: a reply the API stopped for an unspecified reason looks
like a complete empty answer (BerriAI/litellm#40477 reported it as end_turn)."""


pause_turn_as_stop = finish_read_as("pause_turn", "stop")
"""Anthropic's ``pause_turn`` is read as ``stop``: a server-tool turn the API paused looks
finished, so the client never sends it back to continue (google/adk-python#5394 proposed STOP)."""


def stale_tool_list(adapter: Adapter) -> Patch:
    """The tools of a conversation's first request are offered on every later one: a tool the MCP
    server added after ``notifications/tools/list_changed`` is missing, a removed one still offered,
    a changed schema the old one (a client that builds its tool list once per conversation)."""
    real = adapter.request_to_wire
    first: list[Request] = []

    def request_to_wire(request: Request) -> WireRequest:
        if first and request.messages[: len(first[0].messages)] == first[0].messages:
            return real(replace(request, tools=first[0].tools))  # the same conversation: its first tools
        first[:] = [request]
        return real(request)

    return {"request_to_wire": request_to_wire}


# --------------------------------------------------------------------------------------------
# MCP tool results (issue 31: docs/mcp.md, "What the model receives")
# --------------------------------------------------------------------------------------------


def on_unified_request(rewrite: Callable[[Request], Request]) -> Callable[[Adapter], Patch]:
    """A bug before the wire: the unified request goes through ``rewrite``, then the reference
    ``request_to_wire`` (a client that builds its tool results wrong before any adapter sees them)."""

    def patch(adapter: Adapter) -> Patch:
        real = adapter.request_to_wire

        def request_to_wire(request: Request) -> WireRequest:
            return real(rewrite(request))

        return {"request_to_wire": request_to_wire}

    return patch


def _each_result(request: Request, rewrite: Callable[[ToolResult], ToolResult]) -> Request:
    messages = tuple(
        replace(m, parts=tuple(rewrite(p) if isinstance(p, ToolResult) else p for p in m.parts))
        for m in request.messages
    )
    return replace(request, messages=messages)


def _structured(result: ToolResult) -> tuple[bool, Any]:
    """Whether the result has ``structuredContent`` (the bridge keeps it in ``provider_details["mcp"]``), and it."""
    mcp = result.provider_details.get("mcp")
    if isinstance(mcp, Mapping) and "structured_content" in mcp:
        return True, mcp["structured_content"]
    return False, None


def drop_structured_content(request: Request) -> Request:
    """A result's ``structuredContent`` is not carried to the model: only its content blocks go (a
    result with structured content alone reaches the model empty)."""

    def strip(result: ToolResult) -> ToolResult:
        if not _structured(result)[0]:
            return result
        mcp = {k: v for k, v in result.provider_details["mcp"].items() if k != "structured_content"}
        return replace(result, provider_details={**result.provider_details, "mcp": mcp})

    return _each_result(request, strip)


def drop_text_fallback(request: Request) -> Request:
    """With ``structuredContent``, the result's text blocks are dropped and the structured content goes
    as its ``JSON.stringify`` instead: the server's own text never reaches the model."""

    def swap(result: ToolResult) -> ToolResult:
        found, value = _structured(result)
        if not found:
            return result
        others = tuple(item for item in result.content if not isinstance(item, Text))
        text = Text(text=json.dumps(value, ensure_ascii=False, separators=(",", ":")))
        return replace(result, content=(text, *others))

    return _each_result(request, swap)


def audio_as_text_silently(request: Request) -> Request:
    """An audio block goes as the JSON text of the MCP block (its base64 and all), and nothing says
    the audio was not sent as audio."""

    def as_text(result: ToolResult) -> ToolResult:
        if not any(isinstance(item, Audio) for item in result.content):
            return result
        content = tuple(
            Text(text=json.dumps({"type": "audio", "data": item.data, "mimeType": item.media_type}))
            if isinstance(item, Audio)
            else item
            for item in result.content
        )
        return replace(result, content=content)

    return _each_result(request, as_text)
