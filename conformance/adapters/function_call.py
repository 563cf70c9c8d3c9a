"""Generic ``<function_call>{json}</function_call>`` tool calling through a prompt, over the chat wire.

The project seed's prompt fallback for models without a tool API. There is no authoritative spec
for this tag style (wire-formats.md §6c: a convention, e.g. ``lamoom`` uses ``<function_call>`` /
``<function_result>``); this module follows §6c's recommended contract, mirroring Hermes (§6b):

- calls: ``<function_call>{"name": "<tool>", "arguments": {...}}</function_call>``, one block per
  call, several blocks for parallel calls; lenient parsing as for Hermes (single-quoted
  Python-literal pseudo-JSON, ``parameters`` for ``arguments``, arguments as a JSON string);
- results: one user turn of ``<function_result>{"name": ..., "content": ...}</function_result>``
  blocks in call order; ``"is_error": true`` marks a failed tool (this format carries the flag);
- stop sequence: ``<function_result>`` (the model must not write results itself).

The system prompt this module renders (appended to the caller's system prompt after a blank line,
or alone; not sent without tools or with ``tool_choice: "none"``)::

    # Tools

    You can call the tools below. Each line inside <tools></tools> describes one tool as JSON:
    its name, its description and the JSON Schema of its arguments.
    <tools>
    {"name": "get_weather", "description": "...", "parameters": {...}}
    </tools>

    To call a tool, write a <function_call></function_call> block holding a JSON object with the
    tool name and its arguments:
    <function_call>{"name": <tool-name>, "arguments": <arguments-json-object>}</function_call>
    Write one block per call; several blocks call several tools. Then stop: the results come back
    in <function_result></function_result> blocks, in the order of your calls.

(the two long sentences are single lines in the prompt). Assistant history: ``text`` then the
call blocks, one per line, with ``json.dumps`` arguments.

Round trips (unified -> wire -> unified is the identity for tools, calls with their synthetic
ids and arguments, results and ``is_error``) except: a tool's ``title``/``output_schema``/
``annotations``, reasoning parts (not replayed), several text items of a result (joined by
newlines), ``parallel_tool_calls: true`` (not sent), ``tool_choice: "none"`` (sent as no tools
section: read back as no tools), a user message that is nothing but
``<function_result>`` blocks (read back as results), and a call that was never closed (replayed
closed).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

from conformance.adapters import _prompt, openai_chat
from conformance.adapters._prompt import TagFormat
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

NAME = "function_call"

# --------------------------------------------------------------------------------------------
# Tables (the template)
# --------------------------------------------------------------------------------------------

_HEADER = (
    "# Tools\n\nYou can call the tools below. Each line inside <tools></tools> describes one tool as JSON:"
    " its name, its description and the JSON Schema of its arguments.\n<tools>"
)
_FOOTER = (
    "\n</tools>\n\nTo call a tool, write a <function_call></function_call> block holding a JSON object with the"
    ' tool name and its arguments:\n<function_call>{"name": <tool-name>, "arguments": <arguments-json-object>}'
    "</function_call>\nWrite one block per call; several blocks call several tools. Then stop: the results come"
    " back in <function_result></function_result> blocks, in the order of your calls."
)
_RESULT_OPEN = "<function_result>"
_RESULT_CLOSE = "</function_result>"
STOP = (_RESULT_OPEN,)
"""Stop sequence sent with every request (``stop``); read back, it is not kept as an extra field."""


def _results_text(results: Sequence[ToolResult]) -> str:
    blocks = []
    for result in results:
        payload: JSONObject = {"name": result.name, "content": _prompt.result_text(result, NAME, error_prefix=False)}
        if result.is_error:
            payload["is_error"] = True
        blocks.append(_RESULT_OPEN + json_text(payload) + _RESULT_CLOSE)
    return "\n".join(blocks)


_DECODER = json.JSONDecoder()


def _read_results(text: str) -> list[tuple[str, bool, str | None]] | None:
    """A user turn made only of ``<function_result>`` blocks -> their results (None otherwise)."""
    answers: list[tuple[str, bool, str | None]] = []
    position = 0
    while text.startswith(_RESULT_OPEN, position):
        try:
            payload, end = _DECODER.raw_decode(text, position + len(_RESULT_OPEN))
        except ValueError:
            return None
        if not isinstance(payload, dict) or not text.startswith(_RESULT_CLOSE, end):
            return None
        content, name = payload.get("content", ""), payload.get("name")
        answers.append(
            (
                content if isinstance(content, str) else json_text(content),
                payload.get("is_error") is True,
                name if isinstance(name, str) else None,
            )
        )
        position = end + len(_RESULT_CLOSE)
        if position == len(text):
            return answers
        if not text.startswith("\n", position):
            return None
        position += 1
    return None


_FORMAT = TagFormat(
    adapter=NAME,
    open_tag="<function_call>",
    close_tag="</function_call>",
    separator="",
    results_text=_results_text,
    read_results=_read_results,
)

# --------------------------------------------------------------------------------------------
# Tools
# --------------------------------------------------------------------------------------------


def _tool_line(tool: Tool) -> JSONObject:
    line: JSONObject = {"name": tool.name}
    if tool.description is not None:
        line["description"] = tool.description
    line["parameters"] = dict(tool.input_schema)
    return line


def tools_to_wire(tools: Sequence[Tool]) -> WireTools:
    """MCP tools -> the ``<tools>`` lines of the prompt (``{"name", "description", "parameters"}``;
    names and schemas unchanged)."""
    return WireTools(tools=[_tool_line(t) for t in tools])


def _block(tools: Sequence[Tool]) -> str:
    return _HEADER + "".join("\n" + json_text(line) for line in tools_to_wire(tools).tools) + _FOOTER


def _tools_from_block(block: str) -> tuple[Tool, ...]:
    if not block.endswith(_FOOTER):
        raise WireFormatError(f"{NAME}: the system prompt has a tools block that does not end as the template does")
    tools: list[Tool] = []
    for number, line in enumerate(block[len(_HEADER) : -len(_FOOTER)].split("\n")[1:], 1):
        try:
            item = json.loads(line)
            tools.append(
                Tool(name=str(item["name"]), description=item.get("description"), input_schema=item["parameters"])
            )
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise WireFormatError(
                f'{NAME}: tool line {number} of the system prompt is not {{"name": ..., "parameters": ...}}'
                f" JSON ({exc}): {line[:80]!r}"
            ) from None
    return tuple(tools)


# --------------------------------------------------------------------------------------------
# Requests
# --------------------------------------------------------------------------------------------


def request_to_wire(request: Request) -> WireRequest:
    """Unified request -> chat body with the tools, calls and results in the text."""
    return _prompt.tag_request_to_wire(request, _FORMAT, _block, stop=STOP)


def request_from_wire(body: Mapping[str, Any], *, path: str = "", tools: Sequence[Tool] = ()) -> Request:
    """Chat body -> unified request: tools from the system prompt, calls and results from the text."""
    return _prompt.tag_request_from_wire(body, _FORMAT, _HEADER, _tools_from_block, stop=STOP)


# --------------------------------------------------------------------------------------------
# Responses and streams
# --------------------------------------------------------------------------------------------


def response_from_wire(body: Mapping[str, Any], *, tools: Sequence[Tool] = ()) -> Response:
    """A ``chat.completion`` body -> unified response; ``<function_call>`` blocks become calls."""
    return _prompt.response_from_body(body, _FORMAT.parser(), tools)


def stream_from_wire(chunks: Iterable[bytes], *, tools: Sequence[Tool] = ()) -> Iterator[StreamEvent]:
    """SSE bytes -> events as they arrive; a call leaves when its ``</function_call>`` arrives."""
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

capabilities = frozenset(
    {
        "streaming",
        "parallel_tool_calls",
        "system_prompt",
        "tool_choice_auto",
        "tool_choice_none",
        "is_error_in_tool_results",
    }
)

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
