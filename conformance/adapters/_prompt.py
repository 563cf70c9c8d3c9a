"""Shared machinery of the prompt adapters (``qwen``, ``hermes``, ``function_call``).

A prompt adapter speaks the OpenAI-compatible chat wire (``POST /v1/chat/completions``) without
the ``tools`` field: the tools are rendered into the system prompt, calls and results of the
history are rendered as text in the format, and the model's reply text is parsed back into calls.
The chat wire itself (body fields, SSE framing, usage, errors) is ``openai_chat``'s: requests are
built by ``openai_chat.request_to_wire`` from a plain text-only request, and responses and
streams are decoded by ``openai_chat`` first, then their text goes through a reply parser
(``_prompt_parse``). Streaming and non-streaming share that path and ``assembly.fold``.

Call ids: the formats carry none, so ids are synthetic and derived from the call's content
(``synthetic_call_id(adapter, ordinal, name, arguments)``), which makes the id of a call in a
response equal the id ``request_from_wire`` gives the same call replayed in a later request. Tool
results carry no id either: they answer the calls of the assistant message before them by
position, so a tool message must answer each of those calls exactly once (its results are put in
call order; anything else raises ``UnsupportedContentError``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from conformance.adapters import openai_chat
from conformance.adapters._prompt_parse import CALL_TEXT, ReplyParser, TagParser, json_text
from conformance.adapters._tool_output import WIRE_CARRIES, request_view
from conformance.adapters.base import WireRequest, result_texts, synthetic_call_id
from conformance.assembly import fold
from conformance.errors import UnsupportedContentError
from conformance.model import (
    ErrorEvent,
    Finish,
    Message,
    Part,
    Reasoning,
    ReasoningDelta,
    Request,
    Response,
    StreamEvent,
    Text,
    TextDelta,
    Tool,
    ToolCall,
    ToolCallChunk,
    ToolCallEnd,
    ToolCallStart,
    ToolResult,
    UsageEvent,
)

__all__ = [
    "ERROR_PREFIX",
    "TagFormat",
    "assistant_text",
    "check_request",
    "merge_system",
    "only_text",
    "ordered_results",
    "parse_text",
    "read_request",
    "response_from_body",
    "result_message",
    "result_text",
    "split_system",
    "stream_from_bytes",
    "tag_history_from_wire",
    "tag_history_to_wire",
    "tag_request_from_wire",
    "tag_request_to_wire",
    "tool_runs",
    "wire_request",
]

ERROR_PREFIX = "Error: "
"""These formats have no error flag on a result (wire-formats.md §8 "result.isError ✗ (text)"):
a failed tool's text carries this prefix, as ``openai_chat`` does, and is read back from it."""

# --------------------------------------------------------------------------------------------
# Requests
# --------------------------------------------------------------------------------------------


def check_request(request: Request, adapter: str) -> bool:
    """Whether the tools go into the prompt; raises for what a prompt format cannot express.

    ``tool_choice`` ``none`` omits the tools (wire-formats.md §8, "tool_choice none: omit tools");
    ``required`` or a named tool would need the reply to be forced, which these adapters do not do;
    ``parallel_tool_calls: false`` cannot be enforced (the model may still write several calls).
    """
    choice = request.tool_choice
    if choice not in (None, "auto", "none"):
        what = "'required'" if choice == "required" else f"a named tool ({choice!r})"
        raise UnsupportedContentError(
            f"{adapter}: tool_choice {what} cannot be forced through a prompt; use 'auto' or 'none'"
        )
    if request.parallel_tool_calls is False:
        raise UnsupportedContentError(
            f"{adapter}: parallel_tool_calls=false cannot be enforced through a prompt; leave it unset"
        )
    return bool(request.tools) and choice != "none"


def merge_system(system: str | None, block: str | None) -> str | None:
    """The tools block appended to the caller's system prompt with a blank line (Qwen-Agent
    ``preprocess_fncall_messages``; the Qwen2.5 chat template), or alone."""
    if block is None:
        return system
    return block if system is None else f"{system}\n\n{block}"


