"""The unified tool-calling model: pure values shared by every adapter, check and report.

Everything here is a frozen dataclass (or a union of them) with a ``Literal`` ``kind``/``type``
field. Provider-only data rides in ``provider_details`` mappings, never in ids or content.

Shapes follow MCP for tools and tool results (``Tool.input_schema`` is MCP ``inputSchema``;
``ToolResult.content`` holds MCP content items) and the stream-event names users already know
(``text_delta``, ``tool_call_start`` / ``tool_call_chunk`` / ``tool_call_end``, ``finish`` ...).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias

__all__ = [
    "ERROR_KINDS",
    "FINISH_REASONS",
    "Audio",
    "ContentItem",
    "ErrorEvent",
    "ErrorInfo",
    "ErrorKind",
    "Finish",
    "FinishReason",
    "Image",
    "JSONObject",
    "Message",
    "Part",
    "Reasoning",
    "ReasoningDelta",
    "ReasoningEffort",
    "ReasoningSettings",
    "Request",
    "Resource",
    "Response",
    "Role",
    "StreamEvent",
    "Text",
    "TextDelta",
    "Tool",
    "ToolCall",
    "ToolCallChunk",
    "ToolCallEnd",
    "ToolCallStart",
    "ToolChoice",
    "ToolResult",
    "Usage",
    "UsageEvent",
]

JSONObject: TypeAlias = dict[str, Any]
"""A parsed JSON object (tool arguments, schemas, wire bodies)."""

_EMPTY: Mapping[str, Any] = {}

# --------------------------------------------------------------------------------------------
# Closed vocabularies
# --------------------------------------------------------------------------------------------

FinishReason: TypeAlias = Literal[
    "stop", "tool_calls", "length", "content_filter", "malformed_tool_call", "error", "other"
]
"""Why a response ended. ``tool_calls`` whenever the response holds complete tool calls (even
if the provider said ``STOP``/``stop``); ``malformed_tool_call`` for Gemini's
``MALFORMED_FUNCTION_CALL``; ``error`` when the stream broke or carried an error; ``other`` for a
provider reason outside this table (the raw value stays in ``provider_details``)."""

FINISH_REASONS: tuple[FinishReason, ...] = (
    "stop",
    "tool_calls",
    "length",
    "content_filter",
    "malformed_tool_call",
    "error",
    "other",
)

ErrorKind: TypeAlias = Literal[
    "rate_limit",
    "overloaded",
    "server",
    "invalid_request",
    "auth",
    "permission",
    "not_found",
    "context_length",
    "stream_incomplete",
    "malformed_response",
    "unknown",
]
"""Provider error kinds. ``stream_incomplete`` (the stream ended before its terminator) and
``malformed_response`` (bytes that are not the wire format) describe broken traffic rather than
an error the provider reported."""

ERROR_KINDS: tuple[ErrorKind, ...] = (
    "rate_limit",
    "overloaded",
    "server",
    "invalid_request",
    "auth",
    "permission",
    "not_found",
    "context_length",
    "stream_incomplete",
    "malformed_response",
    "unknown",
)

Role: TypeAlias = Literal["user", "assistant", "tool"]


# --------------------------------------------------------------------------------------------
# Tools
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class Tool:
    """A tool in MCP form (``tools/list`` item)."""

    name: str
    """The MCP name (up to 128 chars, may hold ``.``, ``/``); adapters map it to a valid wire name."""
    description: str | None = None
    """What the tool does, for the model."""
    input_schema: Mapping[str, Any] = field(default_factory=lambda: {"type": "object"})
    """JSON Schema of the arguments (MCP ``inputSchema``)."""
    title: str | None = None
    """Human display name (MCP ``title``); no provider carries it."""
    output_schema: Mapping[str, Any] | None = None
    """JSON Schema of structured output (MCP ``outputSchema``)."""
    annotations: Mapping[str, Any] | None = None
    """MCP behaviour hints (readOnlyHint, ...); no provider carries them."""
    cache_control: Mapping[str, Any] | None = None
    """A prompt-cache breakpoint the caller set after this block (Anthropic's ``{"type": "ephemeral"}``,
    ``"ttl"`` optional); wires without per-block markers cache automatically and leave it out."""
    provider_details: Mapping[str, Any] = field(default_factory=dict)
    """Wire-only tool fields kept for a faithful round trip (``strict``, ...)."""
    kind: Literal["tool"] = "tool"


ToolChoice: TypeAlias = Literal["auto", "none", "required"] | str
"""``auto``/``none``/``required``, or any other string: the name of the one tool to call."""


# --------------------------------------------------------------------------------------------
# Content items (MCP content blocks) and message parts
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class Text:
    """Plain text, in a message or a tool result."""

    text: str
    cache_control: Mapping[str, Any] | None = None
    """A prompt-cache breakpoint the caller set after this block (Anthropic's ``{"type": "ephemeral"}``,
    ``"ttl"`` optional); wires without per-block markers cache automatically and leave it out."""
    provider_details: Mapping[str, Any] = field(default_factory=dict)
    """Provider-only data (e.g. Gemini's ``thoughtSignature`` on a text part)."""
    kind: Literal["text"] = "text"


@dataclass(frozen=True, kw_only=True)
class Image:
    """An image: base64 ``data`` with a ``media_type``, or a ``url``."""

    media_type: str = ""
    """MIME type, e.g. ``image/png``."""
    data: str | None = None
    """Base64 payload (MCP ``data``)."""
    url: str | None = None
    """A URL source instead of inline data."""
    kind: Literal["image"] = "image"


@dataclass(frozen=True, kw_only=True)
class Audio:
    """Audio content from an MCP tool result."""

    media_type: str
    data: str
    kind: Literal["audio"] = "audio"


@dataclass(frozen=True, kw_only=True)
class Resource:
    """An embedded MCP resource (``text`` or base64 ``blob``) or a resource link (neither)."""

    uri: str
    media_type: str | None = None
    text: str | None = None
    blob: str | None = None
    kind: Literal["resource"] = "resource"


ContentItem: TypeAlias = Text | Image | Audio | Resource
"""One MCP content block of a tool result."""


@dataclass(frozen=True, kw_only=True)
class ToolCall:
    """A call the model made. ``arguments`` is None exactly when ``arguments_error`` is set."""

    id: str
    """The call id (provider's, or synthetic and deterministic where the wire has none)."""
    name: str
    """The tool name as the user knows it (wire names are mapped back)."""
    arguments: JSONObject | None = None
    """Parsed arguments (always a JSON object), or None when they could not be parsed."""
    arguments_raw: str = ""
    """The argument text as received (for object-valued wires: its compact JSON)."""
    arguments_error: str | None = None
    """Why the arguments are unusable (invalid JSON, cut by length, stream ended ...)."""
    provider_details: Mapping[str, Any] = field(default_factory=dict)
    """Provider-only data to replay byte for byte (Gemini ``thoughtSignature``, Responses item id,
    ``synthetic_id: True`` when the id was made up)."""
    kind: Literal["tool_call"] = "tool_call"


@dataclass(frozen=True, kw_only=True)
class ToolResult:
    """What a tool returned for one call (MCP ``CallToolResult``)."""

    call_id: str
    content: tuple[ContentItem, ...] = ()
    is_error: bool = False
    """MCP ``isError``: the tool failed and the content says why."""
    name: str | None = None
    """The called tool's name, for wires that key results by name (Gemini, Ollama)."""
    cache_control: Mapping[str, Any] | None = None
    """A prompt-cache breakpoint the caller set after this block (Anthropic's ``{"type": "ephemeral"}``,
    ``"ttl"`` optional); wires without per-block markers cache automatically and leave it out."""
    provider_details: Mapping[str, Any] = field(default_factory=dict)
    kind: Literal["tool_result"] = "tool_result"


@dataclass(frozen=True, kw_only=True)
class Reasoning:
    """Model reasoning, kept so it can be replayed as the provider that produced it requires.

    Opaque where the provider says so: ``signature`` and ``redacted`` go back byte for byte, and only
    to the wire named by ``source`` (another provider cannot verify them: an adapter leaves such a
    part out and says so in ``WireRequest.notes``). ``docs/adapters.md`` ("Reasoning") gives each
    wire's form and replay rule."""

    text: str = ""
    """The reasoning text, when the provider gives it (a summary on Responses; empty when redacted)."""
    signature: str | None = None
    """The opaque proof the provider checks on replay: Anthropic ``signature``, Gemini
    ``thoughtSignature`` (base64), Responses ``encrypted_content``; None when the wire has none."""
    redacted: str | None = None
    """Anthropic ``redacted_thinking`` data (encrypted reasoning with no text)."""
    source: str | None = None
    """The wire format that produced it (``anthropic``, ``gemini``, ``openai_responses``,
    ``openai_chat``, ``ollama``, ...); None: unknown (a caller's own history)."""
    provider_details: Mapping[str, Any] = field(default_factory=dict)
    kind: Literal["reasoning"] = "reasoning"


Part: TypeAlias = Text | Image | ToolCall | ToolResult | Reasoning
"""A part of a message."""


@dataclass(frozen=True, kw_only=True)
class Message:
    """One turn. Tool results travel in ``role="tool"`` messages (one message per turn's results)."""

    role: Role
    parts: tuple[Part, ...]
    provider_details: Mapping[str, Any] = field(default_factory=dict)
    kind: Literal["message"] = "message"


# --------------------------------------------------------------------------------------------
# Request / response
# --------------------------------------------------------------------------------------------


ReasoningEffort: TypeAlias = Literal["minimal", "low", "medium", "high"]


@dataclass(frozen=True, kw_only=True)
class ReasoningSettings:
    """How much the model may reason, as the caller asks for it (``Request.reasoning``).

    ``enabled=False`` turns reasoning off; otherwise ``effort`` (a level) and/or ``budget_tokens``
    (a token budget). Each adapter translates what its wire has (Anthropic ``thinking`` /
    ``output_config.effort``, Responses ``reasoning.effort``, Gemini ``thinkingConfig``, Chat
    ``reasoning_effort``, Ollama ``think``) and declares it (capabilities ``reasoning_effort``,
    ``reasoning_budget``, ``reasoning_off``); a setting its wire cannot carry is refused
    (``UnsupportedContentError``), never dropped."""

    enabled: bool = True
    effort: ReasoningEffort | None = None
    budget_tokens: int | None = None
    kind: Literal["reasoning_settings"] = "reasoning_settings"


@dataclass(frozen=True, kw_only=True)
class Request:
    """A provider-neutral chat request."""

    model: str = ""
    system: str | None = None
    system_cache_control: Mapping[str, Any] | None = None
    """A prompt-cache breakpoint the caller set after the system prompt (``Text.cache_control``)."""
    messages: tuple[Message, ...] = ()
    tools: tuple[Tool, ...] = ()
    tool_choice: ToolChoice | None = None
    """None when the request leaves it to the provider's default."""
    parallel_tool_calls: bool | None = None
    stream: bool = False
    max_tokens: int | None = None
    reasoning: ReasoningSettings | None = None
    """The caller's reasoning settings (None: the provider's default)."""
    provider_details: Mapping[str, Any] = field(default_factory=dict)
    """Wire fields the unified model does not cover, kept so a wire body round-trips."""
    kind: Literal["request"] = "request"


@dataclass(frozen=True, kw_only=True)
class Usage:
    """Token counts; None where the provider did not report one."""

    input_tokens: int | None = None
    output_tokens: int | None = None
    total_tokens: int | None = None
    cache_read_tokens: int | None = None
    cache_write_tokens: int | None = None
    reasoning_tokens: int | None = None
    kind: Literal["usage"] = "usage"


@dataclass(frozen=True, kw_only=True)
class ErrorInfo:
    """A provider error as a value (the exception type is ``errors.ProviderError``)."""

    kind: ErrorKind
    message: str
    status: int | None = None
    """HTTP status; None for an error reported inside a 200 stream."""
    retry_after: float | None = None
    """Seconds to wait, from ``retry-after``/``retry-after-ms`` or the body (Gemini RetryInfo)."""
    code: str | None = None
    """The provider's own error type/code string (``rate_limit_error``, ``RESOURCE_EXHAUSTED``)."""
    provider_details: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, kw_only=True)
