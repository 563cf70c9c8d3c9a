"""The requests a real provider refuses, refused the same way (pure): a ``tool_choice`` naming a tool
the request does not offer, a tool whose schema is not a JSON object, and a tool result for a call
no earlier assistant message made.

``refusal(wire, body, request)`` reads the request body as sent (``body``, parsed JSON) and as the
wire's reference adapter decodes it (``request``, for the tool choice, which each wire spells its
own way) and returns the ``Refusal`` the provider answers with (a 400, its message, and OpenAI's
``param``/``code``), or None. The emulator refuses these only when it plays no script (the default
reply or ``Emulator.play_scenarios``, where it stands for a provider under test); a scripted run
judges the client, and the client checks give better evidence than a 400 would (docs/emulator.md,
"Requests a provider refuses"). ``not_json(wire, body, error)`` is the refusal of a body that is not
JSON, in every mode (the server asks for it before any adapter reads the body).

Sources of each status and message, per wire:

- OpenAI Chat, a tool result for an unknown call: 400 ``invalid_request_error``, "Invalid parameter:
  messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.", ``param``
  ``messages.[N].role``, ``code`` null (OpenAI's answer to gpt-4-turbo quoted whole in
  miurla/morphic#136 and smarter-sh/smarter#264; OpenAI's own spelling "preceeding").
- OpenAI Responses, a ``function_call_output`` for an unknown ``call_id``: 400
  ``invalid_request_error``, "No tool call found for function call output with call_id ID.", ``param``
  ``input``, ``code`` null (continuedev/continue#10092, the body quoted whole).
- OpenAI (both), a ``tool_choice`` naming no offered tool: 400 ``invalid_request_error``, "Tool choice
  'NAME' not found in 'tools' parameter.", ``param`` ``tool_choice`` (upstream bodies quoted in public
  gateway tests and in vercel/ai's changeset for the Responses ``allowedTools`` option); with no
  ``tools`` at all: "Invalid value for 'tool_choice': 'tool_choice' is only allowed when 'tools' are
  specified." (dapr/dapr-agents#248, the body quoted whole).
- OpenAI (both), a schema that is not an object: 400 ``invalid_request_error`` ``invalid_function_parameters``,
  "Invalid schema for function 'NAME': schema must be a JSON Schema of 'type: "object"', got 'type:
  "T"'." (quoted from OpenAI-compatible endpoints in many repositories, found by that text); a
  ``parameters`` value that is no JSON object at all: OpenAI's ``invalid_type`` form, "Invalid type for
  'PARAM': expected an object, but got a T instead." (UNVERIFIED for this field: the form OpenAI
  gives every mistyped field).
- Anthropic: 400 ``invalid_request_error``; "messages.N.content.M: unexpected `tool_use_id` found in
  `tool_result` blocks: ID. Each `tool_result` block must have a corresponding `tool_use` block in the
  previous message." (anthropics/claude-code#18947, router-for-me/CLIProxyAPI#497, quoted whole);
  "tool_choice.name: Tool 'NAME' not found in provided tools" (quoted in public client tests);
  "tools.N.custom.input_schema.type: Input should be 'object'" (UNVERIFIED wording; a missing type is
  quoted as "tools.N.custom.input_schema.type: Field required" in many repositories).
- Gemini: 400 ``INVALID_ARGUMENT``; "Please ensure that function response turn comes immediately after
  a function call turn." (GoogleCloudPlatform/generative-ai#368, langchain-ai/langchain#27799); a
  ``functionCallingConfig.allowedFunctionNames`` entry or a ``parameters`` that no declaration has:
  ``INVALID_ARGUMENT`` in the "GenerateContentRequest proto is invalid" form Gemini gives every bad
  field (kaitranntt/ccs#25; the wording for these two fields is UNVERIFIED).
- A body that is not JSON: OpenAI 400 "We could not parse the JSON body of your request. (HINT: ...)"
  with ``param`` and ``code`` null (quoted whole in public security reports and proxies that mirror
  it); Anthropic 400 "The request body is not valid JSON: " and Python's own ``json`` error, "line L
  column C (char N)" (anthropics/claude-code#6508, #8272, promptfoo/promptfoo#4489); Gemini 400
  ``INVALID_ARGUMENT`` "Invalid JSON payload received. Unexpected token." then the text near it and a
  ``^`` line (quoted in many repositories); Ollama 400 ``{"error": ...}`` with Go's ``encoding/json``
  error (``server/routes.go`` answers a bind error with ``err.Error()``; "unexpected EOF" for a body
  cut short, "invalid character 'x' looking for beginning of value" otherwise: the wording of Go's
  decoder, UNVERIFIED against a running Ollama).
- Ollama documents none of these (``docs/api/errors.mdx``): it renders every tool message into the
  prompt and has no ``tool_choice``; a ``parameters`` that is not an object fails Go's JSON decoding
  (400 ``{"error": "json: cannot unmarshal ..."}``, the emulator's ``invalid_tool_schema`` fault).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from conformance.model import Request

__all__ = ["Refusal", "not_json", "refusal"]


@dataclass(frozen=True, kw_only=True)
class Refusal:
    """A request the provider refuses: the status, its message, and OpenAI's ``param`` and ``code``."""

    message: str
    status: int = 400
    param: str | None = None
    code: str | None = None
    what: str = ""
    """Which refusal (``unknown_tool_choice``, ``schema_not_object``, ``result_without_call``)."""