def split_system(system: str | None, header: str) -> tuple[str | None, str | None]:
    """``merge_system`` reversed: ``(caller's system, tools block)``; the block is the last one
    starting with ``header``."""
    if system is None:
        return None, None
    if system.startswith(header):
        return None, system
    at = system.rfind("\n\n" + header)
    if at == -1:
        return system, None
    return system[:at], system[at + 2 :]


def wire_request(
    request: Request, *, system: str | None, messages: Sequence[Message], stop: Sequence[str]
) -> WireRequest:
    """The chat body of a text-only request (``openai_chat`` builds it), plus the stop words."""
    plain = Request(
        model=request.model,
        system=system,
        messages=tuple(messages),
        stream=request.stream,
        max_tokens=request.max_tokens,
        provider_details=request.provider_details,
    )
    wire = openai_chat.request_to_wire(plain)
    body = dict(wire.body)
    if stop and "stop" not in body:
        body["stop"] = list(stop)
    return replace(wire, body=body)


def read_request(body: Mapping[str, Any], *, stop: Sequence[str]) -> Request:
    """``wire_request`` reversed as far as the chat wire goes (the format's text is still text)."""
    request = openai_chat.request_from_wire(body)
    details = dict(request.provider_details)
    extra = dict(details.get("extra", {}))
    if stop and extra.get("stop") == list(stop):
        del extra["stop"]
    if extra:
        details["extra"] = extra
    else:
        details.pop("extra", None)
    return replace(request, provider_details=details)


def result_text(result: ToolResult, adapter: str, *, error_prefix: bool = True) -> str:
    """A result's content as text (text items joined by newlines; embedded text resources count
    as text). Images, audio and binary resources cannot travel in a prompt."""
    text = "\n".join(result_texts(result, f"{adapter}: tool results carry text only, not {{kind}} content"))
    return ERROR_PREFIX + text if result.is_error and error_prefix else text


def ordered_results(results: Sequence[Part], calls: Sequence[ToolCall], adapter: str) -> list[ToolResult]:
    """The results of a tool message in the order of the calls they answer."""
    answers: dict[str, ToolResult] = {}
    for part in results:
        if not isinstance(part, ToolResult):
            raise UnsupportedContentError(f"{adapter}: a tool message holds only tool results, not {part.kind}")
        answers[part.call_id] = part
    wanted = [call.id for call in calls]
    if len(answers) != len(results) or sorted(answers) != sorted(wanted):
        raise UnsupportedContentError(
            f"{adapter}: tool results are matched to calls by position in this format, so a tool message must"
            f" answer each call of the assistant message before it exactly once (calls {wanted},"
            f" results {[getattr(p, 'call_id', None) for p in results]})"
        )
    return [answers[call_id] for call_id in wanted]


def result_message(
    answers: Sequence[tuple[str, bool, str | None]], calls: Sequence[ToolCall], adapter: str, where: int
) -> Message:
    """A ``tool`` message from ``(text, is_error, name)`` answers, matched to ``calls`` by position
    (answers beyond the calls get synthetic ids)."""
    parts: list[Part] = []
    for position, (text, is_error, name) in enumerate(answers):
        if position < len(calls):
            call_id, name = calls[position].id, calls[position].name
        else:
            call_id = synthetic_call_id(adapter, "result", where, position)
        content = (Text(text=text),) if text else ()
        parts.append(ToolResult(call_id=call_id, content=content, is_error=is_error, name=name))
    return Message(role="tool", parts=tuple(parts))


def parse_text(text: str, parser: ReplyParser) -> tuple[Part, ...]:
    """Assistant text of the history -> its parts (text and calls), by the reply parser."""
    return fold([*parser.feed(text), *parser.close()]).parts


def only_text(message: Message) -> str | None:
    """The text of a message made of text parts only (None otherwise)."""
    if not all(isinstance(p, Text) for p in message.parts):
        return None
    return "".join(p.text for p in message.parts if isinstance(p, Text))