class Response:
    """One assistant turn, folded from stream events (streaming and not) by ``assembly.fold``."""

    parts: tuple[Part, ...] = ()
    finish_reason: FinishReason | None = None
    usage: Usage | None = None
    error: ErrorInfo | None = None
    provider_details: Mapping[str, Any] = field(default_factory=dict)
    """E.g. ``finish_reason`` as the provider spelled it, response id, model."""
    kind: Literal["response"] = "response"

    @property
    def text(self) -> str:
        """All text parts joined."""
        return "".join(p.text for p in self.parts if isinstance(p, Text))

    @property
    def tool_calls(self) -> tuple[ToolCall, ...]:
        """The tool calls in order."""
        return tuple(p for p in self.parts if isinstance(p, ToolCall))


# --------------------------------------------------------------------------------------------
# Stream events
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class TextDelta:
    """A piece of visible text."""

    text: str
    type: Literal["text_delta"] = "text_delta"


@dataclass(frozen=True, slots=True)
class ReasoningDelta:
    """A piece of reasoning; ``signature``/``redacted`` close a block that must be replayed."""

    text: str = ""
    signature: str | None = None
    redacted: str | None = None
    provider_details: Mapping[str, Any] = field(default_factory=lambda: _EMPTY)
    """Provider data of the whole block, to replay it (the OpenAI Responses ``reasoning`` item);
    non-empty, it closes the block like ``signature`` and lands on the ``Reasoning`` part."""
    source: str | None = None
    """The wire format that produced it (``Reasoning.source``); the first of a block's deltas that
    names it names the folded part."""
    type: Literal["reasoning_delta"] = "reasoning_delta"


