"""Hermes / Qwen2.5 ``<tool_call>`` tool calling through a prompt, over the OpenAI-compatible chat wire.

For servers that take ``POST /v1/chat/completions`` but no ``tools`` (or whose tool parser is off):
the tools go into the system prompt and the model writes its calls as text. Sources
(wire-formats.md §6b, verified with the ``search`` tool):

- the Qwen2.5-Instruct chat template (``tokenizer_config.json`` ``chat_template`` of
  ``huggingface.co/Qwen/Qwen2.5-*-Instruct``, quoted verbatim in public repositories): after the
  system text, ``"\\n\\n# Tools\\n\\nYou may call one or more functions to assist with the user
  query.\\n\\nYou are provided with function signatures within <tools></tools> XML tags:\\n<tools>"``,
  one ``tool | tojson`` per line (``{"type": "function", "function": {...}}``), then ``"\\n</tools>\\n\\n
  For each function call, return a json object with function name and arguments within
  <tool_call></tool_call> XML tags:\\n<tool_call>\\n{\\"name\\": <function-name>, \\"arguments\\":
  <args-json-object>}\\n</tool_call>"``; an assistant call is ``'\\n<tool_call>\\n{"name": "' + name +
  '", "arguments": ' + (arguments | tojson) + '}\\n</tool_call>'`` after the content; consecutive
  ``tool`` messages become one user turn of ``'\\n<tool_response>\\n' + content + '\\n</tool_response>'``;
- Qwen-Agent ``qwen_agent/llm/fncall_prompts/nous_fncall_prompt.py`` (``FN_CALL_TEMPLATE``, the same
  text; ``<tool_call>\\n{json.dumps(fc)}\\n</tool_call>``; ``<tool_response>\\n...\\n</tool_response>``
  merged into a user message; ``json5`` for lenient calls; no stop words);
- NousResearch Hermes-Function-Calling: single-quoted Python-literal calls are parsed with an
  ``ast.literal_eval`` fallback (E21).

What this adapter sends: the system prompt ``<caller's system>\\n\\n<tools block>`` (the block alone
without one; no block without tools or with ``tool_choice: "none"``); assistant history as
``text\\n<tool_call>\\n{...}\\n</tool_call>\\n<tool_call>...`` with ``json.dumps`` arguments; each
turn's results as one user message of ``<tool_response>`` blocks in call order, a failed tool's
text prefixed ``Error: ``. The Qwen2.5 template inserts a default system prompt ("You are Qwen,
created by Alibaba Cloud...") when there is none; that is the server's template, not sent here.

Round trips (unified -> wire -> unified is the identity for tools, calls with their synthetic
ids and arguments, results and ``is_error``) except: a tool's ``title``/``output_schema``/
``annotations`` (not in the format), reasoning parts (not replayed), several text items of a
result (joined by newlines), ``parallel_tool_calls: true`` (not sent: read back as unset),
``tool_choice: "none"`` (sent as no tools section: read back as no tools), a
result text starting ``Error: `` with ``is_error`` false, a user message that is nothing but
``<tool_response>`` blocks (read back as results, as the template's own ``multi_step_tool`` test
does), and a call that was never closed (replayed closed).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

from conformance.adapters import _prompt, openai_chat
from conformance.adapters._prompt import ERROR_PREFIX, TagFormat
from conformance.adapters._prompt_parse import json_text
from conformance.adapters.base import Adapter, WireRequest, WireTools
from conformance.errors import ProviderError, WireFormatError
from conformance.model import JSONObject, Request, Response, StreamEvent, Tool, ToolResult

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

NAME = "hermes"

# --------------------------------------------------------------------------------------------
# Tables (the template text, Qwen2.5 chat_template / Qwen-Agent nous FN_CALL_TEMPLATE)
# --------------------------------------------------------------------------------------------

_HEADER = (
    "# Tools\n\nYou may call one or more functions to assist with the user query.\n\n"
    "You are provided with function signatures within <tools></tools> XML tags:\n<tools>"
)
_FOOTER = (
    "\n</tools>\n\nFor each function call, return a json object with function name and arguments within"
    ' <tool_call></tool_call> XML tags:\n<tool_call>\n{"name": <function-name>, "arguments": <args-json-object>}'
    "\n</tool_call>"
)
_RESPONSE_OPEN = "<tool_response>\n"
_RESPONSE_CLOSE = "\n</tool_response>"


def _results_text(results: Sequence[ToolResult]) -> str:
    return "\n".join(_RESPONSE_OPEN + _prompt.result_text(r, NAME) + _RESPONSE_CLOSE for r in results)


def _read_results(text: str) -> list[tuple[str, bool, str | None]] | None:
    """A user turn made only of ``<tool_response>`` blocks -> their texts (None otherwise). A block
    ends at the first ``\\n</tool_response>`` followed by the next block or the end."""
    answers: list[tuple[str, bool, str | None]] = []
    position = 0
    while text.startswith(_RESPONSE_OPEN, position):
        start = search = position + len(_RESPONSE_OPEN)
        while True:
            end = text.find(_RESPONSE_CLOSE, search)
            if end == -1:
                return None
            after = end + len(_RESPONSE_CLOSE)
            if after == len(text) or text.startswith("\n" + _RESPONSE_OPEN, after):
                break
            search = end + 1
        body = text[start:end]
        is_error = body.startswith(ERROR_PREFIX)
        answers.append((body.removeprefix(ERROR_PREFIX), is_error, None))
        if after == len(text):
            return answers
        position = after + 1
    return None


_FORMAT = TagFormat(
    adapter=NAME,
    open_tag="<tool_call>",
    close_tag="</tool_call>",
    separator="\n",
    results_text=_results_text,
    read_results=_read_results,
)

# --------------------------------------------------------------------------------------------
# Tools
# --------------------------------------------------------------------------------------------


def _tool_line(tool: Tool) -> JSONObject:
    function: JSONObject = {"name": tool.name}
    if tool.description is not None:
        function["description"] = tool.description
    function["parameters"] = dict(tool.input_schema)
    return {"type": "function", "function": function}


def tools_to_wire(tools: Sequence[Tool]) -> WireTools:
    """MCP tools -> the ``<tools>`` lines of the prompt (``{"type": "function", "function": {...}}``;
    names and schemas unchanged: a prompt has no name rule)."""
    return WireTools(tools=[_tool_line(t) for t in tools])


def _block(tools: Sequence[Tool]) -> str:
    return _HEADER + "".join("\n" + json_text(line) for line in tools_to_wire(tools).tools) + _FOOTER


def _tools_from_block(block: str) -> tuple[Tool, ...]:
    if not block.endswith(_FOOTER):
        raise WireFormatError(f"{NAME}: the system prompt has a tools block that does not end as the template does")
    tools: list[Tool] = []
    for number, line in enumerate(block[len(_HEADER) : -len(_FOOTER)].split("\n")[1:], 1):
        try:
            function = _object(line)["function"]
            tools.append(
                Tool(
                    name=str(function["name"]),
                    description=function.get("description"),
                    input_schema=function.get("parameters", {}),
                )
            )
        except (ValueError, KeyError, TypeError) as exc:
            raise WireFormatError(
                f"{NAME}: tool line {number} of the system prompt is not"
                f' {{"type": "function", "function": {{"name": ...}}}} JSON ({exc}): {line[:80]!r}'
            ) from None
    return tuple(tools)


def _object(text: str) -> dict[str, Any]:
    value = json.loads(text)
    if not isinstance(value, dict):
        raise ValueError("not a JSON object")
    return value


# --------------------------------------------------------------------------------------------
# Requests
# --------------------------------------------------------------------------------------------


def request_to_wire(request: Request) -> WireRequest:
    """Unified request -> chat body with the tools, calls and results in the text."""
    return _prompt.tag_request_to_wire(request, _FORMAT, _block, stop=())


def request_from_wire(body: Mapping[str, Any], *, path: str = "", tools: Sequence[Tool] = ()) -> Request:
    """Chat body -> unified request: tools from the system prompt, calls and results from the text."""
    return _prompt.tag_request_from_wire(body, _FORMAT, _HEADER, _tools_from_block, stop=())


# --------------------------------------------------------------------------------------------
# Responses and streams
# --------------------------------------------------------------------------------------------


def response_from_wire(body: Mapping[str, Any], *, tools: Sequence[Tool] = ()) -> Response:
    """A ``chat.completion`` body -> unified response; ``<tool_call>`` blocks become calls."""
    return _prompt.response_from_body(body, _FORMAT.parser(), tools)


def stream_from_wire(chunks: Iterable[bytes], *, tools: Sequence[Tool] = ()) -> Iterator[StreamEvent]:
    """SSE bytes -> events as they arrive; a call leaves when its ``</tool_call>`` arrives."""
    return _prompt.stream_from_bytes(chunks, _FORMAT.parser(), tools)


# --------------------------------------------------------------------------------------------
# Errors
# --------------------------------------------------------------------------------------------


def error_from_wire(
    status: int, headers: Mapping[str, str], body: bytes | str | Mapping[str, Any] | None
) -> ProviderError:
    """The chat wire's errors (``openai_chat``)."""
    return openai_chat.error_from_wire(status, headers, body)


# --------------------------------------------------------------------------------------------
# Adapter
# --------------------------------------------------------------------------------------------

capabilities = frozenset({"streaming", "parallel_tool_calls", "system_prompt", "tool_choice_auto", "tool_choice_none"})

ADAPTER = Adapter(
    name=NAME,
    wire_format="openai_chat",
    tools_in_prompt=True,
    prompt_format=NAME,
    capabilities=capabilities,
    tools_to_wire=tools_to_wire,
    request_to_wire=request_to_wire,
    request_from_wire=request_from_wire,
    response_from_wire=response_from_wire,
    stream_from_wire=stream_from_wire,
    error_from_wire=error_from_wire,
)