# --------------------------------------------------------------------------------------------
# Tag formats (hermes, function_call): calls inside the assistant text, results in a user turn
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class TagFormat:
    """How one tag format writes and reads calls and results."""

    adapter: str
    open_tag: str
    close_tag: str
    separator: str
    """Between the tags and the JSON body (``"\\n"`` for ``<tool_call>``)."""
    results_text: Callable[[Sequence[ToolResult]], str]
    read_results: Callable[[str], list[tuple[str, bool, str | None]] | None]
    """A user turn's text -> its results, or None when it is not a results turn."""

    def parser(self) -> TagParser:
        return TagParser(self.adapter, self.open_tag, self.close_tag)

    def call_text(self, call: ToolCall) -> str:
        """A call as the format writes it: ``{"name": ..., "arguments": {...}}`` between the tags;
        a call whose arguments could not be parsed is replayed as received (``CALL_TEXT``), or
        with its raw argument text in place of the object."""
        text = call.provider_details.get(CALL_TEXT)
        if call.arguments is None and isinstance(text, str):
            body = text
        elif call.arguments is None:
            body = "{" + f'"name": {json_text(call.name)}, "arguments": {call.arguments_raw or json_text("")}' + "}"
        else:
            body = "{" + f'"name": {json_text(call.name)}, "arguments": {json_text(call.arguments)}' + "}"
        return f"{self.open_tag}{self.separator}{body}{self.separator}{self.close_tag}"


def assistant_text(message: Message, render_call: Callable[[ToolCall], str], adapter: str) -> str:
    """Text and calls of an assistant message, one per line (reasoning is not replayed)."""
    pieces: list[str] = []
    for part in message.parts:
        if isinstance(part, Text):
            if part.text:
                pieces.append(part.text)
        elif isinstance(part, ToolCall):
            pieces.append(render_call(part))
        elif not isinstance(part, Reasoning):
            raise UnsupportedContentError(f"{adapter}: assistant messages carry text and tool calls, not {part.kind}")
    return "\n".join(pieces)


def tool_runs(messages: Sequence[Message]) -> list[Message]:
    """Consecutive tool messages as one (the Qwen2.5 template renders them in one user turn)."""
    out: list[Message] = []
    for message in messages:
        if message.role == "tool" and out and out[-1].role == "tool":
            out[-1] = Message(role="tool", parts=out[-1].parts + message.parts)
        else:
            out.append(message)
    return out


def tag_history_to_wire(messages: Sequence[Message], fmt: TagFormat) -> list[Message]:
    """Unified history -> text-only chat messages: calls inside the assistant text, results as a
    user turn."""
    out: list[Message] = []
    calls: tuple[ToolCall, ...] = ()
    for message in tool_runs(messages):
        if message.role == "user":
            out.append(message)
        elif message.role == "assistant":
            calls = tuple(p for p in message.parts if isinstance(p, ToolCall))
            out.append(
                Message(role="assistant", parts=(Text(text=assistant_text(message, fmt.call_text, fmt.adapter)),))
            )
        else:
            results = ordered_results(message.parts, calls, fmt.adapter)
            out.append(Message(role="user", parts=(Text(text=fmt.results_text(results)),)))
            calls = ()
    return out


def tag_history_from_wire(messages: Sequence[Message], fmt: TagFormat) -> list[Message]:
    """``tag_history_to_wire`` reversed."""
    out: list[Message] = []
    calls: tuple[ToolCall, ...] = ()
    for index, message in enumerate(messages):
        text = only_text(message)
        if message.role == "user" and text is not None and (answers := fmt.read_results(text)) is not None:
            out.append(result_message(answers, calls, fmt.adapter, index))
            calls = ()
        elif message.role == "assistant" and text is not None:
            parts = parse_text(text, fmt.parser())
            calls = tuple(p for p in parts if isinstance(p, ToolCall))
            out.append(Message(role="assistant", parts=parts))
        else:
            out.append(message)
    return out


def tag_request_to_wire(
    request: Request, fmt: TagFormat, block: Callable[[Sequence[Tool]], str], *, stop: Sequence[str]
) -> WireRequest:
    """``request_to_wire`` of a tag format: the tools ``block`` in the system prompt, calls and
    results as tagged text, the ``stop`` words."""
    request, notes = request_view(request, carries=WIRE_CARRIES[fmt.adapter], wire=fmt.adapter)  # docs/mcp.md
    tools = block(request.tools) if check_request(request, fmt.adapter) else None
    messages = tag_history_to_wire(request.messages, fmt)
    wire = wire_request(request, system=merge_system(request.system, tools), messages=messages, stop=stop)
    return replace(wire, notes=wire.notes + notes) if notes else wire