_MODES = frozenset({"auto", "none", "required"})


def refusal(wire: str, body: Mapping[str, Any], request: Request | None) -> Refusal | None:
    """The provider's refusal of this request, or None when it accepts it. ``request`` is the body as
    the wire's reference adapter reads it (None when it could not read it: only the body is looked at)."""
    found = _schema_refusal(wire, body)
    if found is None and request is not None:
        found = _tool_choice_refusal(wire, request)
    if found is None:
        found = _result_refusal(wire, body)
    return found


def not_json(wire: str, body: bytes, error: ValueError) -> Refusal:
    """The refusal of a body that is not JSON (``error``: what Python's ``json`` said of it)."""
    if wire in ("openai_chat", "openai_responses"):
        message = (
            "We could not parse the JSON body of your request. (HINT: This likely means you aren't using your HTTP "
            "library correctly. The OpenAI API expects a JSON payload, but what was sent was not valid JSON. If you "
            "have trouble figuring out how to fix this, please contact us through our help center at help.openai.com.)"
        )
        return Refusal(message=message, what="body_not_json")
    if wire == "anthropic":
        return Refusal(message=f"The request body is not valid JSON: {error}", what="body_not_json")
    position = getattr(error, "pos", 0)
    if wire == "gemini":
        line_start = body.rfind(b"\n", 0, position) + 1
        near = body[line_start : line_start + 60].decode("utf-8", "replace")
        caret = " " * (position - line_start) + "^"
        message = f"Invalid JSON payload received. Unexpected token.\n{near}\n{caret}"
        return Refusal(message=message, what="body_not_json")
    if position >= len(body.rstrip()):
        return Refusal(message="unexpected EOF", what="body_not_json")
    found = body[position : position + 1].decode("utf-8", "replace")
    reason = str(getattr(error, "msg", ""))
    looking = (
        "looking for beginning of object key string"
        if reason.startswith("Expecting property name")
        else "after top-level value"
        if reason.startswith("Extra data")
        else "looking for beginning of value"
    )
    return Refusal(message=f"invalid character {found!r} {looking}", what="body_not_json")


# ---- schemas --------------------------------------------------------------------------------


def _kind(value: Any) -> str:
    """A JSON value's type as OpenAI's messages name it."""
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "null" if value is None else "object"


def _not_object(schema: Any) -> str | None:
    """Why a tool schema is not a JSON object schema (``"string"``: not an object at all; ``type: T``:
    an object schema of another type), or None when it is one (or says no type, which providers read
    as an object)."""
    if not isinstance(schema, Mapping):
        return _kind(schema)
    kind = schema.get("type")
    if kind is None or (isinstance(kind, str) and kind.lower() == "object"):
        return None
    return f"type: {kind}"