@dataclass(frozen=True, slots=True)
class ToolCallStart:
    """A tool call begins: its id and name are known."""

    tool_call_id: str
    tool_call_name: str
    index: int
    """Position of the call among this response's calls (0, 1, ...), whatever the wire index."""
    provider_details: Mapping[str, Any] = field(default_factory=lambda: _EMPTY)
    type: Literal["tool_call_start"] = "tool_call_start"


@dataclass(frozen=True, slots=True, init=False)
class ToolCallChunk:
    """A fragment of a call's argument text; the fragments concatenate to the complete text.

    The ``__init__`` is the one ``dataclass`` writes but for how it sets the fields: through their
    slots' own setters rather than ``object.__setattr__`` by name, which costs ~40% less (one
    event per argument fragment: a long stream makes hundreds of thousands, ``benchmarks/README.md``).
    The class is still a frozen dataclass: assigning or deleting a field raises."""

    tool_call_id: str
    tool_call_arguments_chunk: str
    type: Literal["tool_call_chunk"] = "tool_call_chunk"

    def __init__(
        self,
        tool_call_id: str,
        tool_call_arguments_chunk: str,
        type: Literal["tool_call_chunk"] = "tool_call_chunk",
    ) -> None:
        _set_chunk_id(self, tool_call_id)
        _set_chunk_text(self, tool_call_arguments_chunk)
        _set_chunk_type(self, type)