def tag_request_from_wire(
    body: Mapping[str, Any],
    fmt: TagFormat,
    header: str,
    tools_from_block: Callable[[str], tuple[Tool, ...]],
    *,
    stop: Sequence[str],
) -> Request:
    """``tag_request_to_wire`` reversed: tools from the system prompt's block (it starts with
    ``header``), calls and results from the text."""
    base = read_request(body, stop=stop)
    system, block = split_system(base.system, header)
    return replace(
        base,
        system=system,
        tools=(*base.tools, *(tools_from_block(block) if block is not None else ())),
        messages=tuple(tag_history_from_wire(base.messages, fmt)),
    )


# --------------------------------------------------------------------------------------------
# Responses and streams
# --------------------------------------------------------------------------------------------


def _ended_early(reason: str, provider_reason: str | None) -> str | None:
    """The arguments error of a call still open when the response ended for ``reason``."""
    if reason in ("stop", "tool_calls"):
        return None
    if reason == "length":
        return "the response was cut by the length limit"
    return f"the response ended ({provider_reason or reason}) before the call was complete"


def _through_parser(events: Iterable[StreamEvent], parser: ReplyParser) -> Iterator[StreamEvent]:
    """Chat events with their text run through ``parser``; call indexes count prompt calls and
    any native calls together; ``stop`` becomes ``tool_calls`` when the text held calls."""
    count = 0
    finished = False
    for event in events:
        out: list[StreamEvent]
        if isinstance(event, TextDelta):
            out = parser.feed(event.text)
        elif isinstance(event, ErrorEvent):
            out = [*parser.close(f"the stream failed: {event.error.message}"), event]
        elif isinstance(event, Finish):
            out = parser.close(_ended_early(event.reason, event.provider_reason))
            reason = "tool_calls" if parser.calls and event.reason == "stop" else event.reason
            out.append(Finish(reason, event.provider_reason))
            finished = True
        else:
            out = [event]
        for item in out:
            if isinstance(item, ToolCallStart):
                item = replace(item, index=count)
                count += 1
            yield item
    if not finished:
        yield from parser.close()


def _events_of(response: Response) -> Iterator[StreamEvent]:
    """A decoded chat response as the events its stream would have given."""
    for part in response.parts:
        if isinstance(part, Text):
            if part.text:
                yield TextDelta(part.text)
        elif isinstance(part, Reasoning):
            yield ReasoningDelta(part.text, part.signature, part.redacted, part.provider_details, part.source)
        elif isinstance(part, ToolCall):
            yield ToolCallStart(part.id, part.name, 0, part.provider_details)
            if part.arguments_raw:
                yield ToolCallChunk(part.id, part.arguments_raw)
            yield ToolCallEnd(part.id, part.arguments_raw, part.arguments, part.arguments_error)
    if response.usage is not None:
        yield UsageEvent(response.usage)
    if response.error is not None:
        yield ErrorEvent(response.error)
    yield Finish(response.finish_reason or "stop", response.provider_details.get("finish_reason"))


def response_from_body(body: Mapping[str, Any], parser: ReplyParser, tools: Sequence[Tool]) -> Response:
    """A ``chat.completion`` body -> unified response (``openai_chat`` decodes, ``parser`` reads the text)."""
    native = openai_chat.response_from_wire(body, tools=tools)
    details = {k: v for k, v in native.provider_details.items() if k != "finish_reason"}
    return fold(_through_parser(_events_of(native), parser), provider_details=details)


def stream_from_bytes(chunks: Iterable[bytes], parser: ReplyParser, tools: Sequence[Tool]) -> Iterator[StreamEvent]:
    """SSE bytes -> events, as they arrive (text is held back only while it may start a marker)."""
    return _through_parser(openai_chat.stream_from_wire(chunks, tools=tools), parser)