def _schema_refusal(wire: str, body: Mapping[str, Any]) -> Refusal | None:
    tools = body.get("tools")
    if not isinstance(tools, list):
        return None
    for index, tool in enumerate(tools):
        if not isinstance(tool, Mapping):
            continue
        if wire == "openai_chat":
            function = tool.get("function")
            if isinstance(function, Mapping) and "parameters" in function:
                param = f"tools[{index}].function.parameters"
                found = _openai_schema(function.get("name"), function["parameters"], param)
                if found is not None:
                    return found
        elif wire == "openai_responses":
            if tool.get("type", "function") == "function" and "parameters" in tool:
                found = _openai_schema(tool.get("name"), tool["parameters"], f"tools[{index}].parameters")
                if found is not None:
                    return found
        elif wire == "anthropic":
            if "input_schema" in tool and tool.get("type") in (None, "custom"):
                why = _not_object(tool["input_schema"])
                if why is not None:
                    where = f"tools.{index}.custom.input_schema"
                    message = (
                        f"{where}: Input should be a valid dictionary"
                        if not isinstance(tool["input_schema"], Mapping)
                        else f"{where}.type: Input should be 'object'"
                    )
                    return Refusal(message=message, what="schema_not_object")
        elif wire == "gemini":
            found = _gemini_schema(tool, index)
            if found is not None:
                return found
        elif wire == "ollama":
            function = tool.get("function")
            if isinstance(function, Mapping) and "parameters" in function:
                parameters = function["parameters"]
                if parameters is not None and not isinstance(parameters, Mapping):
                    message = (
                        f"json: cannot unmarshal {_kind(parameters)} into Go struct field ToolFunction.tools.function."
                        "parameters of type api.ToolFunctionParameters"
                    )
                    return Refusal(message=message, what="schema_not_object")
    return None


def _openai_schema(name: Any, schema: Any, param: str) -> Refusal | None:
    why = _not_object(schema)
    if why is None:
        return None
    if not isinstance(schema, Mapping):
        message = f"Invalid type for '{param}': expected an object, but got a {why} instead."
        return Refusal(message=message, param=param, code="invalid_type", what="schema_not_object")
    message = (
        f"Invalid schema for function '{name}': schema must be a JSON Schema of 'type: \"object\"', "
        f"got 'type: \"{schema.get('type')}\"'."
    )
    return Refusal(message=message, param=param, code="invalid_function_parameters", what="schema_not_object")


def _pick(node: Mapping[str, Any], camel: str, snake: str) -> Any:
    return node.get(camel, node.get(snake))


def _gemini_schema(tool: Mapping[str, Any], index: int) -> Refusal | None:
    declarations = _pick(tool, "functionDeclarations", "function_declarations")
    if not isinstance(declarations, list):
        return None
    for number, declaration in enumerate(declarations):
        if not isinstance(declaration, Mapping):
            continue
        for camel, snake in (("parameters", "parameters"), ("parametersJsonSchema", "parameters_json_schema")):
            schema = _pick(declaration, camel, snake)
            if schema is None:
                continue
            why = _not_object(schema)
            if why is not None:
                field = f"tools[{index}].function_declarations[{number}].{snake}"
                message = (
                    f"The GenerateContentRequest proto is invalid:\n  * {field}: [FIELD_INVALID] the parameters "
                    f"of a function declaration must be an OBJECT schema (got {why})."
                )
                return Refusal(message=message, what="schema_not_object")
    return None


# ---- tool choice ----------------------------------------------------------------------------