_set_chunk_id = ToolCallChunk.__dict__["tool_call_id"].__set__
_set_chunk_text = ToolCallChunk.__dict__["tool_call_arguments_chunk"].__set__
_set_chunk_type = ToolCallChunk.__dict__["type"].__set__


@dataclass(frozen=True, slots=True)
class ToolCallEnd:
    """A call is complete: parsed ``arguments``, or ``arguments_error`` with the raw text kept."""

    tool_call_id: str
    tool_call_arguments_complete: str
    arguments: JSONObject | None
    arguments_error: str | None = None
    type: Literal["tool_call_end"] = "tool_call_end"


@dataclass(frozen=True, slots=True)
class Finish:
    """The response ended; nothing follows."""

    reason: FinishReason
    provider_reason: str | None = None
    """The provider's own spelling (``end_turn``, ``STOP``, ...)."""
    type: Literal["finish"] = "finish"


@dataclass(frozen=True, slots=True)
class UsageEvent:
    """Token usage so far (later events replace earlier ones)."""

    usage: Usage
    type: Literal["usage"] = "usage"


@dataclass(frozen=True, slots=True)
class ErrorEvent:
    """An error inside the stream (provider error event, truncation, malformed bytes)."""

    error: ErrorInfo
    type: Literal["error"] = "error"


StreamEvent: TypeAlias = (
    TextDelta | ReasoningDelta | ToolCallStart | ToolCallChunk | ToolCallEnd | Finish | UsageEvent | ErrorEvent
)
"""One normalized stream event."""