def _tool_choice_refusal(wire: str, request: Request) -> Refusal | None:
    choice = request.tool_choice
    if choice is None or choice in _MODES or wire == "ollama":
        return None
    if choice in {tool.name for tool in request.tools}:
        return None
    if wire in ("openai_chat", "openai_responses"):
        if not request.tools:  # dapr/dapr-agents#248 quotes OpenAI's answer whole
            message = "Invalid value for 'tool_choice': 'tool_choice' is only allowed when 'tools' are specified."
            return Refusal(message=message, param="tool_choice", what="unknown_tool_choice")
        message = f"Tool choice '{choice}' not found in 'tools' parameter."
        return Refusal(message=message, param="tool_choice", what="unknown_tool_choice")
    if wire == "anthropic":
        message = f"tool_choice.name: Tool '{choice}' not found in provided tools"
        return Refusal(message=message, what="unknown_tool_choice")
    message = (
        "The GenerateContentRequest proto is invalid:\n  * tool_config.function_calling_config.allowed_function_names: "
        f"[FIELD_INVALID] function {choice!r} is not declared in tools[].function_declarations."
    )
    return Refusal(message=message, what="unknown_tool_choice")


# ---- tool results ---------------------------------------------------------------------------


def _result_refusal(wire: str, body: Mapping[str, Any]) -> Refusal | None:
    if wire == "openai_chat":
        return _chat_results(body.get("messages"))
    if wire == "openai_responses":
        if body.get("previous_response_id") is not None:
            return None  # the calls are in the stored response this request continues
        return _responses_results(body.get("input"))
    if wire == "anthropic":
        return _anthropic_results(body.get("messages"))
    if wire == "gemini":
        return _gemini_results(body.get("contents"))
    return None


def _chat_results(messages: Any) -> Refusal | None:
    if not isinstance(messages, list):
        return None
    seen: set[str] = set()
    for index, message in enumerate(messages):
        if not isinstance(message, Mapping):
            continue
        if message.get("role") == "assistant":
            for call in message.get("tool_calls") or ():
                if isinstance(call, Mapping) and isinstance(call.get("id"), str):
                    seen.add(call["id"])
        elif message.get("role") == "tool" and message.get("tool_call_id") not in seen:
            text = (
                "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with "
                "'tool_calls'."
            )
            return Refusal(message=text, param=f"messages.[{index}].role", what="result_without_call")
    return None


def _responses_results(items: Any) -> Refusal | None:
    if not isinstance(items, list):
        return None
    seen: set[str] = set()
    for item in items:
        if not isinstance(item, Mapping):
            continue
        kind = item.get("type")
        if kind in ("function_call", "custom_tool_call", "tool_search_call") and isinstance(item.get("call_id"), str):
            seen.add(item["call_id"])
        elif kind == "function_call_output" and item.get("call_id") not in seen:
            text = f"No tool call found for function call output with call_id {item.get('call_id')}."
            return Refusal(message=text, param="input", what="result_without_call")
    return None


def _anthropic_results(messages: Any) -> Refusal | None:
    if not isinstance(messages, list):
        return None
    seen: set[str] = set()
    for index, message in enumerate(messages):
        if not isinstance(message, Mapping) or not isinstance(message.get("content"), list):
            continue
        for number, block in enumerate(message["content"]):
            if not isinstance(block, Mapping):
                continue
            call_id = block.get("id")
            if message.get("role") == "assistant" and block.get("type") == "tool_use" and isinstance(call_id, str):
                seen.add(call_id)
            elif block.get("type") == "tool_result" and block.get("tool_use_id") not in seen:
                text = (
                    f"messages.{index}.content.{number}: unexpected `tool_use_id` found in `tool_result` blocks: "
                    f"{block.get('tool_use_id')}. Each `tool_result` block must have a corresponding `tool_use` block "
                    "in the previous message."
                )
                return Refusal(message=text, what="result_without_call")
    return None


def _gemini_results(contents: Any) -> Refusal | None:
    if not isinstance(contents, list):
        return None
    previous_calls = False
    for content in contents:
        if not isinstance(content, Mapping):
            continue
        parts = [p for p in content.get("parts") or () if isinstance(p, Mapping)]
        responds = any(_pick(p, "functionResponse", "function_response") is not None for p in parts)
        if responds and not previous_calls:
            text = "Please ensure that function response turn comes immediately after a function call turn."
            return Refusal(message=text, what="result_without_call")
        previous_calls = content.get("role") == "model" and any(
            _pick(p, "functionCall", "function_call") is not None for p in parts
        )
    return None
